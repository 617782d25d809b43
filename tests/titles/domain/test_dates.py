"""Calendar arithmetic for title validity: PRC Civil Code Arts. 201–203 (SPEC §6)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.domain.clock import tour_day
from titles.domain.dates import add_years, month_end, term_valid_until

tour_dates = st.dates(min_value=date(1990, 1, 1), max_value=date(2100, 12, 31))
years = st.integers(min_value=0, max_value=50)


# --- add_years -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("day", "n", "expected"),
    [
        (date(2021, 6, 1), 1, date(2022, 6, 1)),
        (date(2021, 6, 1), 3, date(2024, 6, 1)),
        (date(2021, 12, 31), 1, date(2022, 12, 31)),
        (date(2021, 6, 1), 0, date(2021, 6, 1)),
        (date(2020, 2, 28), 1, date(2021, 2, 28)),
        (date(2019, 3, 1), 1, date(2020, 3, 1)),
        # 29 February: no corresponding date in a non-leap year -> last day of February.
        (date(2020, 2, 29), 1, date(2021, 2, 28)),
        (date(2020, 2, 29), 2, date(2022, 2, 28)),
        (date(2020, 2, 29), 3, date(2023, 2, 28)),
        (date(2020, 2, 29), 4, date(2024, 2, 29)),
        (date(2020, 2, 29), 8, date(2028, 2, 29)),
        # 2100 is not a leap year.
        (date(2096, 2, 29), 4, date(2100, 2, 28)),
        (date(2024, 2, 29), -1, date(2023, 2, 28)),
    ],
)
def test_add_years(day: date, n: int, expected: date) -> None:
    assert add_years(day, n) == expected


def test_add_years_is_computed_from_the_start_not_chained() -> None:
    chained = date(2020, 2, 29)
    for _ in range(4):
        chained = add_years(chained, 1)

    assert chained == date(2024, 2, 28)
    assert add_years(date(2020, 2, 29), 4) == date(2024, 2, 29)


def test_add_years_refuses_a_datetime() -> None:
    with pytest.raises(TypeError):
        add_years(datetime(2021, 1, 1, tzinfo=UTC), 1)


def test_add_years_out_of_range_raises() -> None:
    with pytest.raises(ValueError, match="year"):
        add_years(date(9999, 1, 1), 1)


@given(day=tour_dates, n=years)
def test_add_years_keeps_month_and_day_or_falls_back_to_28_february(day: date, n: int) -> None:
    result = add_years(day, n)

    assert result.year == day.year + n
    assert result.month == day.month
    if (day.month, day.day) == (2, 29) and result.day != 29:
        assert result.day == 28
        assert (result + timedelta(days=1)).month == 3
    else:
        assert result.day == day.day


@given(first=tour_dates, second=tour_dates, n=years)
def test_add_years_is_monotone_in_the_day(first: date, second: date, n: int) -> None:
    low, high = sorted((first, second))

    assert add_years(low, n) <= add_years(high, n)


@given(day=tour_dates, a=years, b=years)
def test_chaining_never_goes_past_the_direct_result(day: date, a: int, b: int) -> None:
    assert add_years(add_years(day, a), b) <= add_years(day, a + b)


# --- term_valid_until -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "k", "expected"),
    [
        (date(2021, 1, 10), 1, date(2022, 1, 10)),
        (date(2021, 1, 10), 3, date(2024, 1, 10)),
        (date(2020, 2, 29), 1, date(2021, 2, 28)),
        (date(2020, 2, 29), 4, date(2024, 2, 29)),
    ],
)
def test_term_valid_until(start: date, k: int, expected: date) -> None:
    assert term_valid_until(start, k) == expected


@pytest.mark.parametrize("k", [0, -1])
def test_term_valid_until_needs_a_qualification(k: int) -> None:
    with pytest.raises(ValueError, match="at least one qualification"):
        term_valid_until(date(2021, 1, 10), k)


# --- month_end and tour_day ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("year", "month", "expected"),
    [
        (2021, 1, date(2021, 1, 31)),
        (2021, 2, date(2021, 2, 28)),
        (2020, 2, date(2020, 2, 29)),
        (2100, 2, date(2100, 2, 28)),
        (2021, 4, date(2021, 4, 30)),
        (2021, 12, date(2021, 12, 31)),
    ],
)
def test_month_end(year: int, month: int, expected: date) -> None:
    assert month_end(year, month) == expected


def test_month_end_refuses_a_bad_month() -> None:
    with pytest.raises(ValueError, match="month"):
        month_end(2021, 13)


def test_tour_day_is_the_day_in_shanghai() -> None:
    # 2021-06-30 16:30 UTC is 2021-07-01 00:30 in Asia/Shanghai.
    assert tour_day(datetime(2021, 6, 30, 16, 30, tzinfo=UTC)) == date(2021, 7, 1)
    assert tour_day(datetime(2021, 6, 30, 15, 59, tzinfo=UTC)) == date(2021, 6, 30)


def test_tour_day_refuses_a_naive_datetime() -> None:
    with pytest.raises(ValueError, match="aware"):
        tour_day(datetime(2021, 6, 30, 16, 30))
