"""Test fixtures for tournaments: seasons, events, players and games written through the ORM,
with the standings kept by the real ``standings_apply`` (not through ingest, so these tests
do not depend on the record format)."""

from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta
from itertools import count

from django.db import transaction

from accounts.models import Player
from core.domain.clock import TOUR_TZ
from tournaments.domain.cards import hand_points
from tournaments.domain.scoring import score_game
from tournaments.models import Entry, Event, Game, Season, Seat
from tournaments.services.standings import ScoreRow, standings_apply

_ids = count(1)


def local(y: int, m: int, d: int, hh: int = 12, mm: int = 0) -> datetime:
    return datetime(y, m, d, hh, mm, tzinfo=TOUR_TZ)


def make_season(year: int = 2021, **fields: object) -> Season:
    fields.setdefault("starts_on", date(year, 1, 4))
    return Season.objects.create(year=year, name=f"{year}", **fields)


def make_event(
    season: Season,
    code: str = "2021-W05-Q",
    kind: str = "weekly_qualifier",
    *,
    starts_at: datetime | None = None,
    ends_at: datetime | None = None,
    day: date | None = None,
    **fields: object,
) -> Event:
    """An event from ``starts_at`` (2021-02-01 10:00) to ``ends_at`` (a week on), or held on
    one tour ``day`` from 10:00 to 23:00."""
    if day is not None:
        starts_at = local(day.year, day.month, day.day, 10)
        ends_at = local(day.year, day.month, day.day, 23)
    starts_at = starts_at or local(2021, 2, 1, 10)
    ends_at = ends_at or starts_at + timedelta(days=7)
    fields.setdefault("open_entry", kind == "weekly_qualifier")
    return Event.objects.create(
        season=season, code=code, kind=kind, starts_at=starts_at, ends_at=ends_at, **fields
    )


#: Quotas of the finals tests' seasons: the monthly final sends its champion on, the
#: quarterly one per province and one more.
QUOTAS: dict[str, dict[str, int]] = {
    "weekly_qualifier": {"national": 0, "per_province": 2},
    "weekly_final": {"national": 3, "per_province": 1},
    "monthly_final": {"national": 1, "per_province": 0},
    "quarterly_final": {"national": 1, "per_province": 1},
    "annual_final": {"national": 0, "per_province": 0},
}
#: A moment after the monthly final 2021-02-M has ended (its finalisation's ``now``).
AFTER = local(2021, 3, 1, 12)


def monthly_and_quarterly() -> tuple[Event, Event]:
    """A season with :data:`QUOTAS`: the monthly final 2021-02-M (2021-02-16, its champion
    earns ``monthly_champion``) feeding the quarterly final 2021-Q1-F (2021-03-05)."""
    season = make_season(quotas=QUOTAS)
    quarterly = make_event(
        season,
        "2021-Q1-F",
        "quarterly_final",
        day=date(2021, 3, 5),
    )
    monthly = make_event(
        season,
        "2021-02-M",
        "monthly_final",
        day=date(2021, 2, 16),
        feeds=quarterly,
        champion_achievement="monthly_champion",
    )
    return monthly, quarterly


def make_players(n: int, provinces: Sequence[str] = ("江苏",), prefix: str = "p") -> list[Player]:
    """``n`` players ``p0000001``…, provinces assigned round-robin."""
    start = next(_ids) * 100_000
    return Player.objects.bulk_create(
        [
            Player(
                external_id=f"{prefix}{start + i:07d}",
                name=f"玩家{start + i}",
                province=provinces[i % len(provinces)],
            )
            for i in range(n)
        ]
    )


def score_games(
    event: Event,
    scores: Mapping[Player, Sequence[int]],
    *,
    start: datetime | None = None,
) -> list[Game]:
    """Give each player these game scores in ``event``, one minute apart from ``start``."""
    moment = start or event.starts_at + timedelta(minutes=1)
    timed: dict[Player, list[tuple[int, datetime]]] = {}
    for player, player_scores in scores.items():
        timed[player] = []
        for score in player_scores:
            moment += timedelta(minutes=1)
            timed[player].append((score, moment))
    return timed_games(event, timed)


def timed_games(
    event: Event, scores: Mapping[Player, Sequence[tuple[int, datetime]]]
) -> list[Game]:
    """Give each player these (score, ended_at) games in ``event``.

    A shortcut for standings tests: each score is its own game holding only that player's
    seat (the other seats do not matter to the player's standing)."""
    games, seats, rows = [], [], []
    for player, player_scores in scores.items():
        for score, moment in player_scores:
            game = Game(
                record_id=f"g-{next(_ids)}",
                digest="0" * 64,
                event=event,
                mode="singles",
                started_at=moment - timedelta(minutes=3),
                ended_at=moment,
                ended_by="time",
                seat_count=4,
            )
            games.append(game)
            seats.append(
                Seat(
                    game=game,
                    seat=0,
                    player=player,
                    hand="R5",
                    hand_points=5,
                    score=score,
                    event=event,
                    ended_at=moment,
                )
            )
            rows.append(
                ScoreRow(event.pk, player.pk, player.external_id, player.province, score, moment)
            )
    with transaction.atomic():
        Game.objects.bulk_create(games)
        for seat in seats:
            seat.game_id = seat.game.pk
        Seat.objects.bulk_create(seats)
        standings_apply(scores=sorted(rows, key=lambda row: row.ended_at))
    return games


def play(
    event: Event,
    hands: Sequence[tuple[Player, Sequence[str]]],
    *,
    ended_at: datetime,
    scoring: str = "tour_singles",
) -> Game:
    """One real game: the players in seat order with their hands left, scored by the domain."""
    points = [hand_points(hand) for _, hand in hands]
    scores = score_game(scoring, points)
    with transaction.atomic():
        return _play(event, hands, points, scores, ended_at)


def _play(
    event: Event,
    hands: Sequence[tuple[Player, Sequence[str]]],
    points: list[int],
    scores: list[int],
    ended_at: datetime,
) -> Game:
    game = Game.objects.create(
        record_id=f"g-{next(_ids)}",
        digest="0" * 64,
        event=event,
        mode="singles",
        started_at=ended_at - timedelta(minutes=3),
        ended_at=ended_at,
        ended_by="out" if not all(hand for _, hand in hands) else "time",
        seat_count=len(hands),
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
            )
            for i, ((player, hand), point, score) in enumerate(
                zip(hands, points, scores, strict=True)
            )
        ]
    )
    standings_apply(
        scores=[
            ScoreRow(event.pk, p.pk, p.external_id, p.province, score, ended_at)
            for (p, _), score in zip(hands, scores, strict=True)
        ]
    )
    return game


#: A moment after every window the factories make (seated events default to early 2021).
AFTER_SEATED = local(2021, 6, 1, 12)


def make_seated_event(
    n: int, code: str = "2021-NC", season: Season | None = None, kind: str = "championship"
) -> tuple[Event, list[Player]]:
    """A seated event (a live final) with ``n`` invited entrants."""
    season = season or make_season()
    event = make_event(season, code, kind, format="seated", open_entry=False)
    players = make_players(n, ("江苏", "浙江", "广东", "上海"))
    Entry.objects.bulk_create([Entry(event=event, player=p, basis="invited") for p in players])
    return event, players
