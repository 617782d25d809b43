"""The API exception handler: service errors become JSON with a code, a message and details."""

from typing import Any

from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core.errors import ServiceError


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ServiceError):
        body: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.detail is not None:
            body["detail"] = exc.detail
        return Response(body, status=exc.status)
    return drf_exception_handler(exc, context)
