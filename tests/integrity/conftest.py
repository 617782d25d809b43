"""Fixtures for integrity tests: a second reviewer, games with sessions written through the
ORM (standings kept by the real ``standings_apply``), and simulated games ingested for real."""

from collections.abc import Sequence
from datetime import date, datetime, time, timedelta
from itertools import count
from typing import Any, TypedDict

import pytest
from django.contrib.auth.models import Group
from django.db import transaction
from django.db.models import Count

from accounts.models import Player, User
from accounts.roles import REVIEWER
from core.domain.clock import TOUR_TZ
from flows.ingest import games_ingest
from integrity.simulation import Season, simulate_season
from tournaments.domain.cards import hand_points
from tournaments.domain.scoring import tour_singles
from tournaments.models import Event, Game, Seat
from tournaments.models import Season as TourSeason
from tournaments.services.standings import ScoreRow, standings_apply

_ids = count(1)

#: (player, hand, ip, device) for one seat.
SeatSpec = tuple[Player, Sequence[str], str, str]


@pytest.fixture
def reviewer2(roles: None) -> User:
    user = User.objects.create_user(username="rev2", password="pw-for-tests-only")
    user.groups.add(Group.objects.get(name=REVIEWER))
    return user


def play(event: Event, seats: Sequence[SeatSpec], *, ended_at: datetime) -> Game:
    """One singles game with sessions: the players in seat order, their hands, IP, device."""
    points = [hand_points(hand) for _, hand, _, _ in seats]
    scores = tour_singles(points)
    with transaction.atomic():
        game = Game.objects.create(
            record_id=f"ig-{next(_ids)}",
            digest="0" * 64,
            event=event,
            mode="singles",
            started_at=ended_at - timedelta(minutes=3),
            ended_at=ended_at,
            ended_by="out" if min(points) == 0 else "time",
            seat_count=len(seats),
        )
        Seat.objects.bulk_create(
            [
                Seat(
                    game=game,
                    seat=i,
                    player=player,
                    hand=" ".join(hand),
                    hand_points=point,
                    score=score,
                    event=event,
                    ended_at=ended_at,
                    ip=ip,
                    device=device,
                )
                for i, ((player, hand, ip, device), point, score) in enumerate(
                    zip(seats, points, scores, strict=True)
                )
            ]
        )
        standings_apply(
            scores=[
                ScoreRow(event.pk, p.pk, p.external_id, p.province, score, ended_at)
                for (p, _, _, _), score in zip(seats, scores, strict=True)
            ]
        )
    return game


def weekly_qualifier(season: TourSeason, monday: date, code: str) -> Event:
    """An open 周预赛 of the week from ``monday``, daily 10:00-23:59."""
    return Event.objects.create(
        season=season,
        code=code,
        kind="weekly_qualifier",
        starts_at=datetime.combine(monday, time(10), TOUR_TZ),
        ends_at=datetime.combine(monday + timedelta(days=6), time(23, 59, 59, 999999), TOUR_TZ),
        daily_opens=time(10),
        daily_closes=time(23, 59, 59, 999999),
        open_entry=True,
    )


def event_window(event: Event) -> dict[str, Any]:
    """The event audit's window arguments."""
    return {"window_start": event.starts_at, "window_end": event.ends_at, "event": event}


def busiest(event: Event) -> str:
    """The external id of the player with the most seats in ``event`` (ties: the first)."""
    row = (
        Seat.objects.filter(event=event)
        .values("player__external_id")
        .annotate(games=Count("pk"))
        .order_by("-games", "player__external_id")
        .first()
    )
    assert row is not None
    player: str = row["player__external_id"]
    return player


class SeasonSize(TypedDict):
    """The size arguments of ``simulate_season``."""

    players: int
    weeks: int
    cheaters: float
    seed: int


#: The small simulated week of :func:`simulated`: one farm of three, one pair, one booster.
SMALL_WEEK: SeasonSize = {"players": 160, "weeks": 1, "cheaters": 0.04, "seed": 7}


@pytest.fixture
def week(db: Any) -> Event:
    """Season 2021 and its first weekly qualifier 2021-W01-Q (2021-01-04), no games."""
    tour = TourSeason.objects.create(year=2021, name="2021", starts_on=date(2021, 1, 4))
    return weekly_qualifier(tour, date(2021, 1, 4), "2021-W01-Q")


@pytest.fixture
def simulated(week: Event) -> tuple[Season, Event]:
    """The small simulated week :data:`SMALL_WEEK` ingested for real into ``week``."""
    season = simulate_season(**SMALL_WEEK)
    event = week
    records = list(season.records)
    report = games_ingest(records=records, source="test")
    assert report.rejected == []
    assert report.conflicts == []
    return season, event
