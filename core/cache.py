"""Reads cached under a version: an entry is keyed on the version of what it was built from
(``Event.leaderboard_version`` for a board, SPEC §4), so a write that bumps the version makes
every older entry unreachable and no read is ever stale past a write. Old entries are left
to expire (``timeout``); nothing is deleted. What has no version (the Master registry, a
player's page) is cached at a fixed version for a short ``timeout``: that timeout is how
stale it can be.

The cache holds committed data only: inside a transaction (``atomic``) it is neither read
nor written. Such a transaction may have written rows and bumped the version itself; if it
rolled back, the next real write would reuse that version number and an entry built from
the rolled-back rows would be served as current.

Whole public responses (:func:`cached_response`): an anonymous GET of a board page, the
leaderboard API, a player's page or the registry is answered from one shared cache read and
the process's own copy of the answer (``caches["local"]``), and the next ones from the
process's copy of the whole response before any middleware runs (``core.edge``). Its key
holds the version as read by :func:`snapshot`, which reads it from the database at most once
per ``settings.READ_STALE_SECONDS`` (default 3 s) for all processes: that is the stated bound
on how long a new game can take to show, and it is what keeps a board under a steady stream
of games cacheable (without it every game makes every page a miss).
"""

import hashlib
import time
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from functools import wraps
from typing import Any, TypeVar

from django.conf import settings
from django.core.cache import cache, caches
from django.core.paginator import Page, Paginator
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponseBase

T = TypeVar("T")

#: When the snapshots an answer is keyed on were read (``cached_response`` collects them).
_reads: ContextVar[list[float] | None] = ContextVar("snapshot_reads", default=None)


def cached_by_version(
    key_parts: Iterable[object], version: int, builder: Callable[[], T], timeout: int = 60
) -> T:
    """The value of ``builder()`` for ``key_parts`` at ``version``: from the cache when
    built before at that version, else built now and stored for ``timeout`` seconds
    (built and not stored inside a transaction)."""
    if connection.in_atomic_block:
        return builder()
    key = ":".join(["v", str(version), *(str(part) for part in key_parts)])
    found = cache.get(key)
    if found is not None:
        return found  # type: ignore[no-any-return]
    value = builder()
    cache.set(key, value, timeout)
    return value


def page_key(asked: str | None) -> int | None:
    """The page number to key a cached page on: the one asked for as a whole number (none
    asked: 1). None for anything else ("last", "-1", "x"): such a page is built uncached,
    as the paginator resolves it."""
    if asked is None:
        return 1
    return int(asked) if asked.isdigit() else None


@dataclass(frozen=True, slots=True)
class CachedPage:
    """What a cached page keeps: its number, the count of all rows, the page size and what
    the page shows (built from its rows: serialised, rendered). A pager needs no more."""

    number: int
    count: int
    per_page: int
    shown: Any

    def page(self) -> Page[Any]:
        """A ``Page`` of ``shown`` numbered as it was, for pagers and page links."""
        return Page(self.shown, self.number, Paginator(range(self.count), self.per_page))


def cached_page(
    key_parts: Iterable[object],
    version: int,
    asked: str | None,
    builder: Callable[[], CachedPage],
    timeout: int = 60,
) -> CachedPage:
    """``builder()``, cached by version under ``key_parts`` and the page asked for
    (``page_key``): one cache read for a page built before at ``version``."""
    number = page_key(asked)
    if number is None:
        return builder()
    return cached_by_version((*key_parts, number), version, builder, timeout)


def snapshot(key: tuple[object, ...], read: Callable[[], T]) -> T:
    """``read()``, shared by every process for ``settings.READ_STALE_SECONDS`` (whole
    seconds; 0: read every time): the first reader stores it (``cache.add``) and the others
    use that value until it expires, so all workers key their answers on the same version
    and each answer is built once per period, not once per worker."""
    bound = settings.READ_STALE_SECONDS
    if bound <= 0 or connection.in_atomic_block:
        return read()
    name = "snapshot:" + ":".join(str(part) for part in key)
    kept = cache.get(name)
    if kept is None:
        kept = (read(), time.time())  # boxed: a None read is a value too
        if not cache.add(name, kept, bound):
            kept = cache.get(name, kept)
    reads = _reads.get()
    if reads is not None:
        reads.append(kept[1])
    return kept[0]  # type: ignore[no-any-return]


def _public(request: HttpRequest) -> bool:
    """A GET that nobody signed in made (no token, no session), outside a transaction."""
    return (
        request.method in ("GET", "HEAD")
        and "HTTP_AUTHORIZATION" not in request.META
        and settings.SESSION_COOKIE_NAME not in request.COOKIES
        and not connection.in_atomic_block
    )


def _local_seconds() -> int:
    """How long a process keeps its own copy of a shared answer: ``READ_STALE_SECONDS``.
    A copy of a versioned answer is never wrong (its key holds the version); one of an
    answer cached for a fixed time may outlive the shared entry by that much."""
    seconds: int = settings.READ_STALE_SECONDS
    return seconds


def _kept(key: str) -> Any:
    """A cached answer: this process's copy (no round trip), else the shared one."""
    local = caches["local"]
    kept = local.get(key)
    if kept is None:
        kept = cache.get(key)
        if kept is not None and _local_seconds() > 0:
            local.set(key, kept, _local_seconds())
    return kept


def _keep(key: str, value: Any, timeout: int) -> None:
    cache.set(key, value, timeout)
    if _local_seconds() > 0:
        caches["local"].set(key, value, min(timeout, _local_seconds()))


View = Callable[..., HttpResponseBase]
#: ``(parts, timeout)``: what a cached answer is built from, and how long it may live.
ResponseKey = tuple[tuple[object, ...], int]


#: How long a builder may hold an answer's build before another request builds it too.
BUILD_SECONDS = 5


def _digest(kind: str, named: object) -> str:
    return f"{kind}:" + hashlib.blake2b(repr(named).encode(), digest_size=16).hexdigest()


#: A cached answer: its body, the view's headers and when it was built (``time.time()``).
Answer = tuple[bytes, dict[str, str], float]


def _answer(kept: Answer) -> HttpResponse:
    body, headers, _ = kept
    return HttpResponse(body, headers=headers)


def _edge_until(reads: list[float], built_at: float, timeout: int) -> float:
    """Until when ``core.edge`` may serve an answer keyed on snapshots read at ``reads`` and
    built at ``built_at``: no later than its oldest snapshot's bound (``READ_STALE_SECONDS``
    after that read; after now when it has none) nor its shared entry's expiry."""
    oldest = min(reads) if reads else time.time()
    bound: int = settings.READ_STALE_SECONDS
    return min(oldest + bound, built_at + timeout)


def cached_response(key: Callable[..., ResponseKey | None]) -> Callable[[View], View]:
    """Serve a view's 200 answers to anonymous GETs from the cache.

    ``key(request, *args, **kwargs)`` gives ``(parts, timeout)`` — the versions the answer
    is built from, and how long it may live — or None to build it uncached. The entry is
    keyed on those parts, the host (pages name their own address), the full path (language
    prefix and query), ``Accept`` and ``HX-Request``; it holds the body and the view's own
    headers, so middleware (security headers) still runs on every answer that
    ``core.edge`` does not serve whole.

    One request builds a missing answer; those arriving while it builds get the latest
    answer of the same address (built from the versions just before), so a new version
    costs one build, not one per waiting request. Such an answer is older than the bound
    by at most one build (``BUILD_SECONDS`` if its builder died); without a latest answer
    they build too.

    An exact answer (not such a latest one) carries ``edge_until``: how long
    ``core.edge.EdgeCacheMiddleware`` may serve it whole to the same address."""

    def decorate(view: View) -> View:
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if not _public(request):
                return view(request, *args, **kwargs)
            reads: list[float] = []
            token = _reads.set(reads)
            try:
                found = key(request, *args, **kwargs)
            finally:
                _reads.reset(token)
            if found is None:
                return view(request, *args, **kwargs)
            parts, timeout = found
            where = (
                request.get_host(),
                request.get_full_path(),
                request.META.get("HTTP_ACCEPT", ""),
                request.META.get("HTTP_HX_REQUEST", ""),
            )
            exact = _digest("answer", (parts, where))
            kept = _kept(exact)
            if kept is not None:
                answer = _answer(kept)
                answer.edge_until = _edge_until(reads, kept[2], timeout)  # type: ignore[attr-defined]
                return answer
            latest = _digest("newest", where)
            building = latest + ":building"
            if not cache.add(building, 1, BUILD_SECONDS):
                previous = cache.get(latest)
                if previous is not None:
                    return _answer(previous)
            try:
                response = view(request, *args, **kwargs)
                render = getattr(response, "render", None)
                if render is not None and not getattr(response, "is_rendered", True):
                    render()
                if response.status_code == 200 and isinstance(response, HttpResponse):
                    value: Answer = (response.content, dict(response.headers), time.time())
                    _keep(exact, value, timeout)
                    cache.set(latest, value, timeout)
                    response.edge_until = _edge_until(reads, value[2], timeout)  # type: ignore[attr-defined]
            finally:
                cache.delete(building)
            return response

        return wrapper

    return decorate
