"""Refuse a request whose path or query string holds a NUL character (``%00``): PostgreSQL
text cannot hold one, so such a value reaching a query would fail as a server error (500)
instead of the 400 it deserves. Checked once here, for every page and API route; JSON bodies
are checked by the serializers (DRF's CharField refuses NUL) and the ingest service."""

from collections.abc import Callable
from urllib.parse import unquote_to_bytes

from django.http import HttpRequest, HttpResponse, JsonResponse


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
