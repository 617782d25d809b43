"""Throttling of writes: every POST, PUT, PATCH and DELETE to the API counts against one
budget per signed-in user (per client address for anonymous requests), and so does every
request whose credentials are refused (``core.api``); reads are never throttled here. The
rate is ``API_WRITE_RATE`` (``"600/min"`` unless the environment says otherwise), read on
every request so a deployment or a test can change it. Over the budget the API answers 429
with ``Retry-After``.

The count is atomic: one fixed window per rate period, counted by the shared cache's
``incr`` (Redis ``INCR``). While the shared cache fails, each process counts on its own
(the budget then holds per process) and says so in the log."""

import logging
import threading
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest
from redis.exceptions import RedisError
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from core.clientip import client_ip

log = logging.getLogger("unotour.throttle")

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}

#: This process's counts while the shared cache fails: window key → count.
_local: dict[str, int] = {}
_local_lock = threading.Lock()


def write_rate() -> tuple[int, int]:
    """``API_WRITE_RATE`` as (requests, seconds): ``"600/min"`` → (600, 60)."""
    count, period = str(settings.API_WRITE_RATE).split("/")
    return int(count), _UNITS[period[0]]


def ident(request: HttpRequest | Request) -> str:
    """Whose budget a request spends: the signed-in user's, else its client address's."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return f"user:{user.pk}"
    return f"ip:{client_ip(request)}"


def _count_locally(key: str) -> int:
    with _local_lock:
        if len(_local) > 10_000:
            _local.clear()
        _local[key] = _local.get(key, 0) + 1
        return _local[key]


def _count(key: str, period: int) -> int:
    if getattr(cache, "available", lambda: True)():
        try:
            cache.add(key, 0, period + 1)
            return int(cache.incr(key))
        except (RedisError, ValueError) as exc:
            failed = getattr(cache, "failed", None)
            if failed is not None and isinstance(exc, RedisError):
                failed(exc)
    log.warning("write throttle counting per process: the shared cache is unavailable")
    return _count_locally(key)


def spend(who: str) -> float | None:
    """Count one request against ``who``'s budget: None when within it, else the seconds
    until the window ends (``Retry-After``)."""
    allowed, period = write_rate()
    now = time.time()
    window = int(now // period)
    if _count(f"throttle:writes:{who}:{window}", period) <= allowed:
        return None
    return (window + 1) * period - now


class WriteRateThrottle(BaseThrottle):
    """DRF's throttle for writes (module docstring)."""

    def __init__(self) -> None:
        self.retry_after: float | None = None

    def allow_request(self, request: Request, view: Any) -> bool:
        if request.method in SAFE_METHODS:
            return True
        self.retry_after = spend(ident(request))
        return self.retry_after is None

    def wait(self) -> float | None:
        return self.retry_after
