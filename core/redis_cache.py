"""The shared cache on Redis, failing soft: a Redis that is down or does not answer makes the
cache empty, not the service broken.

Every read answers its default and every write is dropped while Redis fails; the first
failure is logged, and for ``DOWN_SECONDS`` after it this process does not ask Redis at all,
so a Redis that accepts connections and never answers costs one socket timeout per process
per period, not one per request. Public reads are then built from the database on every
request (``core.cache``), and the write throttle counts per process
(``core.throttling``). ``incr`` is not softened: its callers need to know.
"""

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError

log = logging.getLogger("unotour.cache")

#: How long a process leaves Redis alone after a failure.
DOWN_SECONDS = 5.0

T = TypeVar("T")


class FailSoftRedisCache(RedisCache):
    """Django's Redis cache whose reads and writes survive Redis failing (module docstring)."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self.down_until = 0.0
        self.last_error = ""

    def available(self) -> bool:
        """Whether this process asks Redis now (no failure in the last ``DOWN_SECONDS``)."""
        return time.monotonic() >= self.down_until

    def failed(self, exc: Exception) -> None:
        """Record a failure: Redis is left alone for ``DOWN_SECONDS``; logged once a period."""
        if self.available():
            log.warning("cache unavailable, serving uncached for %ss: %s", DOWN_SECONDS, exc)
        self.down_until = time.monotonic() + DOWN_SECONDS
        self.last_error = f"{type(exc).__name__}: {exc}"

    def _soft(self, default: T, call: Callable[..., T], *args: Any) -> T:
        if not self.available():
            return default
        try:
            return call(*args)
        except RedisError as exc:
            self.failed(exc)
            return default

    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        return self._soft(default, super().get, key, default, version)

    def get_many(self, keys: Any, version: int | None = None) -> dict[Any, Any]:
        return self._soft({}, super().get_many, keys, version)

    def add(self, key: Any, value: Any, timeout: Any = 300, version: int | None = None) -> bool:
        return self._soft(False, super().add, key, value, timeout, version)

    def set(self, key: Any, value: Any, timeout: Any = 300, version: int | None = None) -> None:
        self._soft(None, super().set, key, value, timeout, version)

    def set_many(self, data: Any, timeout: Any = 300, version: int | None = None) -> list[Any]:
        return self._soft(list(data), super().set_many, data, timeout, version)

    def touch(self, key: Any, timeout: Any = 300, version: int | None = None) -> bool:
        return self._soft(False, super().touch, key, timeout, version)

    def delete(self, key: Any, version: int | None = None) -> bool:
        return self._soft(False, super().delete, key, version)

    def delete_many(self, keys: Any, version: int | None = None) -> None:
        self._soft(None, super().delete_many, keys, version)

    def has_key(self, key: Any, version: int | None = None) -> bool:
        return self._soft(False, super().has_key, key, version)

    def clear(self) -> None:
        self._soft(None, super().clear)
