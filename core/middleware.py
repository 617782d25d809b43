"""Middleware of the whole site.

:class:`RejectNulMiddleware` refuses a request whose path or query string holds a NUL
character (``%00``): PostgreSQL text cannot hold one, so such a value reaching a query would
fail as a server error (500) instead of the 400 it deserves. Checked once here, for every
page and API route; JSON bodies are checked by the serializers (DRF's CharField refuses NUL)
and the ingest service.

:class:`LoopbackHealthzMiddleware` answers the container's own healthcheck whatever
``ALLOWED_HOSTS`` holds (production adds it first in the chain).

:class:`DatabaseUnavailableMiddleware` answers 503 when PostgreSQL is gone."""

import logging
from collections.abc import Callable
from urllib.parse import unquote_to_bytes

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from core.health import healthz

log = logging.getLogger("unotour.database")


class RejectNulMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        query = request.META.get("QUERY_STRING", "")
        if "\x00" in request.path or b"\x00" in unquote_to_bytes(query):
            return JsonResponse(
                {"code": "invalid", "message": "The path or query holds a NUL character."},
                status=400,
            )
        return self.get_response(request)


#: Addresses of the machine itself: the container's own healthcheck comes from one of these.
LOOPBACK = frozenset({"127.0.0.1", "::1"})


class LoopbackHealthzMiddleware:
    """Answer ``GET /healthz`` from the machine itself (the compose healthcheck's
    ``http://127.0.0.1:8000/healthz``) before anything asks for the host: placed first, ahead
    of ``SecurityMiddleware`` (whose https redirect reads the host) and ``CommonMiddleware``
    (which validates it against ``ALLOWED_HOSTS``). Every other request, and ``/healthz``
    from elsewhere, goes through the whole chain: the public name still needs an allowed
    host and https."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info == "/healthz" and request.META.get("REMOTE_ADDR") in LOOPBACK:
            return healthz(request)
        return self.get_response(request)


class DatabaseUnavailableMiddleware:
    """A view that lost PostgreSQL (a connection refused, timed out or dropped) answers 503 at
    once: JSON ``{"code": "unavailable", "message"}`` under ``/api/``, the site's styled page
    elsewhere. Nothing was written: every write is one transaction."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        log.error("database unavailable: %s %s: %s", request.method, request.path, exception)
        if request.path.startswith("/api/"):
            message = "The database is unavailable; nothing was changed. Try again shortly."
            response: HttpResponse = JsonResponse(
                {"code": "unavailable", "message": message}, status=503
            )
        else:
            response = render(request, "503.html", status=503)
        response["Retry-After"] = "30"
        return response
