"""The tour's clock (SPEC §6): tour days are calendar days in Asia/Shanghai.

This is the one definition of the tour's time zone; every domain module and service takes
it from here. Pure and stdlib-only, so ``<app>/domain/`` modules may import it.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Final
from zoneinfo import ZoneInfo

__all__ = ["TOUR_TZ", "tour_day"]

#: Asia/Shanghai (UTC+8, no daylight saving since 1991).
TOUR_TZ: Final = ZoneInfo("Asia/Shanghai")


def tour_day(moment: datetime) -> date:
    """The tour day (Asia/Shanghai calendar day) of an aware datetime."""
    if moment.tzinfo is None:
        raise ValueError("tour_day needs an aware datetime")
    return moment.astimezone(TOUR_TZ).date()
