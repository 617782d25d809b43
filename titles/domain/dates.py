"""Calendar arithmetic for title validity (SPEC §6, Titles).

The rule implemented here: periods follow the PRC Civil Code, Arts. 201–203. The start
day is not counted, and a period of years ends at 24:00 of the *corresponding date* in the
final year; when that year has no corresponding date (29 February into a non-leap year)
the period ends on the last day of that month, 28 February. There is no roll-over for
holidays or weekends.

A Master (大师) term that starts with a qualification on day ``s`` and holds ``k``
qualifications is therefore valid through ``add_years(s, k)`` inclusive — computed from
``s`` every time, never by chaining one-year steps::

    add_years(date(2020, 2, 29), 4) == date(2024, 2, 29)   # not 2024-02-28
    add_years(date(2020, 2, 29), 1) == date(2021, 2, 28)

Days are calendar days in the tour's time zone, Asia/Shanghai; :func:`tour_day` turns an
aware moment into that day. A qualification from World Cup representation is dated on the
last day of its month (:func:`month_end`).

Pure and stdlib-only: no Django, no clock.
"""

from __future__ import annotations

import calendar
from datetime import date, datetime, timedelta, timezone

__all__ = ["TOUR_TIMEZONE", "add_years", "month_end", "term_valid_until", "tour_day"]

#: Asia/Shanghai as a fixed UTC+08:00 offset. China has kept UTC+8 without daylight saving
#: since 1991, so for every tour date this equals ``zoneinfo.ZoneInfo("Asia/Shanghai")``
#: without depending on the system's tz database.
TOUR_TIMEZONE = timezone(timedelta(hours=8), "Asia/Shanghai")


def add_years(day: date, years: int) -> date:
    """Return the date corresponding to ``day`` ``years`` later (Civil Code Arts. 201–203).

    When the target year has no corresponding date (``day`` is 29 February and the target
    year is not a leap year) the result is the last day of that month, 28 February.
    ``years`` may be zero or negative; a result outside ``date``'s range raises
    ``ValueError``.
    """
    if isinstance(day, datetime):
        raise TypeError("add_years works on calendar days: pass a date, not a datetime")
    year = day.year + years
    if day.month == 2 and day.day == 29 and not calendar.isleap(year):
        return date(year, 2, 28)
    return day.replace(year=year)


def term_valid_until(start: date, qualifications: int) -> date:
    """Return the last valid day of a Master term (SPEC §6).

    A term that started on ``start`` and holds ``qualifications`` (k >= 1) qualifications is
    valid through ``add_years(start, k)`` inclusive, always computed from ``start``.
    """
    if qualifications < 1:
        raise ValueError(f"a term holds at least one qualification, got {qualifications}")
    return add_years(start, qualifications)


def month_end(year: int, month: int) -> date:
    """Return the last day of ``month`` in ``year``.

    World Cup representation is dated on the last day of the month (SPEC §6).
    """
    return date(year, month, calendar.monthrange(year, month)[1])


def tour_day(moment: datetime) -> date:
    """Return the calendar day of an aware ``moment`` in the tour's time zone.

    Naive datetimes are refused (``ValueError``): their day is ambiguous.
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("tour_day needs an aware datetime")
    return moment.astimezone(TOUR_TIMEZONE).date()
