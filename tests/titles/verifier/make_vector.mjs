// Writes tests/titles/credentials/eddsa_rdfc_2022_vector.json: a credential signed by the
// independent implementation (Digital Bazaar) with the W3C vc-di-eddsa specification's
// test key pair and a fixed time, with the canonical N-Quads it hashed. The Python signer
// must reproduce both byte for byte (tests/titles/credentials/test_proofs.py). Run with
// `node make_vector.mjs` in this folder after `npm ci`; the output is committed.
import fs from "node:fs";
import path from "node:path";
import jsonld from "jsonld";
import * as vc from "@digitalbazaar/vc";
import * as Ed25519Multikey from "@digitalbazaar/ed25519-multikey";
import { DataIntegrityProof } from "@digitalbazaar/data-integrity";
import { cryptosuite } from "@digitalbazaar/eddsa-rdfc-2022-cryptosuite";

const contextsDir = path.resolve("../../../static/vendor/contexts");
const index = JSON.parse(fs.readFileSync(path.join(contextsDir, "index.json"), "utf8"));
const documentLoader = async (url) => {
  if (!index[url]) throw new Error(`not vendored: ${url}`);
  const document = JSON.parse(fs.readFileSync(path.join(contextsDir, index[url]), "utf8"));
  return { contextUrl: null, documentUrl: url, document };
};

// The vc-di-eddsa specification's test key pair (its "Test Vectors" section).
const publicKeyMultibase = "z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2";
const secretKeyMultibase = "z3u2en7t5LR2WtQH5PfFqMqwVHBeXouLzo6haApm8XHqvjxq";
const controller = "did:web:tour.example.org";
const keyPair = await Ed25519Multikey.from({
  id: `${controller}#${publicKeyMultibase}`,
  controller,
  publicKeyMultibase,
  secretKeyMultibase,
});
const created = "2024-03-01T08:00:00Z";
const credential = {
  "@context": [
    "https://www.w3.org/ns/credentials/v2",
    "https://purl.imsglobal.org/spec/ob/v3p0/context-3.0.3.json",
  ],
  id: "https://tour.example.org/api/titles/terms/ABCDEFGHIJKL/credential/",
  type: ["VerifiableCredential", "OpenBadgeCredential"],
  name: "大师 Master · 小猴子",
  issuer: { id: controller, type: ["Profile"], name: "UNO 中国线上巡回赛", url: "https://tour.example.org/" },
  validFrom: "2021-01-10T00:00:00+08:00",
  validUntil: "2022-01-10T23:59:59+08:00",
  credentialSubject: {
    id: "https://tour.example.org/players/p0000001/",
    type: ["AchievementSubject"],
    name: "小猴子",
    achievement: {
      id: "https://tour.example.org/masters/#master",
      type: ["Achievement"],
      achievementType: "Award",
      name: "大师 Master",
      criteria: { narrative: "One year from the day it is obtained." },
    },
  },
  credentialStatus: {
    id: "https://tour.example.org/api/titles/status/master-0/#7",
    type: "BitstringStatusListEntry",
    statusPurpose: "revocation",
    statusListIndex: "7",
    statusListCredential: "https://tour.example.org/api/titles/status/master-0/",
  },
};
const suite = new DataIntegrityProof({ signer: keyPair.signer(), date: created, cryptosuite });
const signed = await vc.issue({ credential, suite, documentLoader });
const { proofValue, ...proofOptions } = signed.proof;
const canon = (doc) =>
  jsonld.canonize(doc, { algorithm: "RDFC-1.0", format: "application/n-quads", documentLoader, safe: true });
const vector = {
  secretKeyMultibase,
  publicKeyMultibase,
  created,
  credential,
  canonicalDocument: await canon(credential),
  canonicalProofOptions: await canon({ ...proofOptions, "@context": credential["@context"] }),
  signed,
};
fs.writeFileSync("../credentials/eddsa_rdfc_2022_vector.json", JSON.stringify(vector, null, 2) + "\n");
console.log(proofValue);
