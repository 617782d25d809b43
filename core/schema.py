"""The OpenAPI schema says what the server accepts, no more and no less (schemathesis checks
both ways in ``tests/reliability/test_schema_fuzz.py``).

:class:`AutoSchema` (``DEFAULT_SCHEMA_CLASS``): a nested list of records (``many=True``)
declares the bounds its ``ListSerializer`` enforces (``allow_empty``, ``min_length``,
``max_length``), which drf-spectacular leaves out.

:func:`postprocess_request_text`: DRF's ``CharField`` trims whitespace before it checks for
blank, so a request string that must not be blank must hold a non-whitespace character
(``NOT_BLANK``), not merely one character.

:func:`postprocess_empty_query`: an optional query parameter read through a DRF serializer
treats ``?name=`` as not given (DRF's form convention), so it is declared
``allowEmptyValue``.

Post-processing (drf-spectacular ``POSTPROCESSING_HOOKS``):

:func:`postprocess_partial_times`: the API's times of day (an event's daily hours) are
wall-clock times in the season's time zone, written ``HH:MM:SS[.ffffff]`` with no UTC
offset. OpenAPI 3.1 / JSON Schema reads ``format: time`` as RFC 3339 *full-time*, which
requires an offset, so the schema would promise what the API never sends (schemathesis'
response conformance check found it). Such fields are described as ``partial-time`` with
the exact pattern instead."""

from collections.abc import Callable
from typing import Any

from drf_spectacular import openapi
from drf_spectacular.plumbing import is_list_serializer

PARTIAL_TIME = r"^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,6})?)?$"


def _walk(node: Any, visit: Callable[[dict[str, Any]], None]) -> None:
    """Call ``visit`` on every object of a schema tree, parents first."""
    if isinstance(node, dict):
        visit(node)
        for value in node.values():
            _walk(value, visit)
    elif isinstance(node, list):
        for value in node:
            _walk(value, visit)


def _partial_time(node: dict[str, Any]) -> None:
    if node.get("type") == "string" and node.get("format") == "time":
        node["format"] = "partial-time"
        node["pattern"] = PARTIAL_TIME


def postprocess_partial_times(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    _walk(result, _partial_time)
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


class AutoSchema(openapi.AutoSchema):
    def _unwrap_list_serializer(self, serializer: Any, direction: Any) -> Any:
        schema = super()._unwrap_list_serializer(serializer, direction)
        if not schema or not is_list_serializer(serializer) or direction != "request":
            return schema
        bounds: Any = serializer  # the stubs lack min_length / max_length
        least = max(0 if bounds.allow_empty else 1, bounds.min_length or 0)
        if least:
            schema["minItems"] = least
        if bounds.max_length is not None:
            schema["maxItems"] = bounds.max_length
        return schema


#: What a trimmed, non-blank request string must hold: a character ``str.strip`` keeps.
#: Spelled out because ``\\S`` differs between Python and ECMA regexes (U+001C..U+001F,
#: U+0085, U+FEFF).
NOT_BLANK = r"[^\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"


def _not_blank(node: dict[str, Any]) -> None:
    if (
        node.get("type") == "string"
        and node.get("minLength", 0) >= 1
        and not {"pattern", "format", "enum"} & node.keys()
    ):
        node["pattern"] = NOT_BLANK


def postprocess_request_text(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """A non-blank request string holds a non-whitespace character."""
    for name, component in result.get("components", {}).get("schemas", {}).items():
        if name.endswith("Request"):
            _walk(component, _not_blank)
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            if isinstance(operation, dict):
                body = operation.get("requestBody", {}).get("content", {})
                for media in body.values():
                    _walk(media.get("schema"), _not_blank)
    return result


def postprocess_empty_query(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """An optional query parameter given empty is as if not given."""
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            if not isinstance(operation, dict):
                continue
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "query" and not parameter.get("required"):
                    parameter["allowEmptyValue"] = True
    return result
