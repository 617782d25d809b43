"""OpenAPI schema post-processing (drf-spectacular ``POSTPROCESSING_HOOKS``).

:func:`postprocess_partial_times`: the API's times of day (an event's daily hours) are
wall-clock times in the season's time zone, written ``HH:MM:SS[.ffffff]`` with no UTC
offset. OpenAPI 3.1 / JSON Schema reads ``format: time`` as RFC 3339 *full-time*, which
requires an offset, so the schema would promise what the API never sends (schemathesis'
response conformance check found it). Such fields are described as ``partial-time`` with
the exact pattern instead."""

from typing import Any

PARTIAL_TIME = r"^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,6})?)?$"


def _rewrite(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("type") == "string" and node.get("format") == "time":
            node["format"] = "partial-time"
            node["pattern"] = PARTIAL_TIME
        for value in node.values():
            _rewrite(value)
    elif isinstance(node, list):
        for value in node:
            _rewrite(value)


def postprocess_partial_times(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    _rewrite(result)
    return result
