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

Days are calendar days in the tour's time zone, Asia/Shanghai (the tour clock,
:mod:`core.domain.clock`, turns an aware moment into that day). A qualification from World
Cup representation is dated on the last day of its month (:func:`month_end`).

Pure and stdlib-only: no Django, no clock.
"""

from __future__ import annotations

import calendar
from datetime import date, datetime

__all__ = ["add_years", "month_end", "term_valid_until"]


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
