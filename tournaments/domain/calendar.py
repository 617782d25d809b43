"""Season calendar generator: events, their windows, feeding links and stations — SPEC §2, §9.

A season of the China UNO Online Tour is a run of weekly qualifiers and the finals they feed
(SPEC §2). ``build_calendar`` lays one out from its first Monday:

* **Weekly qualifier** (周预赛): ``weeks`` consecutive weeks, Monday 10:00 to Sunday
  23:59:59.999999 local time, and within that window only the daily session hours
  10:00–23:59 (:data:`DAILY_HOURS`): a game at 03:00 on a Wednesday is outside it.
  Code ``YYYY-Www-Q`` from the ISO year and week of its Monday (SPEC §9: the qualifier of
  2021-02-01..07 is ``2021-W05-Q``; the week of 2020-12-28 is ``2020-W53-Q``).
* **Weekly final** (周赛): the Monday after its qualifier, 10:00–23:59, code ``YYYY-Www-F`` (the
  same ISO week as its qualifier), fed by that qualifier.
* **Monthly final** (月赛): a week belongs to the month that holds its Thursday (SPEC §2;
  :func:`week_month`). The monthly final ``YYYY-MM-M`` is fed by the weekly finals of its
  month's weeks and is held on the 1st of the following month — unless that day is not after
  the last weekly final it is fed by, or the month is the season's last (the season closes),
  then on the day after that weekly final. Example: the
  last January 2021 week ends on Sunday 31 January, its weekly final is Monday 1 February, so
  the January monthly final is Tuesday 2 February. Window 10:00–23:59 that day.
* **Quarterly final** (季赛): fed by the monthly finals *played* in one calendar quarter and
  held on the first Friday after the last of them (SPEC §2's 2021 dates: 03-05, 06-04, 09-03,
  12-03), or on the date the organiser gives (after that monthly final; the dates increase).
  Code ``YYYY-Qn-F``: the year and quarter the monthly finals were played in.
* **Annual final** (年赛): ``YYYY-A`` for the season's ``year``, fed by every quarterly final,
  held on the Sunday before the season's last qualifier week (SPEC §2: 2021-12-26) — or,
  when that is not after the last quarterly final, the first Sunday after it — or on the
  date given (which must be after it).

Decisions (SPEC §2 leaves them open):

* **Month count.** The Thursdays of 52 weeks span 357 days, so they touch 12 *or 13* calendar
  months (13 for about three Monday starts in four, e.g. 2021-01-25: one January week, then
  February to December, then three weeks of January 2022). A season keeps at most
  ``ceil(weeks * 12 / 52)`` months — 12 for a 52-week season — so that it has 12 monthly and 4
  quarterly finals. While it has more, the edge month (first or last) with fewer season weeks
  merges into its neighbour: its weeks feed the neighbour's monthly final and carry the
  neighbour's month. On a tie the last month merges back into the one before, so the opening
  of a season always follows the tour's Thursday rule. :func:`week_month` is the plain
  Thursday rule; ``EventPlan.month`` is the season month after merging.
* **The trailing quarter.** The season's last monthly finals are played in the closing
  week, in the next calendar quarter (2021-12-M on 2022-01-04). When that last quarter holds
  fewer than three of them, they are *carried* (``Calendar.carried``): they feed the next
  season's first quarterly final, linked when that season is created. A season never has
  more than ``ceil(months / 3)`` quarterly finals; a surplus opening quarter (one monthly
  final) joins the next.
* **Stations** (站): every final (not the qualifiers) in date order, numbered from 1 and named
  from ``cities`` in order, cycling the list when it is shorter. A 52-week season has
  52 + 12 + 4 + 1 = 69 stations.
* **One station a day.** A weekly final keeps its Monday (SPEC §2: "the Monday after"); the
  monthly, quarterly and annual finals are placed after them, in date order, and one whose
  day already holds a station yields: it moves to the next free day (a quarterly final
  due on a Monday goes to the Tuesday). An organiser's date on a station's day is refused.
* **The season closes in the week after its last qualifier** (:func:`season_last_day`): the
  last weekly final on its Monday and the last monthly final on Tuesday to Thursday, so
  every default station lies between the season's first Monday and that Sunday, and the
  next season may open the Monday after. The annual final comes before the last weekly
  events: a 52-week season from 2021-01-04 has its annual final on Sunday 2021-12-26.
* Daily hours apply to the qualifiers only; a final's window is already one day's session.
  Windows are inclusive at both ends.
* ``events`` are in date order: by start, then weekly qualifier, weekly, monthly, quarterly,
  annual, then code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from enum import StrEnum
from functools import cached_property
from zoneinfo import ZoneInfo

from core.domain.clock import TOUR_TZ
from tournaments.domain.cities import DEFAULT_CITIES

__all__ = [
    "DAILY_HOURS",
    "Calendar",
    "EventKind",
    "EventPlan",
    "build_calendar",
    "event_code_for_week",
    "season_last_day",
    "week_month",
]


class EventKind(StrEnum):
    """The five online event kinds of SPEC §2, in their order on a shared start or day."""

    WEEKLY_QUALIFIER = "weekly_qualifier"  # 周预赛
    WEEKLY_FINAL = "weekly_final"  # 周赛
    MONTHLY_FINAL = "monthly_final"  # 月赛
    QUARTERLY_FINAL = "quarterly_final"  # 季赛
    ANNUAL_FINAL = "annual_final"  # 年赛


DAILY_OPEN = time(10, 0)
DAILY_CLOSE = time(23, 59, 59, 999999)
#: Daily session hours of a qualifier, inclusive: 10:00 to the end of 23:59.
DAILY_HOURS: tuple[time, time] = (DAILY_OPEN, DAILY_CLOSE)

FRIDAY = 4
SUNDAY = 6

_KIND_ORDER: dict[EventKind, int] = {kind: i for i, kind in enumerate(EventKind)}
_WEEK_SUFFIX: dict[EventKind, str] = {
    EventKind.WEEKLY_QUALIFIER: "Q",
    EventKind.WEEKLY_FINAL: "F",
}
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass(frozen=True)
class EventPlan:
    """One planned event: its window (aware datetimes in the tour's zone) and its links."""

    code: str
    kind: EventKind
    starts_at: datetime
    ends_at: datetime
    daily_hours: tuple[time, time] | None
    feeds: str | None
    fed_by: tuple[str, ...]
    station: int | None = None
    city: str | None = None
    month: str | None = None

    @property
    def day(self) -> date:
        """The local day the event starts (a final's day; a qualifier's Monday)."""
        return self.starts_at.date()

    def accepts(self, moment: datetime) -> bool:
        """Whether a game at ``moment`` (aware) falls in the window and the daily hours."""
        if moment.tzinfo is None or moment.utcoffset() is None:
            raise ValueError(f"moment {moment.isoformat()} is naive; give an aware datetime")
        if not self.starts_at <= moment <= self.ends_at:
            return False
        if self.daily_hours is None:
            return True
        local = moment.astimezone(self.starts_at.tzinfo).time()
        opens, closes = self.daily_hours
        return opens <= local <= closes


@dataclass(frozen=True)
class Calendar:
    """A season's events in date order."""

    year: int
    tz: str
    events: tuple[EventPlan, ...]
    #: Monthly finals that feed the next season's first quarterly final (module docstring).
    carried: tuple[str, ...] = ()

    @cached_property
    def _by_code(self) -> dict[str, EventPlan]:
        return {event.code: event for event in self.events}

    def by_code(self, code: str) -> EventPlan:
        """The event with this code; KeyError naming it when there is none."""
        try:
            return self._by_code[code]
        except KeyError:
            raise KeyError(f"no event {code!r} in the {self.year} calendar") from None

    def of_kind(self, kind: EventKind | str) -> tuple[EventPlan, ...]:
        """The events of one kind, in date order."""
        wanted = EventKind(kind)
        return tuple(event for event in self.events if event.kind == wanted)

    def stations(self) -> tuple[EventPlan, ...]:
        """The finals, in station order (1, 2, …)."""
        finals = [event for event in self.events if event.station is not None]
        return tuple(sorted(finals, key=lambda event: event.station or 0))


def _require_monday(day: date, what: str) -> None:
    if day.weekday() != 0:
        raise ValueError(f"{what} {day.isoformat()} is a {_WEEKDAYS[day.weekday()]}, not a Monday")


def week_month(monday: date) -> tuple[int, int]:
    """(year, month) of the week starting ``monday``: the month that holds its Thursday."""
    _require_monday(monday, "week_month: the week's first day")
    thursday = monday + timedelta(days=3)
    return thursday.year, thursday.month


def event_code_for_week(monday: date, kind: EventKind | str) -> str:
    """``YYYY-Www-Q`` / ``YYYY-Www-F`` from the ISO year and week of ``monday`` (SPEC §9)."""
    _require_monday(monday, "event_code_for_week: the week's first day")
    event_kind = EventKind(kind)
    suffix = _WEEK_SUFFIX.get(event_kind)
    if suffix is None:
        raise ValueError(f"{event_kind} is not a weekly event kind")
    iso_year, iso_week, _ = monday.isocalendar()
    return f"{iso_year:04d}-W{iso_week:02d}-{suffix}"


def _month_label(year_month: tuple[int, int]) -> str:
    return f"{year_month[0]:04d}-{year_month[1]:02d}"


def _first_of_next_month(year_month: tuple[int, int]) -> date:
    year, month = year_month
    return date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)


def _quarter_code(day: date) -> str:
    """The code of the quarterly final fed by monthly finals played up to ``day``."""
    year, quarter = _quarter_of(day)
    return f"{year:04d}-Q{quarter}-F"


def _next_weekday(day: date, weekday: int) -> date:
    """The first day after ``day`` that is a ``weekday`` (0 Monday … 6 Sunday)."""
    return day + timedelta(days=(weekday - day.weekday()) % 7 or 7)


_Month = tuple[tuple[int, int], list[date]]


def _season_months(mondays: Sequence[date]) -> list[_Month]:
    """The season's months with their weeks' Mondays, after merging surplus edge months."""
    months: list[_Month] = []
    for monday in mondays:
        year_month = week_month(monday)
        if months and months[-1][0] == year_month:
            months[-1][1].append(monday)
        else:
            months.append((year_month, [monday]))
    cap = -(-len(mondays) * 12 // 52)  # ceil(weeks * 12 / 52): 12 for 52 weeks
    while len(months) > cap:
        first, last = months[0], months[-1]
        if len(first[1]) < len(last[1]):
            second = months[1]
            months[1] = (second[0], first[1] + second[1])
            del months[0]
        else:
            before = months[-2]
            months[-2] = (before[0], before[1] + last[1])
            del months[-1]
    return months


def _quarter_of(day: date) -> tuple[int, int]:
    return day.year, (day.month - 1) // 3 + 1


def _quarter_groups(
    months: list[_Month], monthly_day: dict[tuple[int, int], date]
) -> tuple[list[list[_Month]], list[_Month]]:
    """The season's months grouped by the calendar quarter their monthly final is played in,
    and the trailing months carried to the next season (module docstring)."""
    groups: list[list[_Month]] = []
    for month in months:
        quarter = _quarter_of(monthly_day[month[0]])
        if groups and _quarter_of(monthly_day[groups[-1][-1][0]]) == quarter:
            groups[-1].append(month)
        else:
            groups.append([month])
    carried: list[_Month] = []
    if len(groups) > 1 and len(groups[-1]) < 3:
        carried = groups.pop()
    cap = -(-len(months) // 3)
    while len(groups) > cap:
        groups[1] = groups[0] + groups[1]
        del groups[0]
    return groups, carried


@dataclass(frozen=True)
class _Windows:
    """Session windows in the season's time zone: ``first`` 10:00 to ``last`` 23:59."""

    zone: ZoneInfo

    def __call__(self, first: date, last: date) -> tuple[datetime, datetime]:
        return (
            datetime.combine(first, DAILY_OPEN, tzinfo=self.zone),
            datetime.combine(last, DAILY_CLOSE, tzinfo=self.zone),
        )


def season_last_day(start: date, weeks: int = 52) -> date:
    """The last day of a season of ``weeks`` qualifiers from Monday ``start``: the Sunday of
    its closing week, the week after its last qualifier (module docstring)."""
    return start + timedelta(weeks=weeks + 1, days=-1)


#: The stations placed so far, by day: one station a day.
_Taken = dict[date, str]


def _free_day(day: date, code: str, taken: _Taken) -> date:
    """``day``, or the first day after it that holds no station; taken by ``code``."""
    while day in taken:
        day += timedelta(days=1)
    taken[day] = code
    return day


def _given_day(day: date, code: str, what: str, taken: _Taken) -> date:
    """An organiser's date for ``code``, refused when another station holds that day."""
    if day in taken:
        raise ValueError(
            f"{what} {code} on {day.isoformat()} falls on the day of {taken[day]}: "
            "one station a day"
        )
    taken[day] = code
    return day


def _weekly_final_days(mondays: Sequence[date]) -> _Taken:
    return {
        monday + timedelta(days=7): event_code_for_week(monday, EventKind.WEEKLY_FINAL)
        for monday in mondays
    }


def _monthly_days(months: Sequence[_Month], taken: _Taken) -> dict[tuple[int, int], date]:
    """Each month's final day: the 1st of the next month, or the day after the month's last
    weekly final when that is later or the month is the season's last (the season closes);
    the next free day when a station holds it."""
    days: dict[tuple[int, int], date] = {}
    for i, (year_month, mondays) in enumerate(months):
        last_weekly_final = mondays[-1] + timedelta(days=7)
        day = _first_of_next_month(year_month)
        if day <= last_weekly_final or i == len(months) - 1:
            day = last_weekly_final + timedelta(days=1)
        days[year_month] = _free_day(day, f"{_month_label(year_month)}-M", taken)
    return days


def _annual_day(
    code: str, last_quarterly: date, last_monday: date, annual_date: date | None, taken: _Taken
) -> date:
    if annual_date is None:
        sunday = last_monday - timedelta(days=1)
        if sunday <= last_quarterly:
            sunday = _next_weekday(last_quarterly, SUNDAY)
        return _free_day(sunday, code, taken)
    if annual_date <= last_quarterly:
        raise ValueError(
            f"annual final {code} on {annual_date.isoformat()} must be after the last "
            f"quarterly final ({last_quarterly.isoformat()})"
        )
    return _given_day(annual_date, code, "annual final", taken)


def _week_events(
    monday: date, monthly_code: str, label: str, window: _Windows
) -> tuple[EventPlan, EventPlan]:
    """A week's qualifier and the weekly final it feeds (which feeds ``monthly_code``)."""
    qualifier_code = event_code_for_week(monday, EventKind.WEEKLY_QUALIFIER)
    final_code = event_code_for_week(monday, EventKind.WEEKLY_FINAL)
    opens, closes = window(monday, monday + timedelta(days=6))
    qualifier = EventPlan(
        code=qualifier_code,
        kind=EventKind.WEEKLY_QUALIFIER,
        starts_at=opens,
        ends_at=closes,
        daily_hours=DAILY_HOURS,
        feeds=final_code,
        fed_by=(),
        month=label,
    )
    final_day = monday + timedelta(days=7)
    final = _final(
        final_code,
        EventKind.WEEKLY_FINAL,
        window(final_day, final_day),
        feeds=monthly_code,
        fed_by=(qualifier_code,),
        month=label,
    )
    return qualifier, final


def _month_events(
    month: _Month, day: date, quarterly_code: str | None, window: _Windows
) -> list[EventPlan]:
    """A season month's weekly events and its monthly final (which feeds the quarter's, or
    nothing yet when it is carried to the next season)."""
    year_month, mondays = month
    label = _month_label(year_month)
    monthly_code = f"{label}-M"
    events: list[EventPlan] = []
    for monday in mondays:
        events.extend(_week_events(monday, monthly_code, label, window))
    weekly_codes = tuple(event.code for event in events if event.kind == EventKind.WEEKLY_FINAL)
    events.append(
        _final(
            monthly_code,
            EventKind.MONTHLY_FINAL,
            window(day, day),
            feeds=quarterly_code,
            fed_by=weekly_codes,
            month=label,
        )
    )
    return events


def _stations(events: list[EventPlan], cities: Sequence[str]) -> tuple[EventPlan, ...]:
    """The events in date order, every final numbered as a station and given a city."""
    events = sorted(
        events, key=lambda event: (event.starts_at, _KIND_ORDER[event.kind], event.code)
    )
    codes = [event.code for event in events]
    if len(set(codes)) != len(codes):  # pragma: no cover - guarded by the rules above
        raise ValueError("the calendar would repeat an event code")
    numbered: dict[str, EventPlan] = {}
    finals = [event for event in events if event.kind != EventKind.WEEKLY_QUALIFIER]
    for number, event in enumerate(finals, start=1):
        city = cities[(number - 1) % len(cities)]
        numbered[event.code] = replace(event, station=number, city=city)
    return tuple(numbered.get(event.code, event) for event in events)


def build_calendar(
    year: int,
    start: date,
    *,
    weeks: int = 52,
    quarterly_dates: Sequence[date] | None = None,
    annual_date: date | None = None,
    cities: Sequence[str] = DEFAULT_CITIES,
    tz: str = TOUR_TZ.key,
) -> Calendar:
    """Lay out the season ``year`` starting with the weekly qualifier of Monday ``start``."""
    _require_monday(start, "start")
    if weeks < 1:
        raise ValueError(f"weeks must be at least 1, got {weeks}")
    if not cities:
        raise ValueError("cities must name at least one city")
    window = _Windows(ZoneInfo(tz))
    mondays = [start + timedelta(weeks=i) for i in range(weeks)]
    months = _season_months(mondays)
    taken = _weekly_final_days(mondays)
    monthly_day = _monthly_days(months, taken)
    groups, carried = _quarter_groups(months, monthly_day)
    quarterly_days = _quarterly_days(groups, monthly_day, quarterly_dates, taken)
    annual_code = f"{year:04d}-A"
    annual_day = _annual_day(annual_code, quarterly_days[-1], mondays[-1], annual_date, taken)
    events: list[EventPlan] = []
    quarterly_codes: list[str] = []
    for group, day in zip(groups, quarterly_days, strict=True):
        quarterly_code = _quarter_code(monthly_day[group[-1][0]])
        quarterly_codes.append(quarterly_code)
        for month in group:
            events.extend(_month_events(month, monthly_day[month[0]], quarterly_code, window))
        monthly_codes = tuple(f"{_month_label(year_month)}-M" for year_month, _ in group)
        events.append(
            _final(
                quarterly_code,
                EventKind.QUARTERLY_FINAL,
                window(day, day),
                feeds=annual_code,
                fed_by=monthly_codes,
            )
        )
    for month in carried:
        events.extend(_month_events(month, monthly_day[month[0]], None, window))
    events.append(
        _final(
            annual_code,
            EventKind.ANNUAL_FINAL,
            window(annual_day, annual_day),
            feeds=None,
            fed_by=tuple(quarterly_codes),
        )
    )
    carried_codes = tuple(f"{_month_label(year_month)}-M" for year_month, _ in carried)
    return Calendar(year=year, tz=tz, events=_stations(events, cities), carried=carried_codes)


def _final(
    code: str,
    kind: EventKind,
    span: tuple[datetime, datetime],
    *,
    feeds: str | None,
    fed_by: tuple[str, ...],
    month: str | None = None,
) -> EventPlan:
    return EventPlan(
        code=code,
        kind=kind,
        starts_at=span[0],
        ends_at=span[1],
        daily_hours=None,
        feeds=feeds,
        fed_by=fed_by,
        month=month,
    )


def _quarterly_days(
    groups: list[list[_Month]],
    monthly_day: dict[tuple[int, int], date],
    quarterly_dates: Sequence[date] | None,
    taken: _Taken,
) -> list[date]:
    last_monthly = [monthly_day[group[-1][0]] for group in groups]
    if quarterly_dates is None:
        return [
            _free_day(_next_weekday(day, FRIDAY), _quarter_code(day), taken) for day in last_monthly
        ]
    if len(quarterly_dates) != len(groups):
        raise ValueError(
            f"quarterly_dates has {len(quarterly_dates)} dates; the season has "
            f"{len(groups)} quarterly finals"
        )
    days: list[date] = []
    for group, after, day in zip(groups, last_monthly, quarterly_dates, strict=True):
        code = _quarter_code(after)
        if day <= after:
            raise ValueError(
                f"quarterly final {code} on {day.isoformat()} must be after its last monthly "
                f"final {_month_label(group[-1][0])}-M ({after.isoformat()})"
            )
        if days and day <= days[-1]:
            raise ValueError(
                f"quarterly final {code} on {day.isoformat()} must be after the previous "
                f"quarterly final ({days[-1].isoformat()})"
            )
        days.append(_given_day(day, code, "quarterly final", taken))
    return days
