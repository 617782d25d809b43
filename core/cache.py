"""Reads cached under a version: an entry is keyed on the version of what it was built from
(``Event.leaderboard_version`` for a board, SPEC §4), so a write that bumps the version makes
every older entry unreachable and no read is ever stale past a write. Old entries are left
to expire (``timeout``); nothing is deleted.
"""

from collections.abc import Callable, Iterable
from typing import TypeVar

from django.core.cache import cache

T = TypeVar("T")


def cached_by_version(
    key_parts: Iterable[object], version: int, builder: Callable[[], T], timeout: int = 60
) -> T:
    """The value of ``builder()`` for ``key_parts`` at ``version``: from the cache when
    built before at that version, else built now and stored for ``timeout`` seconds."""
    key = ":".join(["v", str(version), *(str(part) for part in key_parts)])
    found = cache.get(key)
    if found is not None:
        return found  # type: ignore[no-any-return]
    value = builder()
    cache.set(key, value, timeout)
    return value
