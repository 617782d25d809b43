"""The Python signer against the independent implementation (SPEC §6 Credentials).

``eddsa_rdfc_2022_vector.json`` was written by Digital Bazaar's libraries
(tests/titles/verifier/make_vector.mjs) with the W3C vc-di-eddsa specification's test key
pair: the canonical N-Quads of the document and of the proof options, and the signed
credential. Ed25519 is deterministic, so the same key, document and time must give the same
proof value byte for byte. Pure: no database."""

import json
from datetime import datetime
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from titles.credentials.keys import SigningKey, public_multikey
from titles.credentials.proofs import canonicalise, hash_data, proof_sign, proof_verify
from titles.domain.credentials import (
    ED25519_PUBLIC,
    ED25519_SECRET,
    STATUS_LIST_SIZE,
    bit_get,
    bit_set,
    bitstring_decode,
    bitstring_encode,
    multikey_decode,
)

VECTOR = json.loads((Path(__file__).parent / "eddsa_rdfc_2022_vector.json").read_text())


def key() -> SigningKey:
    private = Ed25519PrivateKey.from_private_bytes(
        multikey_decode(VECTOR["secretKeyMultibase"], ED25519_SECRET)
    )
    method = VECTOR["signed"]["proof"]["verificationMethod"]
    return SigningKey(private=private, verification_method=method)


def test_the_specification_key_pair_decodes_to_its_public_multikey() -> None:
    assert public_multikey(key().private.public_key()) == VECTOR["publicKeyMultibase"]
    assert VECTOR["publicKeyMultibase"] == "z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2"


def test_canonical_n_quads_match_the_independent_implementation() -> None:
    assert canonicalise(VECTOR["credential"]) == VECTOR["canonicalDocument"]
    options = {k: v for k, v in VECTOR["signed"]["proof"].items() if k != "proofValue"}
    options["@context"] = VECTOR["credential"]["@context"]
    assert canonicalise(options) == VECTOR["canonicalProofOptions"]


def test_signature_matches_the_independent_implementation_byte_for_byte() -> None:
    created = datetime.fromisoformat(VECTOR["created"])
    signed = proof_sign(VECTOR["credential"], key(), created=created)
    assert signed == VECTOR["signed"]
    assert len(hash_data(VECTOR["credential"], signed["proof"])) == 64


def test_the_independent_signature_verifies_here_and_a_change_does_not() -> None:
    public = key().private.public_key()
    assert proof_verify(VECTOR["signed"], lambda _: public) is None
    changed = {**VECTOR["signed"], "validUntil": "2030-01-10T23:59:59+08:00"}
    assert proof_verify(changed, lambda _: public) == "the signature does not verify"
    assert proof_verify(VECTOR["signed"], lambda _: None) is not None


def test_bitstring_bits_count_from_the_left_and_survive_encoding() -> None:
    bits = bytearray(STATUS_LIST_SIZE // 8)
    bit_set(bits, 0, True)
    bit_set(bits, 9, True)
    assert bits[:2] == b"\x80\x40"
    decoded = bitstring_decode(bitstring_encode(bytes(bits)))
    assert (bit_get(decoded, 0), bit_get(decoded, 1), bit_get(decoded, 9)) == (True, False, True)
    bit_set(bits, 9, False)
    assert bits[1] == 0
    assert bitstring_encode(bytes(bits)) == bitstring_encode(bytes(bits))  # no time in GZIP
    assert multikey_decode(VECTOR["publicKeyMultibase"], ED25519_PUBLIC)
