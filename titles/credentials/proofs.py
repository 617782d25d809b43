"""Data Integrity proofs with the cryptosuite ``eddsa-rdfc-2022`` (W3C vc-di-eddsa §3.3).

To sign: the proof options (the proof without ``proofValue``, with the document's
``@context``) and the document without its proof are each canonicalised with RDFC-1.0
(pyld's URDNA2015, the same algorithm) into N-Quads and hashed with SHA-256; the Ed25519
signature of the proof options' hash followed by the document's hash is ``proofValue``,
multibase base58-btc. Verifying recomputes the hashes and checks the signature.
"""

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pyld import jsonld

from titles.credentials.contexts import document_loader
from titles.credentials.keys import SigningKey
from titles.domain.credentials import base58_decode, base58_encode

__all__ = ["CRYPTOSUITE", "canonicalise", "hash_data", "proof_sign", "proof_verify"]

CRYPTOSUITE = "eddsa-rdfc-2022"


def canonicalise(document: dict[str, Any]) -> str:
    """The RDFC-1.0 canonical N-Quads of ``document`` (vendored contexts only)."""
    return str(
        jsonld.normalize(
            document,
            {
                "algorithm": "URDNA2015",
                "format": "application/n-quads",
                "documentLoader": document_loader,
            },
        )
    )


def _options(document: dict[str, Any], proof: dict[str, Any]) -> dict[str, Any]:
    options = {k: v for k, v in proof.items() if k != "proofValue"}
    options["@context"] = document["@context"]
    return options


def hash_data(document: dict[str, Any], proof: dict[str, Any]) -> bytes:
    """What is signed: SHA-256 of the canonical proof options, then of the document."""
    unsigned = {k: v for k, v in document.items() if k != "proof"}
    options_hash = hashlib.sha256(canonicalise(_options(document, proof)).encode()).digest()
    document_hash = hashlib.sha256(canonicalise(unsigned).encode()).digest()
    return options_hash + document_hash


def proof_sign(document: dict[str, Any], key: SigningKey, *, created: datetime) -> dict[str, Any]:
    """``document`` with a ``DataIntegrityProof`` for ``assertionMethod`` by ``key``."""
    proof = {
        "type": "DataIntegrityProof",
        "cryptosuite": CRYPTOSUITE,
        "created": created.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "verificationMethod": key.verification_method,
        "proofPurpose": "assertionMethod",
    }
    signature = key.private.sign(hash_data(document, proof))
    return {**document, "proof": {**proof, "proofValue": "z" + base58_encode(signature)}}


def proof_verify(
    document: dict[str, Any], resolve: Callable[[str], Ed25519PublicKey | None]
) -> str | None:
    """``None`` if ``document``'s proof verifies with the key ``resolve`` gives for its
    verification method; otherwise why not."""
    proof = document.get("proof")
    if not isinstance(proof, dict):
        return "no proof"
    if proof.get("type") != "DataIntegrityProof" or proof.get("cryptosuite") != CRYPTOSUITE:
        return f"not a {CRYPTOSUITE} Data Integrity proof"
    if proof.get("proofPurpose") != "assertionMethod":
        return "the proof is not for assertionMethod"
    key = resolve(str(proof.get("verificationMethod", "")))
    if key is None:
        return f"unknown verification method {proof.get('verificationMethod')!r}"
    value = str(proof.get("proofValue", ""))
    try:
        signature = base58_decode(value[1:]) if value.startswith("z") else b""
        key.verify(signature, hash_data(document, proof))
    except (InvalidSignature, ValueError):
        return "the signature does not verify"
    return None
