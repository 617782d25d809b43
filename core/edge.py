"""Cached public answers served at the edge of the stack: before any other middleware.

An anonymous GET of a page or API answer that ``core.cache.cached_response`` serves (a
board page, the leaderboard API, a player's page, the registry) is kept whole — status,
body and every header the middleware added (security headers, CSP, language) — in this
process's memory, and the next such GET of the same address is answered from there without
running the middleware, the URL resolver, the view or a cache round trip.

How long a kept answer is served (``response.edge_until``, set by ``cached_response``) never
stretches the bounds ``core.cache`` states: an answer built from versions read at time ``r``
is served until ``r + READ_STALE_SECONDS`` at most (the board's bound), and one cached for a
fixed time (the registry) until its shared entry expires. The address is the host, whether
the request came over https, the full path (language prefix and query), ``Accept`` and
``HX-Request``; a request with a session cookie or an ``Authorization`` header always goes
through the whole stack (it may see what others do not). Disallowed hosts still get their
400: the host is validated before the lookup.

When a kept answer runs out, one request of the process refreshes it through the stack and
the others of the same address keep getting the kept answer meanwhile, as
``cached_response`` does across processes: such an answer is older than its bound by at most
one refresh (``BUILD_SECONDS`` if the refresh failed), so no request queues behind a build.
"""

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, HttpResponseBase

from core.cache import BUILD_SECONDS

#: Answers kept per process (a few addresses per event are hot; the rest expire in seconds).
EDGE_ENTRIES = 256

Address = tuple[str, bool, str, str, str]


@dataclass(frozen=True, slots=True)
class _Kept:
    until: float
    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...]


def _address(request: HttpRequest) -> Address | None:
    """Where an anonymous GET goes, or None when it must go through the whole stack."""
    if request.method != "GET":
        return None
    meta = request.META
    if "HTTP_AUTHORIZATION" in meta or settings.SESSION_COOKIE_NAME in request.COOKIES:
        return None
    try:
        host = request.get_host()
    except DisallowedHost:
        return None  # CommonMiddleware answers 400
    return (
        host,
        request.is_secure(),
        request.get_full_path(),
        meta.get("HTTP_ACCEPT", ""),
        meta.get("HTTP_HX_REQUEST", ""),
    )


def _served(kept: _Kept) -> HttpResponse:
    return HttpResponse(kept.body, status=kept.status, headers=dict(kept.headers))


class EdgeCacheMiddleware:
    """First in ``MIDDLEWARE`` (after production's loopback healthz): serve a kept answer,
    else run the stack and keep what ``cached_response`` marked with ``edge_until``."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response
        self.kept: OrderedDict[Address, _Kept] = OrderedDict()
        self.refreshing: set[Address] = set()
        self.lock = threading.Lock()

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        address = _address(request) if settings.READ_STALE_SECONDS > 0 else None
        if address is None:
            return self.get_response(request)
        now = time.time()
        with self.lock:
            kept = self.kept.get(address)
            refresh = kept is None or (kept.until <= now and address not in self.refreshing)
            if refresh:
                self.refreshing.add(address)
        if kept is not None and (not refresh and now < kept.until + BUILD_SECONDS):
            return _served(kept)
        try:
            response = self.get_response(request)
        finally:
            if refresh:
                with self.lock:
                    self.refreshing.discard(address)
        until: float | None = getattr(response, "edge_until", None)
        if (
            until is not None
            and until > time.time()
            and response.status_code == 200
            and isinstance(response, HttpResponse)
            and not response.cookies
        ):
            self._keep(address, _Kept(until, 200, response.content, tuple(response.items())))
        return response

    def _keep(self, address: Address, kept: _Kept) -> None:
        with self.lock:
            self.kept[address] = kept
            self.kept.move_to_end(address)
            while len(self.kept) > EDGE_ENTRIES:
                self.kept.popitem(last=False)
