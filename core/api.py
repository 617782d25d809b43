"""The API exception handler: service errors become JSON with a code, a message and details;
a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is 413 (Django's own answer would be an HTML 400);
refused tokens are logged (core.authlog)."""

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core.authlog import on_token_refused
from core.errors import ServiceError


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
    if isinstance(exc, AuthenticationFailed):
        on_token_refused(context.get("request"), str(exc.detail))
    return drf_exception_handler(exc, context)
