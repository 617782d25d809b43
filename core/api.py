"""API errors in one shape: ``{"code", "message", "fields"?}``.

``code`` is a stable machine word (``invalid``, ``not_found``, ``conflict``, ``throttled``,
``unavailable``, …), ``message`` one sentence for a person, and ``fields`` — when the error
is about parts of the request or the data — those parts by name (a validation error's
messages per field; a conflict's ``feeders`` or ``codes``). Service errors, DRF's own errors
(400 to 429), a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (413), an unknown ``/api/`` path
(404) and a server error under ``/api/`` (500) all answer in it. Refused credentials are
logged (core.authlog) and count against the client's write budget (core.throttling): over
it, 429."""

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import page_not_found, server_error
from rest_framework.exceptions import (
    APIException,
    AuthenticationFailed,
    NotAuthenticated,
    Throttled,
    ValidationError,
)
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core.authlog import on_token_refused
from core.errors import ServiceError
from core.throttling import ident, spend


def error_body(code: str, message: str, fields: Any = None) -> dict[str, Any]:
    """The one error shape."""
    body: dict[str, Any] = {"code": code, "message": message}
    if fields is not None:
        body["fields"] = fields
    return body


def _first_message(detail: Any, path: str = "") -> str:
    """The first message of a validation error, with where it is: ``seats[0].hand: …``."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            where = key if key != "non_field_errors" else ""
            return _first_message(value, f"{path}.{where}" if path and where else path or where)
    if isinstance(detail, list) and detail:
        return _first_message(detail[0], path)
    return f"{path}: {detail}" if path else str(detail)


def _reshaped(exc: APIException, response: Response) -> Response:
    if isinstance(exc, ValidationError):
        detail = exc.detail
        fields = detail if isinstance(detail, dict) else {"non_field_errors": detail}
        response.data = error_body("invalid", _first_message(detail), fields)
        return response
    codes = exc.get_codes()
    code = codes if isinstance(codes, str) else "error"
    response.data = error_body(code, str(exc.detail))
    return response


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ServiceError):
        return Response(error_body(exc.code, exc.message, exc.detail), status=exc.status)
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        message = f"The request body is over the limit of {limit:,} bytes."
        return Response(error_body("too_large", message), status=413)
    request = context.get("request")
    if isinstance(exc, AuthenticationFailed):
        on_token_refused(request, str(exc.detail))
    if isinstance(exc, AuthenticationFailed | NotAuthenticated) and request is not None:
        retry_after = spend(ident(request))
        if retry_after is not None:
            exc = Throttled(retry_after)
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(exc, APIException):
        return _reshaped(exc, response)
    if response is not None:  # Http404 / PermissionDenied, converted by DRF
        detail = response.data.get("detail", "") if isinstance(response.data, dict) else ""
        code = "not_found" if response.status_code == 404 else "permission_denied"
        response.data = error_body(code, str(detail))
    return response


def api_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """``handler404``: JSON under ``/api/``, the site's page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("not_found", f"No API path {request.path}."), status=404)
    return page_not_found(request, exception or Exception())


def api_server_error(request: HttpRequest) -> HttpResponse:
    """``handler500``: JSON under ``/api/``, the site's page elsewhere."""
    if request.path.startswith("/api/"):
        message = "The server failed on this request; it has been logged. Try again."
        return JsonResponse(error_body("server_error", message), status=500)
    return server_error(request)
