"""``manage.py credential_key``: print a new Ed25519 signing key for the title credentials
(a secret Multikey, for ``CREDENTIAL_SIGNING_KEY``) and, on stderr, its public Multikey (to
list in ``CREDENTIAL_RETIRED_KEYS`` once it is rotated out)."""

from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management.base import BaseCommand

from titles.credentials.keys import generate_secret_multikey, public_multikey
from titles.domain.credentials import ED25519_SECRET, multikey_decode


class Command(BaseCommand):
    help = "Print a new credential signing key (secret Multikey); its public key on stderr."

    def handle(self, *args: Any, **options: Any) -> None:
        secret = generate_secret_multikey()
        private = Ed25519PrivateKey.from_private_bytes(multikey_decode(secret, ED25519_SECRET))
        self.stderr.write(f"public key: {public_multikey(private.public_key())}")
        self.stdout.write(secret)
