"""Integrity settings (SPEC §7), each read from Django settings with a default here.

* ``INTEGRITY_Q`` (0.01) — the Benjamini–Hochberg level of every statistical detector.
* ``INTEGRITY_DEGREE_CAP`` (8) — accounts above which a device or an address is shared
  infrastructure (carrier NAT, a campus) and links nobody.
* ``INTEGRITY_MIN_GAMES`` (10), ``INTEGRITY_MIN_COMMON_HOURS`` (2) — who enters the
  co-seating family.
* ``INTEGRITY_MIN_SHARED_WINS`` (5) — ordered pairs in the point-flow family.
* ``INTEGRITY_BOOST_MIN_SEGMENT`` (10), ``INTEGRITY_BOOST_WINDOW`` (10),
  ``INTEGRITY_BOOST_MIN_HOUR_SHIFT`` (6.0) — the boosting scan.
* ``INTEGRITY_CHUNK_SIZE`` (20000) — rows fetched per round trip when an audit loads seats.
* ``INTEGRITY_AUDIT_PARALLEL_WORKERS`` (0) — PostgreSQL parallel workers per statement of an
  audit (``max_parallel_workers_per_gather``). The audit already keeps two connections busy
  at once; on the two-core reference server extra workers only crowd the same cores (the
  whole audit of 10,000,000 games: 193 s with PostgreSQL's default of 2, 166–176 s with
  none). Raise it on a database server with cores to spare.
* ``INTEGRITY_SEASON_AUDIT_CRONTAB`` (Tuesdays 04:00 Asia/Shanghai, after Monday's weekly
  final) — when the periodic season audit runs (django-celery-beat, see ``integrity.apps``).
"""

from collections.abc import Mapping
from dataclasses import asdict, fields, replace
from typing import Any

from django.conf import settings

from core.errors import ServiceError
from integrity.domain.audit import AuditParams

_SETTINGS = {
    "q": ("INTEGRITY_Q", 0.01),
    "max_degree": ("INTEGRITY_DEGREE_CAP", 8),
    "min_games": ("INTEGRITY_MIN_GAMES", 10),
    "min_common_hours": ("INTEGRITY_MIN_COMMON_HOURS", 2),
    "min_shared_wins": ("INTEGRITY_MIN_SHARED_WINS", 5),
    "min_segment": ("INTEGRITY_BOOST_MIN_SEGMENT", 10),
    "window": ("INTEGRITY_BOOST_WINDOW", 10),
    "min_hour_shift": ("INTEGRITY_BOOST_MIN_HOUR_SHIFT", 6.0),
}

DEFAULT_SEASON_CRONTAB = {"minute": "0", "hour": "4", "day_of_week": "2"}


def chunk_size() -> int:
    return int(getattr(settings, "INTEGRITY_CHUNK_SIZE", 20_000))


def audit_parallel_workers() -> int:
    return int(getattr(settings, "INTEGRITY_AUDIT_PARALLEL_WORKERS", 0))


def season_crontab() -> dict[str, str]:
    return dict(getattr(settings, "INTEGRITY_SEASON_AUDIT_CRONTAB", DEFAULT_SEASON_CRONTAB))


def audit_params(overrides: Mapping[str, Any] | None = None) -> AuditParams:
    """The detectors' parameters: settings, then ``overrides`` (names of AuditParams)."""
    configured: dict[str, Any] = {
        name: getattr(settings, setting, default) for name, (setting, default) in _SETTINGS.items()
    }
    params = AuditParams(**configured)
    if not overrides:
        return params
    known = {f.name: type(getattr(params, f.name)) for f in fields(AuditParams)}
    unknown = sorted(set(overrides) - set(known))
    if unknown:
        raise ServiceError(
            f"unknown audit parameter(s): {', '.join(unknown)}",
            detail={"params": unknown, "known": sorted(known)},
        )
    cleaned: dict[str, Any] = {}
    for name, value in overrides.items():
        kind = known[name]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ServiceError(f"audit parameter {name} must be a number", detail={name: value})
        if kind is int and value != int(value):
            raise ServiceError(f"audit parameter {name} must be an integer", detail={name: value})
        cleaned[name] = kind(value)
    merged = replace(params, **cleaned)
    if not 0 < merged.q < 1:
        raise ServiceError("audit parameter q must lie between 0 and 1", detail={"q": merged.q})
    if min(merged.max_degree, merged.min_games, merged.min_common_hours) < 1:
        raise ServiceError("audit counts must be at least 1", detail=asdict(merged))
    if min(merged.min_shared_wins, merged.min_segment, merged.window) < 1:
        raise ServiceError("audit counts must be at least 1", detail=asdict(merged))
    return merged
