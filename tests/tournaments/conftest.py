"""Fixtures for tournament tests: a season with an open weekly qualifier, made through the ORM,
and ``record``, a builder of valid game records v1 (SPEC §9) to vary one field at a time."""

from collections.abc import Callable, Sequence
from datetime import date, datetime, time
from typing import Any

import pytest

from accounts.models import Player, PlayerChange
from core.domain.clock import TOUR_TZ
from tournaments.models import Event, Game, Season, Seat, Standing

EVENT_CODE = "2021-W05-Q"
PLAYERS = ("p0000001", "p0000002", "p0000003", "p0000004")
PROVINCES = ("江苏", "浙江", "广东", "北京")
HANDS: tuple[list[str], ...] = ([], ["R5"], ["G7", "GS"], ["WD4"])  # points 0, 5, 27, 50

RecordBuilder = Callable[..., dict[str, Any]]


@pytest.fixture
def season(db: Any) -> Season:
    return Season.objects.create(year=2021, name="2021", starts_on=date(2021, 1, 4))


@pytest.fixture
def event(season: Season) -> Event:
    """周预赛 2021-W05-Q: Monday 2021-02-01 10:00 to Sunday 23:59:59.999999, daily 10:00-23:59."""
    return Event.objects.create(
        season=season,
        code=EVENT_CODE,
        kind="weekly_qualifier",
        starts_at=datetime(2021, 2, 1, 10, 0, tzinfo=TOUR_TZ),
        ends_at=datetime(2021, 2, 7, 23, 59, 59, 999999, tzinfo=TOUR_TZ),
        daily_opens=time(10, 0),
        daily_closes=time(23, 59, 59, 999999),
        open_entry=True,
    )


def make_record(
    record_id: str = "g-0000001",
    *,
    event: str = EVENT_CODE,
    mode: str = "singles",
    started_at: str = "2021-02-01T10:00:03+08:00",
    ended_at: str = "2021-02-01T10:03:01+08:00",
    ended_by: str = "out",
    players: Sequence[str] = PLAYERS,
    names: Sequence[str] | None = None,
    provinces: Sequence[str] = PROVINCES,
    hands: Sequence[list[str]] = HANDS,
    teams: Sequence[int | None] | None = None,
    sessions: bool = True,
    log: Any = None,
) -> dict[str, Any]:
    """A valid singles record of four seats (hand points 0, 5, 27, 50) unless told otherwise."""
    seats = []
    for i, (player, hand) in enumerate(zip(players, hands, strict=True)):
        seat: dict[str, Any] = {
            "player": {
                "id": player,
                "name": names[i] if names else f"玩家{player[-2:]}",
                "province": provinces[i % len(provinces)],
            },
            "team": None if teams is None else teams[i],
            "hand": list(hand),
        }
        if sessions:
            seat["session"] = {
                "ip": f"203.0.113.{i + 1}",
                "device": f"d-{i:06d}",
                "client": "1.4.2",
            }
        seats.append(seat)
    return {
        "id": record_id,
        "event": event,
        "mode": mode,
        "started_at": started_at,
        "ended_at": ended_at,
        "ended_by": ended_by,
        "seats": seats,
        "log": log,
    }


@pytest.fixture
def record(event: Event) -> RecordBuilder:
    """``record(id, **changes)`` builds a valid record of the ``event`` fixture."""
    return make_record


@pytest.fixture
def db_counts(db: Any) -> Callable[[], dict[str, int]]:
    """``db_counts()``: the row counts a refused ingest must leave unchanged."""

    def counts() -> dict[str, int]:
        return {
            model.__name__: model.objects.count()
            for model in (Game, Seat, Standing, Player, PlayerChange)
        }

    return counts
