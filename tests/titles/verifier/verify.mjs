// An independent verifier of the tour's title credentials (SPEC §6 Credentials), with
// Digital Bazaar's libraries: @digitalbazaar/vc, data-integrity, eddsa-rdfc-2022-cryptosuite.
// Its document loader serves only the contexts vendored in static/vendor/contexts/ and the
// service's DID document (and the status list credentials the service served): never the
// network. Reads a JSON job on stdin, writes one result per credential on stdout:
//   in:  {"contexts": "<dir>", "did": {...}, "statusLists": {"<url>": {...}},
//         "credentials": [...], "now": "<ISO time to check the dates at>" (optional)}
//   out: [{"verified": bool (proof, dates and status), "signature": bool,
//          "revoked": bool|null, "error": "..."|null}, ...]
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import * as vc from "@digitalbazaar/vc";
import { DataIntegrityProof } from "@digitalbazaar/data-integrity";
import { cryptosuite as eddsaRdfc2022 } from "@digitalbazaar/eddsa-rdfc-2022-cryptosuite";

const job = JSON.parse(fs.readFileSync(0, "utf8"));
const index = JSON.parse(fs.readFileSync(path.join(job.contexts, "index.json"), "utf8"));
const contexts = new Map(
  Object.entries(index).map(([url, file]) => [
    url,
    JSON.parse(fs.readFileSync(path.join(job.contexts, file), "utf8")),
  ]),
);
const did = job.did;
const methods = new Map(did.verificationMethod.map((m) => [m.id, m]));

async function documentLoader(url) {
  if (contexts.has(url)) {
    return { contextUrl: null, documentUrl: url, document: contexts.get(url) };
  }
  if (url === did.id) {
    return { contextUrl: null, documentUrl: url, document: did };
  }
  if (methods.has(url)) {
    const document = {
      "@context": "https://w3id.org/security/multikey/v1",
      ...methods.get(url),
    };
    return { contextUrl: null, documentUrl: url, document };
  }
  throw new Error(`document loader: ${url} is not served here`);
}

const now = job.now ? new Date(job.now) : new Date();
const suite = new DataIntegrityProof({ cryptosuite: eddsaRdfc2022 });

function bitOf(encodedList, index) {
  if (!encodedList.startsWith("u")) throw new Error("encodedList is not base64url multibase");
  const bits = zlib.gunzipSync(Buffer.from(encodedList.slice(1), "base64url"));
  return (bits[Math.floor(index / 8)] & (0x80 >> index % 8)) !== 0;
}

async function statusOf(credential) {
  const entry = credential.credentialStatus;
  if (!entry || entry.type !== "BitstringStatusListEntry") return null;
  const list = job.statusLists[entry.statusListCredential];
  if (!list) throw new Error(`status list ${entry.statusListCredential} was not given`);
  const checked = await vc.verifyCredential({ credential: list, suite, documentLoader, now });
  if (!checked.verified) throw new Error("the status list credential does not verify");
  if (list.credentialSubject.statusPurpose !== entry.statusPurpose) {
    throw new Error("status purposes differ");
  }
  return bitOf(list.credentialSubject.encodedList, Number(entry.statusListIndex));
}

async function checkStatus({ credential }) {
  const revoked = await statusOf(credential);
  return { verified: revoked === false, revoked };
}

const results = [];
for (const credential of job.credentials) {
  try {
    const result = await vc.verifyCredential({
      credential, suite, documentLoader, now, checkStatus,
    });
    const errors = result.verified ? [] : (result.error?.errors ?? [result.error]);
    results.push({
      verified: result.verified,
      signature: (result.results ?? []).some((r) => r.verified),
      revoked: result.statusResult?.revoked ?? null,
      error: errors.map((e) => e?.message ?? String(e)).join("; ") || null,
    });
  } catch (e) {
    results.push({ verified: false, signature: false, revoked: null, error: e.message });
  }
}
process.stdout.write(JSON.stringify(results) + "\n");
