"""The pure parts of the title credentials (SPEC §6, Credentials): multibase, Multikey and
the Bitstring Status List.

* Multikey (W3C Controlled Identifiers): an Ed25519 public key is the multicodec prefix
  ``0xed 0x01`` and its 32 bytes, a secret key ``0x80 0x26`` and its 32-byte seed, both
  written multibase base58-btc (``z…``): public keys start ``z6Mk``.
* Bitstring Status List v1.0: bit ``i`` of a list is the ``i``-th bit from the left (the
  high bit of byte ``i // 8`` first); the list travels GZIP-compressed, multibase base64url
  without padding (``u…``). A list holds :data:`STATUS_LIST_SIZE` bits (16 KiB, the
  specification's minimum for group privacy).
* Status positions: a credential with status index ``n`` (a stable number its issuer gave
  it) sits in list ``n // STATUS_LIST_SIZE`` at bit ``n % STATUS_LIST_SIZE``.

Pure and stdlib-only.
"""

from __future__ import annotations

import base64
import gzip

__all__ = [
    "ED25519_PUBLIC",
    "ED25519_SECRET",
    "STATUS_LIST_SIZE",
    "base58_decode",
    "base58_encode",
    "bit_get",
    "bit_set",
    "bitstring_decode",
    "bitstring_encode",
    "multikey_decode",
    "multikey_encode",
    "status_position",
]

STATUS_LIST_SIZE = 131_072

ED25519_PUBLIC = b"\xed\x01"
ED25519_SECRET = b"\x80\x26"

_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_INDEX = {ch: i for i, ch in enumerate(_ALPHABET)}


def base58_encode(data: bytes) -> str:
    """Base58 (Bitcoin alphabet): leading zero bytes become ``1``."""
    number = int.from_bytes(data, "big")
    out = []
    while number:
        number, digit = divmod(number, 58)
        out.append(_ALPHABET[digit])
    zeros = len(data) - len(data.lstrip(b"\0"))
    return "1" * zeros + "".join(reversed(out))


def base58_decode(text: str) -> bytes:
    """The inverse of :func:`base58_encode`; ``ValueError`` on a character not in it."""
    number = 0
    for ch in text:
        if ch not in _INDEX:
            raise ValueError(f"not base58: {ch!r}")
        number = number * 58 + _INDEX[ch]
    zeros = len(text) - len(text.lstrip("1"))
    body = number.to_bytes((number.bit_length() + 7) // 8, "big") if number else b""
    return b"\0" * zeros + body


def multikey_encode(prefix: bytes, key: bytes) -> str:
    """``z`` + base58-btc of the multicodec ``prefix`` and the raw ``key``."""
    return "z" + base58_encode(prefix + key)


def multikey_decode(text: str, prefix: bytes) -> bytes:
    """The raw 32-byte key of a Multikey of type ``prefix``; ``ValueError`` otherwise."""
    if not text.startswith("z"):
        raise ValueError("a Multikey is multibase base58-btc: it starts with 'z'")
    raw = base58_decode(text[1:])
    if not raw.startswith(prefix) or len(raw) != len(prefix) + 32:
        raise ValueError("not an Ed25519 Multikey of the expected kind")
    return raw[len(prefix) :]


def status_position(index: int) -> tuple[int, int]:
    """(list number, bit) of status index ``index``."""
    if index < 0:
        raise ValueError("a status index is not negative")
    return divmod(index, STATUS_LIST_SIZE)


def bit_get(bits: bytes, index: int) -> bool:
    """Bit ``index`` of ``bits``, counted from the left."""
    return bool(bits[index // 8] & (0x80 >> (index % 8)))


def bit_set(bits: bytearray, index: int, value: bool) -> None:
    """Set or clear bit ``index`` of ``bits``, counted from the left."""
    mask = 0x80 >> (index % 8)
    if value:
        bits[index // 8] |= mask
    else:
        bits[index // 8] &= ~mask & 0xFF


def bitstring_encode(bits: bytes) -> str:
    """The ``encodedList`` of a status list: GZIP, then multibase base64url (``u``).

    GZIP's header time is fixed at 0 so the same bits always encode the same."""
    packed = gzip.compress(bytes(bits), mtime=0)
    return "u" + base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")


def bitstring_decode(encoded: str) -> bytes:
    """The bits of an ``encodedList``."""
    if not encoded.startswith("u"):
        raise ValueError("an encodedList is multibase base64url: it starts with 'u'")
    body = encoded[1:]
    return gzip.decompress(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
