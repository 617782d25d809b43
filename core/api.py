"""The API exception handler: service errors become JSON with a code, a message and details;
a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is 413 (Django's own answer would be an HTML 400);
refused credentials are logged (core.authlog) and count against the client's write budget
(core.throttling): over it, 429."""

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from rest_framework.exceptions import AuthenticationFailed, NotAuthenticated, Throttled
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core.authlog import on_token_refused
from core.errors import ServiceError
from core.throttling import ident, spend


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ServiceError):
        body: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.detail is not None:
            body["detail"] = exc.detail
        return Response(body, status=exc.status)
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        message = f"The request body is over the limit of {limit:,} bytes."
        return Response({"code": "too_large", "message": message}, status=413)
    request = context.get("request")
    if isinstance(exc, AuthenticationFailed):
        on_token_refused(request, str(exc.detail))
    if isinstance(exc, AuthenticationFailed | NotAuthenticated) and request is not None:
        retry_after = spend(ident(request))
        if retry_after is not None:
            exc = Throttled(retry_after)
    return drf_exception_handler(exc, context)
