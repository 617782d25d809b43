"""How a webhook request is signed, and how a partner checks it.

Every request carries ``X-UNOTour-Timestamp`` (Unix seconds, the time of that attempt) and
``X-UNOTour-Signature: sha256=<hex>``, where ``<hex>`` is the HMAC-SHA256, keyed with the
subscription's secret (UTF-8), of the UTF-8 bytes of ``f"{timestamp}.{body}"``: the
timestamp, a full stop, then the request body exactly as received (do not re-serialise the
JSON). A partner verifies with :func:`verify_signature` (or the same five lines in its own
language), compares in constant time, and should also refuse a timestamp more than a few
minutes old (a replayed request) and drop a ``X-UNOTour-Delivery`` id it has already
processed (a retry that crossed a slow answer).

    from webhooks.signing import verify_signature

    ok = verify_signature(
        secret,
        request.headers["X-UNOTour-Timestamp"],
        request.body,
        request.headers["X-UNOTour-Signature"],
    )
"""

import hashlib
import hmac

PREFIX = "sha256="


def _bytes(value: str | bytes) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8")


def sign(secret: str, timestamp: str | int, body: str | bytes) -> str:
    """The ``X-UNOTour-Signature`` value for ``body`` sent at ``timestamp``."""
    message = _bytes(str(timestamp)) + b"." + _bytes(body)
    return PREFIX + hmac.new(_bytes(secret), message, hashlib.sha256).hexdigest()


def verify_signature(secret: str, timestamp: str | int, body: str | bytes, signature: str) -> bool:
    """True when ``signature`` is the signature of ``body`` at ``timestamp`` with ``secret``."""
    return hmac.compare_digest(_bytes(sign(secret, timestamp, body)), _bytes(signature))
