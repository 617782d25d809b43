"""Identifiers and display text the tour stores (SPEC §9).

**Identifiers** — player ids, game ids and event codes — are 1 to 64 characters of ASCII
letters, digits, ``-``, ``_`` and ``.``, not ``.`` or ``..`` alone: no ``/``, no whitespace,
no control or format characters, so every one is one URL path segment as it is, and two
ids that look the same are the same id.

**Names** are stored in Unicode NFC (one spelling per text), and refused when they hold
control characters, bidirectional overrides or isolates (which reorder what is shown
around them) or zero-width characters (which make two names look the same)."""

import re
import unicodedata

IDENT_MAX = 64
IDENT_PATTERN = r"[A-Za-z0-9._-]{1,64}"
_IDENT = re.compile(IDENT_PATTERN)
#: The same rule as a JSON Schema ``pattern`` (ECMA regex), for a field of at most ``n``.
IDENT_SCHEMA = r"^(?!\.\.?$)[A-Za-z0-9._-]{1,%d}$"

#: Control characters, bidi marks / overrides / isolates, zero-width characters, BOM.
_HIDDEN = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def ident_problem(value: str) -> str | None:
    """Why ``value`` is not an identifier, or None when it is one."""
    if _IDENT.fullmatch(value) and value not in (".", ".."):
        return None
    if not value:
        return "must not be empty"
    if len(value) > IDENT_MAX:
        return f"longer than {IDENT_MAX} characters"
    bad = next((c for c in value if not _IDENT.fullmatch(c)), None)
    if bad is None:
        return "may not be '.' or '..'"
    if 0xD800 <= ord(bad) <= 0xDFFF:
        return f"holds text that is not valid Unicode (a lone surrogate U+{ord(bad):04X})"
    return (
        f"may hold only letters A-Z a-z, digits and - _ . (found U+{ord(bad):04X} "
        f"{unicodedata.name(bad, 'unnamed')!r})"
    )


def name_clean(value: str) -> tuple[str, str | None]:
    """``value`` in NFC, and why it cannot be a name (or None)."""
    found = _HIDDEN.search(value)
    if found is not None:
        char = found.group()
        return value, (
            f"holds a hidden or reordering character U+{ord(char):04X} "
            f"{unicodedata.name(char, 'control')!r}"
        )
    if unicodedata.is_normalized("NFC", value):
        return value, None
    return unicodedata.normalize("NFC", value), None
