"""Tests for the detectors' observation records and the hour bucket (SPEC §7 data)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.domain.clock import TOUR_TZ
from integrity.domain.data import TableObs, hour_bucket


def test_hour_bucket_counts_shanghai_hours() -> None:
    assert hour_bucket(datetime(1970, 1, 1, tzinfo=TOUR_TZ)) == 0
    moment = datetime.fromisoformat("2021-02-01T10:00:03+08:00")
    assert hour_bucket(moment) % 24 == 10
    assert hour_bucket(moment) == (18659 * 24) + 10  # 2021-02-01 is day 18659
    # The same instant given in UTC lands in the same bucket.
    assert hour_bucket(moment.astimezone(UTC)) == hour_bucket(moment)
    assert hour_bucket(moment + timedelta(minutes=60)) == hour_bucket(moment) + 1


def test_hour_bucket_needs_an_aware_datetime() -> None:
    with pytest.raises(ValueError, match="aware"):
        hour_bucket(datetime(2021, 2, 1, 10))  # noqa: DTZ001


def test_table_obs_checks_its_shape() -> None:
    TableObs("g", 1, ("a", "b"), (0, 5), (5, -5), (0,))
    with pytest.raises(ValueError, match="distinct players"):
        TableObs("g", 1, ("a", "a"), (0, 5), (5, -5), (0,))
    with pytest.raises(ValueError, match="one entry per seat"):
        TableObs("g", 1, ("a", "b"), (0,), (5, -5), (0,))
    with pytest.raises(ValueError, match="bad winner seats"):
        TableObs("g", 1, ("a", "b"), (0, 5), (5, -5), (2,))
    with pytest.raises(ValueError, match="bad winner seats"):
        TableObs("g", 1, ("a", "b"), (0, 5), (5, -5), ())
