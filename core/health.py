"""``/healthz``: the status of each component the service depends on.

The database is always checked; the broker and the cache only when configured. The database
or the broker down answers 503; the cache down answers 200 ``degraded`` (the service serves
uncached without it, ``core.redis_cache``), naming the failing component either way, so a
load balancer and a person read the same thing. Every probe is bounded by its connection's
timeouts (database ``connect_timeout``, Redis socket timeouts, the broker's 2 s), so the
answer comes within 5 s whatever hangs.
``?checks=0`` answers at once with no checks (the bare baseline endpoint of the benchmarks).
"""

import time
from collections.abc import Callable

from celery import current_app
from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, JsonResponse


def _database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('server_version')")
        (version,) = cursor.fetchone()
    return f"postgresql {version}"


def _broker() -> str:
    # The project's Celery app (config.celery_app), current since Django loaded it.
    with current_app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)
    return str(settings.CELERY_BROKER_URL).split("://", 1)[0]


def _cache() -> str:
    if not getattr(cache, "available", lambda: True)():
        raise RuntimeError(f"unavailable: {getattr(cache, 'last_error', '')}")
    key = "healthz:probe"
    cache.set(key, "1", 5)
    if cache.get(key) != "1":
        raise RuntimeError(
            f"value written was not read back {getattr(cache, 'last_error', '')}".strip()
        )
    backend: str = settings.CACHES["default"]["BACKEND"]
    return backend.rsplit(".", 1)[-1]


def _check(probe: Callable[[], str]) -> dict[str, object]:
    started = time.perf_counter()
    try:
        detail = probe()
    except Exception as exc:  # noqa: BLE001 - any failure is the component's status
        return {"status": "down", "error": f"{type(exc).__name__}: {exc}"}
    return {
        "status": "ok",
        "detail": detail,
        "ms": round((time.perf_counter() - started) * 1000, 1),
    }


def healthz(request: HttpRequest) -> JsonResponse:
    if request.GET.get("checks") == "0":
        return JsonResponse({"status": "ok"})
    components: dict[str, dict[str, object]] = {"database": _check(_database)}
    if settings.CELERY_BROKER_URL and not settings.CELERY_TASK_ALWAYS_EAGER:
        components["broker"] = _check(_broker)
    else:
        components["broker"] = {"status": "skipped", "detail": "jobs run in-process (eager)"}
    components["cache"] = _check(_cache)
    healthy = all(c["status"] != "down" for name, c in components.items() if name != "cache")
    status = (
        "down" if not healthy else "degraded" if components["cache"]["status"] == "down" else "ok"
    )
    return JsonResponse(
        {"status": status, "components": components}, status=200 if healthy else 503
    )
