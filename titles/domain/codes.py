"""Stable verification codes for Master terms (SPEC §6: anyone can ask "was X a Master").

A term is identified by its holder and its first day: replaying the same qualifications
always yields the same terms, so the code is derived from the player's external id and the
term's start and never stored as a secret: ``term_code("p0000001", date(2021, 3, 1))`` is the
first :data:`CODE_LENGTH` characters of the base32 SHA-256 digest of ``"p0000001|2021-03-01"``.
Recomputing titles therefore never changes a code. 12 base32 characters are 60 bits: the
chance of any collision among a million terms is below one in a million.

Pure and stdlib-only.
"""

from __future__ import annotations

import hashlib
from datetime import date

__all__ = ["CODE_LENGTH", "lifetime_code", "normalise_code", "term_code"]

CODE_LENGTH = 12

#: The base32 alphabet (RFC 4648), and every pair of its characters by 10-bit value.
_BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_PAIRS = tuple(high + low for high in _BASE32 for low in _BASE32)


def term_code(external_id: str, start: date) -> str:
    """Return the verification code of the term of ``external_id`` that starts on ``start``."""
    digest = hashlib.sha256(f"{external_id}|{start.isoformat()}".encode()).digest()
    # Base32 writes 5 bits a character from the first bit: 12 characters are the first 60
    # bits of the digest, written here 10 bits at a time (``base64.b32encode`` gives the
    # same characters, a few times slower).
    bits = int.from_bytes(digest[:8], "big") >> 4
    pairs = _PAIRS
    return (
        pairs[bits >> 50]
        + pairs[(bits >> 40) & 1023]
        + pairs[(bits >> 30) & 1023]
        + pairs[(bits >> 20) & 1023]
        + pairs[(bits >> 10) & 1023]
        + pairs[bits & 1023]
    )


def lifetime_code(external_id: str, since: date) -> str:
    """Return the verification code of the Lifetime title of ``external_id`` conferred on
    ``since``: the term code of ``"<external_id>|lifetime"`` (a different digest input from
    every term's, as external ids hold no ``|``)."""
    return term_code(f"{external_id}|lifetime", since)


def normalise_code(text: str) -> str:
    """Accept a code as people type it: any case, with spaces or hyphens between groups."""
    return "".join(ch for ch in text.upper() if ch not in " -")
