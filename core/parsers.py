"""Strict JSON bodies for the API (the default parser, ``REST_FRAMEWORK``).

Besides JSON itself (constants such as ``NaN`` are refused: ``STRICT_JSON``), a body is
refused with 400 when any string in it — a value or an object key, at any depth — holds a
NUL character or a lone surrogate (``"\\ud800"`` is valid JSON but not Unicode text). Neither
can be stored (PostgreSQL text and jsonb refuse NUL; no database encodes a lone surrogate),
so without this check such a value reaching a query or a JSON column is a server error.
The error names the place, e.g. ``cities[0]``.

Game ingest uses :class:`SafeJSONParser` (no text check): its service checks every record
itself and reports such text per record, storing the good records of the batch
(tournaments.api.games). Both refuse JSON nested too deeply to decode (400, not 500)."""

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


def _bad_text(text: str) -> str | None:
    if "\x00" in text:
        return "holds a NUL character"
    try:
        text.encode()
    except UnicodeEncodeError:
        return "is not valid Unicode (a lone surrogate)"
    return None


def unstorable_text(value: Any, path: str = "") -> tuple[str, str] | None:
    """The first (path, reason) of a string that cannot be stored, or None."""
    if isinstance(value, str):
        reason = _bad_text(value)
        return (path or "body", reason) if reason else None
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = unstorable_text(item, f"{path}[{index}]")
            if found:
                return found
    elif isinstance(value, dict):
        for key, item in value.items():
            place = f"{path}.{key}" if path else str(key)
            reason = _bad_text(key)
            if reason:
                return (f"{path or 'body'} key {key!r}", reason)
            found = unstorable_text(item, place)
            if found:
                return found
    return None


class SafeJSONParser(JSONParser):
    """DRF's JSON parser, with JSON nested too deeply for the decoder (``[[[[…]]]]``) a 400
    like any other malformed body instead of a RecursionError (500)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply.") from None


class StrictJSONParser(SafeJSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        data = super().parse(stream, media_type, parser_context)
        try:
            found = unstorable_text(data)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply.") from None
        if found:
            raise ParseError(f"JSON text at {found[0]} {found[1]}.")
        return data
