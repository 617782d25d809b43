"""The issuer's keys and its ``did:web`` DID document (SPEC §6, Credentials).

Settings (README, configuration): ``CREDENTIAL_ISSUER_URL`` is the tour's public base URL
(``https://tour.example.org``); the issuer is ``did:web`` of its host, whose DID document
the service serves at ``/.well-known/did.json``. ``CREDENTIAL_SIGNING_KEY`` is the current
Ed25519 secret key as a secret Multikey (``z3u2…``, ``manage.py credential_key`` makes one);
``CREDENTIAL_RETIRED_KEYS`` lists the public Multikeys (``z6Mk…``) of earlier signing keys.
The DID document lists the current key first and every retired one after it, so credentials
signed before a rotation keep verifying; each verification method is named by its key
(``did:web:…#z6Mk…``), and a proof names the one that signed it.
"""

from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import quote, urlsplit

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from titles.domain.credentials import (
    ED25519_PUBLIC,
    ED25519_SECRET,
    multikey_decode,
    multikey_encode,
)

__all__ = [
    "SigningKey",
    "did_document",
    "generate_secret_multikey",
    "issuer_did",
    "issuer_url",
    "public_key_of",
    "public_multikey",
    "signing_key",
]

DID_CONTEXTS = ["https://www.w3.org/ns/did/v1", "https://w3id.org/security/multikey/v1"]


@dataclass(frozen=True)
class SigningKey:
    private: Ed25519PrivateKey
    verification_method: str


def issuer_url() -> str:
    """The tour's public base URL, without a trailing slash."""
    return str(settings.CREDENTIAL_ISSUER_URL).rstrip("/")


def issuer_did() -> str:
    """``did:web`` of the issuer's host (a port is percent-encoded, a path becomes ``:``)."""
    parts = urlsplit(issuer_url())
    did = "did:web:" + quote(parts.netloc, safe="")
    path = [quote(p, safe="") for p in parts.path.split("/") if p]
    return ":".join([did, *path])


def public_multikey(key: Ed25519PublicKey) -> str:
    return multikey_encode(ED25519_PUBLIC, key.public_bytes(Encoding.Raw, PublicFormat.Raw))


def generate_secret_multikey() -> str:
    """A new Ed25519 secret key as a secret Multikey (for ``CREDENTIAL_SIGNING_KEY``)."""
    seed = Ed25519PrivateKey.generate().private_bytes(
        Encoding.Raw, PrivateFormat.Raw, NoEncryption()
    )
    return multikey_encode(ED25519_SECRET, seed)


@lru_cache(maxsize=4)
def _private_key(secret: str) -> Ed25519PrivateKey:
    try:
        return Ed25519PrivateKey.from_private_bytes(multikey_decode(secret, ED25519_SECRET))
    except ValueError as exc:
        raise ImproperlyConfigured(
            f"CREDENTIAL_SIGNING_KEY is not an Ed25519 secret Multikey: {exc}"
        ) from exc


def signing_key() -> SigningKey:
    """The current signing key and the verification method that names it."""
    secret = settings.CREDENTIAL_SIGNING_KEY
    if not secret:
        raise ImproperlyConfigured("CREDENTIAL_SIGNING_KEY is not set: no credential is signed.")
    private = _private_key(secret)
    return SigningKey(
        private=private,
        verification_method=f"{issuer_did()}#{public_multikey(private.public_key())}",
    )


def _multikeys() -> list[str]:
    current = public_multikey(signing_key().private.public_key())
    retired = [k for k in settings.CREDENTIAL_RETIRED_KEYS if k and k != current]
    return [current, *dict.fromkeys(retired)]


def did_document() -> dict[str, Any]:
    """The issuer's DID document: every key, current first, for assertions."""
    did = issuer_did()
    methods = [
        {
            "id": f"{did}#{key}",
            "type": "Multikey",
            "controller": did,
            "publicKeyMultibase": key,
        }
        for key in _multikeys()
    ]
    return {
        "@context": DID_CONTEXTS,
        "id": did,
        "verificationMethod": methods,
        "assertionMethod": [method["id"] for method in methods],
    }


def public_key_of(verification_method: str) -> Ed25519PublicKey | None:
    """The public key of one of this issuer's verification methods (``None`` if the DID
    document does not list it)."""
    did, _, fragment = verification_method.partition("#")
    if did != issuer_did() or fragment not in _multikeys():
        return None
    return Ed25519PublicKey.from_public_bytes(multikey_decode(fragment, ED25519_PUBLIC))
