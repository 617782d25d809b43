"""Games for the rating tests, written through the ORM (no ingest): each seat's score is
given directly, since the rating reads only scores, order and the voided flags."""

from collections.abc import Callable, Sequence
from datetime import date, datetime, timedelta
from itertools import count
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from accounts.models import Player
from tournaments.models import Event, Game, Season, Seat

SHANGHAI = ZoneInfo("Asia/Shanghai")
T0 = datetime(2021, 2, 1, 10, 0, tzinfo=SHANGHAI)

GameMaker = Callable[..., Game]


@pytest.fixture
def event(db: Any) -> Event:
    season = Season.objects.create(year=2021, name="2021", starts_on=date(2021, 1, 4))
    return Event.objects.create(
        season=season,
        code="2021-W05-Q",
        kind="weekly_qualifier",
        starts_at=T0,
        ends_at=T0 + timedelta(days=7),
        open_entry=True,
    )


@pytest.fixture
def players(db: Any) -> list[Player]:
    return Player.objects.bulk_create(
        [Player(external_id=f"p{i:07d}", name=f"玩家{i}", province="江苏") for i in range(12)]
    )


@pytest.fixture
def make_game(event: Event) -> GameMaker:
    """``make_game([(player, score), …], minute=…)``: a game ending ``minute`` minutes after
    T0; ``voided_seats`` lists seat numbers whose seat is voided; ``pk`` forces the id."""
    ids = count(1)

    def make(
        seats: Sequence[tuple[Player, int]],
        *,
        minute: int,
        voided: bool = False,
        voided_seats: Sequence[int] = (),
        pk: int | None = None,
        record_id: str | None = None,
    ) -> Game:
        ended_at = T0 + timedelta(minutes=minute)
        game = Game.objects.create(
            pk=pk,
            record_id=record_id or f"g-{next(ids):05d}",
            digest="0" * 64,
            event=event,
            mode="singles",
            started_at=ended_at - timedelta(minutes=3),
            ended_at=ended_at,
            ended_by="out",
            seat_count=len(seats),
            voided=voided,
        )
        Seat.objects.bulk_create(
            [
                Seat(
                    game=game,
                    seat=number,
                    player=player,
                    hand="",
                    hand_points=max(-score, 0),
                    score=score,
                    event=event,
                    ended_at=ended_at,
                    voided=voided or number in voided_seats,
                )
                for number, (player, score) in enumerate(seats)
            ]
        )
        return game

    return make
