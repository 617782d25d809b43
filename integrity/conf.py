"""The audit's detector parameters (SPEC §7): the ``INTEGRITY_*`` settings of
``config/settings/base.py`` (what each means is said there), then a caller's overrides, checked
(:func:`audit_params`).
"""

from collections.abc import Mapping
from dataclasses import asdict, fields, replace
from typing import Any

from django.conf import settings

from core.errors import ServiceError
from integrity.domain.audit import AuditParams


def audit_params(overrides: Mapping[str, Any] | None = None) -> AuditParams:
    """The detectors' parameters: settings, then ``overrides`` (names of AuditParams)."""
    params = AuditParams(
        q=settings.INTEGRITY_Q,
        pair_q=settings.INTEGRITY_PAIR_Q,
        max_degree=settings.INTEGRITY_DEGREE_CAP,
        min_games=settings.INTEGRITY_MIN_GAMES,
        min_common_hours=settings.INTEGRITY_MIN_COMMON_HOURS,
        min_shared_wins=settings.INTEGRITY_MIN_SHARED_WINS,
        min_segment=settings.INTEGRITY_BOOST_MIN_SEGMENT,
        window=settings.INTEGRITY_BOOST_WINDOW,
        min_hour_shift=settings.INTEGRITY_BOOST_MIN_HOUR_SHIFT,
        history_days=settings.INTEGRITY_HISTORY_DAYS,
    )
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
    for name in ("q", "pair_q"):
        level = getattr(merged, name)
        if not 0 < level < 1:
            raise ServiceError(
                f"audit parameter {name} must lie between 0 and 1", detail={name: level}
            )
    if min(merged.max_degree, merged.min_games, merged.min_common_hours) < 1:
        raise ServiceError("audit counts must be at least 1", detail=asdict(merged))
    if min(merged.min_shared_wins, merged.min_segment, merged.window, merged.day_family) < 1:
        raise ServiceError("audit counts must be at least 1", detail=asdict(merged))
    if merged.history_days < 0:
        raise ServiceError("audit parameter history_days must be 0 or more", detail=asdict(merged))
    return merged
