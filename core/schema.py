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


#: The error answers every operation may give (core.api), by status.
ERROR_STATUSES = {
    "400": "Invalid input (GET: a bad query parameter).",
    "401": "Credentials missing or refused.",
    "403": "Signed in without the role this needs.",
    "404": "No such object.",
    "429": "Over the write budget (Retry-After says when to try again).",
    "500": "Server error (logged).",
    "503": "A component (database, job queue) is unavailable; nothing was changed.",
}
#: And the ones only writes give.
WRITE_ERROR_STATUSES = {
    "409": "Conflicts with the current state (stale, taken, locked).",
    "413": "Request body over the size limit.",
    "415": "Unsupported media type (send JSON).",
}
ERROR_SCHEMA = {
    "type": "object",
    "description": "An API error (core.api): a stable code, a sentence, and the parts it is about.",
    "properties": {
        "code": {"type": "string"},
        "message": {"type": "string"},
        "fields": {"type": "object", "additionalProperties": True},
    },
    "required": ["code", "message"],
}


def postprocess_errors(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Declare the error answers of every operation in the one error shape (``ApiError``)."""
    result.setdefault("components", {}).setdefault("schemas", {})["ApiError"] = ERROR_SCHEMA
    ref = {"$ref": "#/components/schemas/ApiError"}
    for path_item in result.get("paths", {}).values():
        for method, operation in path_item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            statuses = dict(ERROR_STATUSES)
            if method in ("post", "put", "patch", "delete"):
                statuses |= WRITE_ERROR_STATUSES
            for status, description in statuses.items():
                operation["responses"].setdefault(
                    status,
                    {"description": description, "content": {"application/json": {"schema": ref}}},
                )
    return result
