"""Tests for the season calendar generator (SPEC §2, §9)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.domain.clock import TOUR_TZ
from tournaments.domain.calendar import (
    DAILY_HOURS,
    Calendar,
    EventKind,
    build_calendar,
    event_code_for_week,
    season_last_day,
    week_month,
)
from tournaments.domain.cities import DEFAULT_CITIES

FINAL_KINDS = (
    EventKind.WEEKLY_FINAL,
    EventKind.MONTHLY_FINAL,
    EventKind.QUARTERLY_FINAL,
    EventKind.ANNUAL_FINAL,
)


def local(
    year: int, month: int, day: int, hour: int, minute: int, second: int = 0, micro: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, micro, tzinfo=TOUR_TZ)


def kind_counts(calendar: Calendar) -> Counter[EventKind]:
    return Counter(event.kind for event in calendar.events)


def assert_consistent(calendar: Calendar) -> None:
    """Structural invariants every generated calendar keeps."""
    codes = [event.code for event in calendar.events]
    assert len(codes) == len(set(codes))
    keys = [(event.starts_at, event.day) for event in calendar.events]
    assert keys == sorted(keys)
    for event in calendar.events:
        assert event.starts_at.tzinfo is not None
        assert event.starts_at < event.ends_at
        if event.feeds is None:
            assert event.kind == EventKind.ANNUAL_FINAL or event.code in calendar.carried
        else:
            target = calendar.by_code(event.feeds)
            assert event.code in target.fed_by
            assert event.ends_at < target.starts_at
        for feeder in event.fed_by:
            assert calendar.by_code(feeder).feeds == event.code
    expected_feed = {
        EventKind.WEEKLY_QUALIFIER: EventKind.WEEKLY_FINAL,
        EventKind.WEEKLY_FINAL: EventKind.MONTHLY_FINAL,
        EventKind.MONTHLY_FINAL: EventKind.QUARTERLY_FINAL,
        EventKind.QUARTERLY_FINAL: EventKind.ANNUAL_FINAL,
    }
    for event in calendar.events:
        if event.feeds is not None:
            assert calendar.by_code(event.feeds).kind == expected_feed[event.kind]
    for final in calendar.of_kind(EventKind.WEEKLY_FINAL):
        assert len(final.fed_by) == 1
    stations = calendar.stations()
    assert [s.station for s in stations] == list(range(1, len(stations) + 1))
    assert {s.kind for s in stations} <= set(FINAL_KINDS)
    assert len(stations) == sum(1 for e in calendar.events if e.kind in FINAL_KINDS)
    days = [s.day for s in stations]
    assert days == sorted(days)
    assert len(set(days)) == len(days), "two stations on one day"
    # weekly events carry the month of the monthly final they feed
    for final in calendar.of_kind(EventKind.WEEKLY_FINAL):
        assert final.feeds == f"{final.month}-M"
        assert calendar.by_code(final.fed_by[0]).month == final.month


# --- one-year seasons: 52 + 12 + 4 + 1 = 69 stations -------------------------------------


@pytest.mark.parametrize("start", [date(2021, 1, 4), date(2020, 6, 1)])
def test_a_52_week_season_has_69_stations(start: date) -> None:
    calendar = build_calendar(start.year, start)

    assert kind_counts(calendar) == {
        EventKind.WEEKLY_QUALIFIER: 52,
        EventKind.WEEKLY_FINAL: 52,
        EventKind.MONTHLY_FINAL: 12,
        EventKind.QUARTERLY_FINAL: 4,
        EventKind.ANNUAL_FINAL: 1,
    }
    stations = calendar.stations()
    assert len(stations) == 69
    assert [s.city for s in stations] == list(DEFAULT_CITIES)
    assert_consistent(calendar)


def test_the_2021_season_codes_and_dates() -> None:
    calendar = build_calendar(2021, date(2021, 1, 4))

    assert [e.code for e in calendar.of_kind(EventKind.MONTHLY_FINAL)] == [
        f"2021-{m:02d}-M" for m in range(1, 13)
    ]
    assert [e.code for e in calendar.of_kind(EventKind.QUARTERLY_FINAL)] == [
        "2021-Q1-F",
        "2021-Q2-F",
        "2021-Q3-F",
        "2021-Q4-F",
    ]
    assert calendar.by_code("2021-Q1-F").fed_by == ("2021-01-M", "2021-02-M")
    assert calendar.by_code("2021-Q2-F").fed_by == ("2021-03-M", "2021-04-M", "2021-05-M")
    assert calendar.carried == ("2021-12-M",)
    assert calendar.by_code("2021-12-M").feeds is None  # the 2022 season's first quarterly
    annual = calendar.by_code("2021-A")
    assert annual.fed_by == ("2021-Q1-F", "2021-Q2-F", "2021-Q3-F", "2021-Q4-F")
    assert annual.feeds is None
    assert annual.station == 66  # then W51-F, W52-F (2022-01-03) and 2021-12-M (01-04)
    first = calendar.events[0]
    assert first.code == "2021-W01-Q"
    assert first.starts_at == local(2021, 1, 4, 10, 0)
    assert first.ends_at == datetime.combine(date(2021, 1, 10), time.max, tzinfo=TOUR_TZ)
    assert calendar.by_code("2021-W52-F").day == date(2021, 1, 4) + timedelta(weeks=52)


def test_the_2020_season_station_13_is_nanjing_on_2020_08_17() -> None:
    # The tour's record: "第十三站：南京站（2020年8月17日）".
    station = build_calendar(2020, date(2020, 6, 1)).stations()[12]

    assert (station.station, station.city, station.day) == (13, "南京", date(2020, 8, 17))
    assert station.code == "2020-W33-F"


# --- codes and the Thursday rule ----------------------------------------------------------


def test_weekly_codes_use_the_iso_week_of_the_monday() -> None:
    calendar = build_calendar(2021, date(2021, 1, 4))
    qualifier = calendar.by_code("2021-W05-Q")

    assert qualifier.day == date(2021, 2, 1)
    assert qualifier.ends_at.date() == date(2021, 2, 7)
    assert qualifier.feeds == "2021-W05-F"
    final = calendar.by_code("2021-W05-F")
    assert final.day == date(2021, 2, 8)
    assert final.fed_by == ("2021-W05-Q",)
    assert event_code_for_week(date(2021, 2, 1), EventKind.WEEKLY_QUALIFIER) == "2021-W05-Q"
    assert event_code_for_week(date(2021, 2, 1), "weekly_final") == "2021-W05-F"


def test_iso_year_edge_week_of_2020_12_28_is_2020_w53() -> None:
    assert event_code_for_week(date(2020, 12, 28), EventKind.WEEKLY_QUALIFIER) == "2020-W53-Q"
    assert event_code_for_week(date(2018, 12, 31), EventKind.WEEKLY_FINAL) == "2019-W01-F"
    calendar = build_calendar(2020, date(2020, 6, 1))
    assert calendar.by_code("2020-W53-Q").day == date(2020, 12, 28)
    assert calendar.by_code("2020-W53-F").month == "2020-12"  # Thursday 2020-12-31
    assert calendar.by_code("2021-W01-Q").day == date(2021, 1, 4)


@pytest.mark.parametrize(
    ("monday", "expected"),
    [
        (date(2021, 3, 29), (2021, 4)),  # Thursday 2021-04-01
        (date(2021, 2, 22), (2021, 2)),  # Thursday 2021-02-25
        (date(2020, 12, 28), (2020, 12)),  # Thursday 2020-12-31
        (date(2021, 12, 27), (2021, 12)),  # Thursday 2021-12-30
        (date(2019, 12, 30), (2020, 1)),  # Thursday 2020-01-02
    ],
)
def test_a_week_belongs_to_the_month_of_its_thursday(
    monday: date, expected: tuple[int, int]
) -> None:
    assert week_month(monday) == expected


def test_month_end_weeks_feed_the_monthly_final_of_their_thursday() -> None:
    calendar = build_calendar(2021, date(2021, 1, 4))

    assert calendar.by_code("2021-W13-F").feeds == "2021-04-M"  # week of 2021-03-29
    assert calendar.by_code("2021-W08-F").feeds == "2021-02-M"  # week of 2021-02-22
    assert calendar.by_code("2021-03-M").fed_by == (
        "2021-W09-F",
        "2021-W10-F",
        "2021-W11-F",
        "2021-W12-F",
    )


def test_event_code_for_week_rejects_non_weekly_kinds_and_non_mondays() -> None:
    with pytest.raises(ValueError, match="not a weekly event kind"):
        event_code_for_week(date(2021, 2, 1), EventKind.MONTHLY_FINAL)
    with pytest.raises(ValueError, match="Tuesday"):
        event_code_for_week(date(2021, 2, 2), EventKind.WEEKLY_FINAL)
    with pytest.raises(ValueError, match="Sunday"):
        week_month(date(2021, 2, 7))


# --- monthly final day ---------------------------------------------------------------------


def test_monthly_final_moves_to_the_day_after_a_weekly_final_on_the_1st() -> None:
    calendar = build_calendar(2021, date(2021, 1, 4))

    # January's last week ends Sunday 31 Jan; its weekly final is Monday 1 Feb.
    assert calendar.by_code("2021-W04-F").day == date(2021, 2, 1)
    assert calendar.by_code("2021-01-M").day == date(2021, 2, 2)
    # May's last weekly final is Monday 31 May: the final stays on 1 June.
    assert calendar.by_code("2021-W21-F").day == date(2021, 5, 31)
    assert calendar.by_code("2021-05-M").day == date(2021, 6, 1)
    monthly = calendar.by_code("2021-05-M")
    assert monthly.starts_at == local(2021, 6, 1, 10, 0)
    assert monthly.month == "2021-05"


def test_default_quarterly_and_annual_days() -> None:
    calendar = build_calendar(2021, date(2021, 1, 4))

    # SPEC §2's 2021 dates: the first Friday after the quarter's last monthly final
    assert calendar.by_code("2021-02-M").day == date(2021, 3, 2)
    quarterly = {code: calendar.by_code(code).day for code in ("2021-Q1-F", "2021-Q2-F")}
    quarterly |= {code: calendar.by_code(code).day for code in ("2021-Q3-F", "2021-Q4-F")}
    assert quarterly == {
        "2021-Q1-F": date(2021, 3, 5),
        "2021-Q2-F": date(2021, 6, 4),
        "2021-Q3-F": date(2021, 9, 3),
        "2021-Q4-F": date(2021, 12, 3),
    }
    # the Sunday before the last qualifier week (2021-12-27..2022-01-02)
    assert calendar.by_code("2021-A").day == date(2021, 12, 26)


# --- one station a day, inside the season ------------------------------------------------


def test_the_2021_calendar_puts_one_station_on_each_day() -> None:
    calendar = build_calendar(2021, date(2021, 1, 4))

    on_day: dict[date, list[str]] = {}
    for station in calendar.stations():
        on_day.setdefault(station.day, []).append(station.code)
    assert {day: codes for day, codes in on_day.items() if len(codes) > 1} == {}
    # The weekly finals keep their Mondays; the quarterly finals are held on free days.
    assert calendar.by_code("2021-W13-F").day == date(2021, 4, 5)
    assert calendar.by_code("2021-W26-F").day == date(2021, 7, 5)
    assert calendar.by_code("2021-Q1-F").day == date(2021, 3, 5)
    assert calendar.by_code("2021-Q2-F").day == date(2021, 6, 4)


def test_the_2021_season_closes_in_the_week_after_its_last_qualifier() -> None:
    calendar = build_calendar(2021, date(2021, 1, 4))

    # The 52nd qualifier is 2021-12-27..2022-01-02; the closing week is 2022-01-03..09.
    assert season_last_day(date(2021, 1, 4), 52) == date(2022, 1, 9)
    closing = {code: calendar.by_code(code).day for code in ("2021-W52-F", "2021-12-M")}
    closing |= {code: calendar.by_code(code).day for code in ("2021-Q4-F", "2021-A")}
    assert closing == {
        "2021-W52-F": date(2022, 1, 3),
        "2021-12-M": date(2022, 1, 4),
        "2021-Q4-F": date(2021, 12, 3),
        "2021-A": date(2021, 12, 26),
    }
    assert max(s.day for s in calendar.stations()) == date(2022, 1, 4)


def _first_monday(year: int) -> date:
    first = date(year, 1, 1)
    return first + timedelta(days=-first.weekday() % 7)


@settings(max_examples=120, deadline=None)
@given(
    year=st.integers(min_value=2020, max_value=2040), week=st.integers(min_value=0, max_value=51)
)
def test_any_season_2020_to_2040_has_one_station_a_day_inside_it(year: int, week: int) -> None:
    start = _first_monday(year) + timedelta(weeks=week)
    calendar = build_calendar(year, start)

    days = [station.day for station in calendar.stations()]
    assert len(days) == 69
    assert len(set(days)) == len(days)
    last = season_last_day(start, 52)
    assert last == start + timedelta(weeks=53, days=-1)
    assert all(start <= day <= last for day in days)
    assert calendar.by_code(f"{year:04d}-A").day.weekday() == 6  # a Sunday
    for event in calendar.events:
        for feeder in event.fed_by:
            assert calendar.by_code(feeder).ends_at < event.starts_at
    assert_consistent(calendar)


# --- 12 or 13 months: the merge rule ------------------------------------------------------


def test_every_monday_start_over_28_years_gives_12_months_and_4_quarters() -> None:
    start = date(2000, 1, 3)
    shapes: Counter[int] = Counter()
    while start < date(2028, 1, 1):
        thursday_months = {week_month(start + timedelta(weeks=i)) for i in range(52)}
        shapes[len(thursday_months)] += 1
        calendar = build_calendar(start.year, start)
        counts = kind_counts(calendar)
        assert counts[EventKind.MONTHLY_FINAL] == 12, start
        assert counts[EventKind.QUARTERLY_FINAL] == 4, start
        assert counts[EventKind.ANNUAL_FINAL] == 1, start
        assert len(calendar.stations()) == 69, start
        start += timedelta(weeks=1)
    # the raw Thursday rule really does reach 13 months, and often
    assert set(shapes) == {12, 13}
    assert shapes[13] > shapes[12]


def test_a_lone_first_week_merges_into_the_next_month() -> None:
    # Thursdays 2021-01-28 .. 2022-01-20: Jan 2021 has 1 week, Jan 2022 has 3.
    calendar = build_calendar(2021, date(2021, 1, 25))

    assert week_month(date(2021, 1, 25)) == (2021, 1)
    assert calendar.by_code("2021-W04-F").month == "2021-02"
    assert calendar.by_code("2021-02-M").fed_by[:2] == ("2021-W04-F", "2021-W05-F")
    monthly = [e.code for e in calendar.of_kind(EventKind.MONTHLY_FINAL)]
    assert monthly[0] == "2021-02-M"
    assert monthly[-1] == "2022-01-M"
    assert "2021-01-M" not in monthly
    assert [e.code for e in calendar.of_kind(EventKind.QUARTERLY_FINAL)] == [
        "2021-Q1-F",
        "2021-Q2-F",
        "2021-Q3-F",
        "2021-Q4-F",
    ]
    assert calendar.by_code("2021-Q1-F").fed_by == ("2021-02-M",)  # played 2021-03-01
    assert calendar.carried == ("2021-12-M", "2022-01-M")
    assert_consistent(calendar)


def test_a_lone_last_week_merges_into_the_month_before() -> None:
    # Thursdays 2021-01-14 .. 2022-01-06: Jan 2021 has 3 weeks, Jan 2022 has 1.
    calendar = build_calendar(2021, date(2021, 1, 11))

    last_weekly = calendar.by_code("2021-W52-F")
    assert week_month(date(2022, 1, 3)) == (2022, 1)
    assert calendar.by_code("2022-W01-F").month == "2021-12"
    assert calendar.by_code("2021-12-M").fed_by[-1] == "2022-W01-F"
    assert last_weekly.feeds == "2021-12-M"
    # the 1st of January is before the last weekly final: the monthly final follows it
    assert calendar.by_code("2022-W01-F").day == date(2022, 1, 10)
    assert calendar.by_code("2021-12-M").day == date(2022, 1, 11)
    monthly = [e.code for e in calendar.of_kind(EventKind.MONTHLY_FINAL)]
    assert monthly[0] == "2021-01-M"
    assert monthly[-1] == "2021-12-M"
    assert_consistent(calendar)


def test_equal_edge_months_merge_the_last_one_back() -> None:
    # Thursdays 2021-01-21 .. 2022-01-13: two weeks in each January.
    calendar = build_calendar(2021, date(2021, 1, 18))

    monthly = [e.code for e in calendar.of_kind(EventKind.MONTHLY_FINAL)]
    assert monthly[0] == "2021-01-M"
    assert monthly[-1] == "2021-12-M"
    assert calendar.by_code("2021-01-M").fed_by == ("2021-W03-F", "2021-W04-F")
    assert calendar.by_code("2021-12-M").fed_by[-2:] == ("2022-W01-F", "2022-W02-F")
    assert_consistent(calendar)


@settings(max_examples=60, deadline=None)
@given(
    offset=st.integers(min_value=0, max_value=5200),
    weeks=st.integers(min_value=1, max_value=120),
)
def test_any_season_is_consistent(offset: int, weeks: int) -> None:
    start = date(1990, 1, 1) + timedelta(weeks=offset)  # 1990-01-01 is a Monday
    calendar = build_calendar(start.year, start, weeks=weeks)

    counts = kind_counts(calendar)
    assert counts[EventKind.WEEKLY_QUALIFIER] == weeks
    assert counts[EventKind.WEEKLY_FINAL] == weeks
    assert counts[EventKind.MONTHLY_FINAL] <= -(-weeks * 12 // 52)
    assert counts[EventKind.ANNUAL_FINAL] == 1
    assert_consistent(calendar)
    if weeks == 52:
        assert len(calendar.stations()) == 69


# --- windows and accepts() ----------------------------------------------------------------


def test_qualifier_accepts_games_only_in_the_daily_hours() -> None:
    qualifier = build_calendar(2021, date(2021, 1, 4)).by_code("2021-W05-Q")

    assert qualifier.daily_hours == DAILY_HOURS
    assert not qualifier.accepts(local(2021, 2, 3, 9, 59))
    assert qualifier.accepts(local(2021, 2, 3, 10, 0))
    assert qualifier.accepts(local(2021, 2, 3, 23, 59))
    assert qualifier.accepts(local(2021, 2, 3, 23, 59, 59, 999999))
    assert not qualifier.accepts(local(2021, 2, 4, 0, 30))  # next day, before opening
    assert not qualifier.accepts(local(2021, 2, 3, 3, 0))  # Wednesday 03:00
    assert qualifier.accepts(local(2021, 2, 7, 23, 59))  # Sunday, last minute
    assert not qualifier.accepts(local(2021, 2, 8, 10, 0))  # the final's day
    assert not qualifier.accepts(local(2021, 1, 31, 23, 0))  # the week before


def test_final_accepts_its_one_day() -> None:
    final = build_calendar(2021, date(2021, 1, 4)).by_code("2021-W05-F")

    assert final.daily_hours is None
    assert not final.accepts(local(2021, 2, 8, 9, 59))
    assert final.accepts(local(2021, 2, 8, 10, 0))
    assert final.accepts(local(2021, 2, 8, 23, 59))
    assert not final.accepts(local(2021, 2, 9, 0, 30))


def test_accepts_compares_instants_in_the_tour_zone() -> None:
    qualifier = build_calendar(2021, date(2021, 1, 4)).by_code("2021-W05-Q")

    assert qualifier.accepts(datetime(2021, 2, 3, 2, 0, tzinfo=UTC))  # 10:00 in Shanghai
    assert not qualifier.accepts(datetime(2021, 2, 3, 1, 59, tzinfo=UTC))  # 09:59
    assert not qualifier.accepts(datetime(2021, 2, 3, 16, 30, tzinfo=UTC))  # 00:30 next day
    with pytest.raises(ValueError, match="naive"):
        qualifier.accepts(datetime(2021, 2, 3, 12, 0))


def test_another_time_zone() -> None:
    calendar = build_calendar(2021, date(2021, 1, 4), weeks=4, tz="Europe/Berlin")

    event = calendar.by_code("2021-W01-Q")
    assert event.starts_at == datetime(2021, 1, 4, 10, 0, tzinfo=ZoneInfo("Europe/Berlin"))
    assert calendar.tz == "Europe/Berlin"


# --- organiser-given dates, cities, validation ---------------------------------------------


def test_organiser_given_quarterly_and_annual_dates() -> None:
    quarterly = [date(2021, 3, 6), date(2021, 6, 5), date(2021, 9, 4), date(2021, 12, 4)]
    calendar = build_calendar(
        2021, date(2021, 1, 4), quarterly_dates=quarterly, annual_date=date(2021, 12, 25)
    )

    assert [e.day for e in calendar.of_kind(EventKind.QUARTERLY_FINAL)] == quarterly
    assert calendar.by_code("2021-A").day == date(2021, 12, 25)
    assert_consistent(calendar)


def test_quarterly_date_not_after_its_last_monthly_final_is_rejected() -> None:
    quarterly = [date(2021, 3, 1), date(2021, 6, 5), date(2021, 9, 4), date(2021, 12, 4)]
    with pytest.raises(ValueError, match=r"2021-Q1-F on 2021-03-01 .*2021-02-M \(2021-03-02\)"):
        build_calendar(2021, date(2021, 1, 4), quarterly_dates=quarterly)
    on_the_day = [date(2021, 3, 2), *quarterly[1:]]
    with pytest.raises(ValueError, match="2021-Q1-F"):
        build_calendar(2021, date(2021, 1, 4), quarterly_dates=on_the_day)


def test_quarterly_dates_must_match_the_quarters_and_increase() -> None:
    with pytest.raises(ValueError, match="3 dates; the season has 4"):
        build_calendar(
            2021,
            date(2021, 1, 4),
            quarterly_dates=[date(2021, 3, 6), date(2021, 6, 5), date(2021, 9, 4)],
        )
    with pytest.raises(ValueError, match="2021-Q3-F .*previous"):
        build_calendar(
            2021,
            date(2021, 1, 4),
            quarterly_dates=[
                date(2021, 3, 6),
                date(2021, 12, 2),
                date(2021, 9, 4),
                date(2021, 12, 4),
            ],
        )


def test_annual_date_must_follow_the_last_quarterly_final() -> None:
    last_quarterly = build_calendar(2021, date(2021, 1, 4)).by_code("2021-Q4-F").day
    with pytest.raises(ValueError, match="2021-A"):
        build_calendar(2021, date(2021, 1, 4), annual_date=last_quarterly)


@pytest.mark.parametrize(
    ("start", "weekday"),
    [(date(2021, 1, 1), "Friday"), (date(2021, 1, 3), "Sunday"), (date(2020, 6, 2), "Tuesday")],
)
def test_a_non_monday_start_is_rejected(start: date, weekday: str) -> None:
    with pytest.raises(ValueError, match=f"{start.isoformat()} is a {weekday}, not a Monday"):
        build_calendar(start.year, start)


def test_bad_weeks_and_cities_are_rejected() -> None:
    with pytest.raises(ValueError, match="weeks"):
        build_calendar(2021, date(2021, 1, 4), weeks=0)
    with pytest.raises(ValueError, match="cities"):
        build_calendar(2021, date(2021, 1, 4), cities=())


def test_a_short_city_list_cycles() -> None:
    calendar = build_calendar(2021, date(2021, 1, 4), cities=("甲", "乙", "丙"))

    cities = [s.city for s in calendar.stations()]
    assert cities[:7] == ["甲", "乙", "丙", "甲", "乙", "丙", "甲"]
    assert len(cities) == 69
    assert all(e.city is None and e.station is None for e in calendar.of_kind("weekly_qualifier"))


def test_an_organiser_date_on_a_station_day_is_refused() -> None:
    base = build_calendar(2021, date(2021, 1, 4))
    monday = base.by_code("2021-W14-F").day
    assert monday == date(2021, 4, 12)
    quarterly = [monday, *(e.day for e in base.of_kind(EventKind.QUARTERLY_FINAL)[1:])]

    with pytest.raises(ValueError, match=r"2021-Q1-F on 2021-04-12 falls on the day of 2021-W14-F"):
        build_calendar(2021, date(2021, 1, 4), quarterly_dates=quarterly)
    busy = base.by_code("2021-12-M").day
    with pytest.raises(ValueError, match=r"2021-A on 2022-01-04 falls on the day of 2021-12-M"):
        build_calendar(2021, date(2021, 1, 4), annual_date=busy)


def test_quarterly_finals_are_the_first_friday_after_their_last_monthly_final() -> None:
    for offset in range(3 * 52):
        start = date(2021, 1, 4) + timedelta(weeks=offset)
        calendar = build_calendar(start.year, start)
        weekly_days = {e.day for e in calendar.of_kind(EventKind.WEEKLY_FINAL)}
        for quarterly in calendar.of_kind(EventKind.QUARTERLY_FINAL):
            assert quarterly.day not in weekly_days
            last_monthly = calendar.by_code(quarterly.fed_by[-1]).day
            assert quarterly.day.weekday() == 4, (start, quarterly.code)
            assert 1 <= (quarterly.day - last_monthly).days <= 7, (start, quarterly.code)


def test_by_code_names_a_missing_event() -> None:
    with pytest.raises(KeyError, match="2021-W60-Q"):
        build_calendar(2021, date(2021, 1, 4)).by_code("2021-W60-Q")


def test_a_short_season_folds_into_few_months_and_one_quarter() -> None:
    # 4 weeks, Thursdays 2021-01-28 .. 2021-02-18: at most ceil(4 * 12 / 52) = 1 month.
    calendar = build_calendar(2021, date(2021, 1, 25), weeks=4)

    assert [e.code for e in calendar.of_kind(EventKind.MONTHLY_FINAL)] == ["2021-02-M"]
    assert [e.code for e in calendar.of_kind(EventKind.QUARTERLY_FINAL)] == ["2021-Q1-F"]
    assert len(calendar.stations()) == 4 + 1 + 1 + 1
    assert_consistent(calendar)


def test_a_long_season_keeps_a_full_trailing_quarter() -> None:
    # 60 weeks from 2021-01-04: 14 months; the last three monthly finals are played in
    # 2022's first quarter, a full quarter of their own (at most ceil(14 / 3) = 5).
    calendar = build_calendar(2021, date(2021, 1, 4), weeks=60)

    quarterly = calendar.of_kind(EventKind.QUARTERLY_FINAL)
    assert [len(q.fed_by) for q in quarterly] == [2, 3, 3, 3, 3]
    assert quarterly[-1].code == "2022-Q1-F"
    assert calendar.carried == ()
    assert_consistent(calendar)
