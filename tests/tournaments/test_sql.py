"""The SQL accelerators of ``tournaments.sql`` against the pure rules of
``tournaments.domain.leaderboard`` (SPEC §4, §5), on seeded random cases.

* The standings merge (through ``standings_apply`` and ``standings_apply_games``): random
  batches of games, with equal scores, equal end times, late games and voided seats, leave
  every standing exactly as ``add_game`` (falling back to ``standing_from_scores`` for a
  late game) computes it; each batch bumps each of its events' leaderboard version once.
* The rank windows: random boards under random tie-break orders give, for every eligible
  row, the national and province ranks of the domain's ``rank`` (``leaderboard_ranks``),
  and the top rows of random quotas (``leaderboard_top``) are exactly the domain's."""

import random
from collections import defaultdict
from datetime import datetime, timedelta
from itertools import count

import pytest
from django.db import transaction

from accounts.models import Player
from tests.tournaments.factories import (
    local,
    make_event,
    make_players,
    make_season,
    timed_games,
)
from tournaments.domain.leaderboard import (
    TIEBREAKS,
    OutOfOrderGameError,
    add_game,
    rank,
    standing_from_scores,
)
from tournaments.domain.leaderboard import Standing as Kept
from tournaments.models import Event, Game, Seat, Standing
from tournaments.selectors.leaderboard import leaderboard_ranks, leaderboard_top
from tournaments.services.standings import (
    ScoreRow,
    standings_apply,
    standings_apply_games,
    standings_recompute,
)

pytestmark = [pytest.mark.django_db]

Key = tuple[int, int]  # (event pk, player pk)
_ids = count(1)


class Model:
    """The domain's view: every player's (seat pk, score, ended_at) games and standing."""

    def __init__(self, best_n: int, players: list[Player]) -> None:
        self.best_n = best_n
        self.keys = {player.pk: player.external_id for player in players}
        self.games: dict[Key, list[tuple[int, int, datetime]]] = defaultdict(list)
        self.voided: set[int] = set()
        self.standings: dict[Key, Kept] = {}

    def valid(self, key: Key) -> list[tuple[int, datetime]]:
        return [(s, t) for pk, s, t in self.games[key] if pk not in self.voided]

    def apply(self, rows: list[tuple[Key, int, int, datetime]]) -> None:
        """Fold a batch as the domain does: in end-time order, late -> from scratch."""
        per_key: dict[Key, list[tuple[int, datetime]]] = defaultdict(list)
        for key, pk, score, ended in rows:
            self.games[key].append((pk, score, ended))
            per_key[key].append((score, ended))
        for key, batch in per_key.items():
            player = self.keys[key[1]]
            kept = self.standings.get(key, Kept(player=player, province="江苏"))
            try:
                for score, ended in sorted(batch, key=lambda game: game[1]):
                    kept = add_game(kept, score, ended, self.best_n)
            except OutOfOrderGameError:
                kept = standing_from_scores(player, "江苏", self.valid(key), self.best_n)
            self.standings[key] = kept

    def recompute(self, key: Key) -> None:
        self.standings[key] = standing_from_scores(
            self.keys[key[1]], "江苏", self.valid(key), self.best_n
        )


def _write_batch(
    rng: random.Random, events: list[Event], players: list[Player], now: datetime
) -> list[tuple[Key, int, int, datetime]]:
    """Store one batch of one-seat games (seats first, as ingest does), then apply it: as
    score rows (``standings_apply``) or as new games (``standings_apply_games``)."""
    picks = []
    for _ in range(rng.randint(1, 16)):
        event = rng.choice(events)
        player = rng.choice(players)
        # Mostly forward in time, sometimes late; few distinct scores and times: ties.
        ended = now + timedelta(minutes=rng.choice((-30, -5, 0, 0, 1, 2, 5)))
        picks.append((event, player, rng.randint(-3, 3), ended))
    games = [
        Game(
            record_id=f"g-{next(_ids)}",
            digest="0" * 64,
            event=event,
            mode="singles",
            started_at=ended - timedelta(minutes=3),
            ended_at=ended,
            ended_by="time",
            seat_count=4,
        )
        for event, _, _, ended in picks
    ]
    with transaction.atomic():
        Game.objects.bulk_create(games)
        seats = Seat.objects.bulk_create(
            [
                Seat(
                    game=game,
                    seat=0,
                    player=player,
                    hand="R5",
                    hand_points=5,
                    score=score,
                    event=event,
                    ended_at=ended,
                )
                for game, (event, player, score, ended) in zip(games, picks, strict=True)
            ]
        )
        if rng.random() < 0.5:
            standings_apply_games(game_ids=[game.pk for game in games])
        else:
            standings_apply(
                scores=[
                    ScoreRow(event.pk, player.pk, player.external_id, "江苏", score, ended)
                    for event, player, score, ended in picks
                ]
            )
    return [
        ((event.pk, player.pk), seat.pk, score, ended)
        for seat, (event, player, score, ended) in zip(seats, picks, strict=True)
    ]


def _stored(events: list[Event]) -> dict[Key, Kept]:
    return {
        (row.event_id, row.player_id): Kept(
            player=row.player_key,
            province=row.province,
            games=row.games,
            kept=tuple(row.kept),
            total=row.total,
            best=row.best,
            reached_at=row.reached_at,
        )
        for row in Standing.objects.filter(event__in=events)
    }


@pytest.mark.parametrize("seed", range(20))
def test_random_batches_leave_the_standings_the_domain_computes(seed: int) -> None:
    rng = random.Random(seed)
    best_n = (1, 2, 3, 15)[seed % 4]
    minimum = (1, 3)[seed % 2]
    season = make_season(best_n=best_n, minimum_games=minimum)
    events = [make_event(season, code=f"E{i}") for i in range(2)]
    players = make_players(3)
    model = Model(best_n, players)
    now = local(2021, 2, 2, 12)
    for step in range(15):
        versions = dict(Event.objects.values_list("pk", "leaderboard_version"))
        rows = _write_batch(rng, events, players, now)
        model.apply(rows)
        bumped = {
            pk: v - versions[pk] for pk, v in Event.objects.values_list("pk", "leaderboard_version")
        }
        assert bumped == {e.pk: int(e.pk in {key[0] for key, *_ in rows}) for e in events}
        if step % 5 == 4:  # a correction voids one stored seat, then the next batch merges
            key, pk, _, _ = rng.choice(rows)
            Seat.objects.filter(pk=pk).update(voided=True)
            model.voided.add(pk)
            standings_recompute(event=Event.objects.get(pk=key[0]), player_ids=[key[1]])
            model.recompute(key)
        now += timedelta(minutes=rng.choice((0, 1, 3)))

        stored = _stored(events)
        expected = {
            key: Kept(
                player=model.keys[key[1]],
                province="江苏",
                games=kept.games,
                kept=kept.kept,
                total=kept.total,
                best=kept.best,
                reached_at=kept.reached_at,
            )
            for key, kept in model.standings.items()
        }
        assert stored == expected
        # The incremental standing is the from-scratch one (the domain's own promise).
        assert stored == {
            key: standing_from_scores(model.keys[key[1]], "江苏", model.valid(key), best_n)
            for key in expected
        }
        eligible = {
            (row.event_id, row.player_id): row.eligible
            for row in Standing.objects.filter(event__in=events)
        }
        assert eligible == {key: kept.games >= minimum for key, kept in expected.items()}


def test_a_stored_standing_keeps_its_key_and_province_and_merges() -> None:
    """An equal score does not displace a kept one nor move reached_at; a higher one does."""
    season = make_season(best_n=2, minimum_games=2)
    event = make_event(season)
    (player,) = make_players(1)
    start = local(2021, 2, 1, 11)

    def batch(*games: tuple[int, int]) -> None:
        standings_apply(
            scores=[
                ScoreRow(
                    event.pk, player.pk, "new-key", "浙江", score, start + timedelta(minutes=m)
                )
                for score, m in games
            ]
        )

    Standing.objects.create(
        event=event, player=player, player_key=player.external_id, province="江苏"
    )
    batch((5, 1), (3, 2))
    batch((3, 3))  # equal to the smallest kept: nothing moves but the count
    row = Standing.objects.get(event=event, player=player)
    assert (row.player_key, row.province, row.games, row.kept, row.total, row.best) == (
        player.external_id,
        "江苏",
        3,
        [5, 3],
        8,
        5,
    )
    assert (row.reached_at, row.eligible) == (start + timedelta(minutes=2), True)
    batch((4, 4))
    row.refresh_from_db()
    assert (row.games, row.kept, row.total, row.reached_at) == (
        4,
        [5, 4],
        9,
        start + timedelta(minutes=4),
    )


@pytest.mark.parametrize("seed", range(12))
def test_random_boards_rank_as_the_domain_ranks(seed: int) -> None:
    rng = random.Random(seed)
    middle = [name for name in TIEBREAKS if name not in ("total", "player")]
    order = ["total", *rng.sample(middle, rng.randint(0, len(middle)))]
    season = make_season(
        tiebreak_order=order, best_n=rng.choice((1, 3, 5)), minimum_games=rng.choice((1, 3))
    )
    event = make_event(season)
    provinces = ("江苏", "浙江", "广东", "西藏")[: rng.randint(1, 4)]
    players = make_players(rng.randint(1, 30), provinces)
    times = [local(2021, 2, 1 + d, 12) for d in range(rng.randint(1, 3))]
    field = {
        player: [(rng.randint(-2, 3) * 5, rng.choice(times)) for _ in range(rng.randint(1, 7))]
        for player in players
    }
    timed_games(event, field)
    expected = rank(
        [
            standing_from_scores(p.external_id, p.province, games, season.best_n)
            for p, games in field.items()
        ],
        minimum_games=season.minimum_games,
        order=order,
    )
    eligible = [
        (e.player, e.rank, e.province_rank)
        for e in expected
        if e.rank is not None and e.province_rank is not None
    ]

    assert list(leaderboard_ranks(event, chunk=rng.randint(1, 8))) == eligible
    national, per_province = rng.randint(0, 10), rng.randint(0, 4)
    top = leaderboard_top(event, national=national, per_province=per_province)
    assert [(r.player, r.rank, r.province_rank) for r in top] == [
        (key, national_rank, province_rank)
        for key, national_rank, province_rank in eligible
        if national_rank <= national or province_rank <= per_province
    ]
