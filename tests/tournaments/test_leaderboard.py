"""Leaderboard reads (SPEC §4, §5): best N, the minimum, tie-breaks as the domain ranks them,
national and provincial pages, a player's own rank, a finalised board's ranks (its order),
the top rows the finalisation ranks, constant queries."""

import random
from datetime import datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import Player
from flows.finalisation import event_finalise
from tests.tournaments.factories import local, make_event, make_players, make_season, timed_games
from tournaments.domain.leaderboard import Ranked, rank, standing_from_scores
from tournaments.models import Event, Season, Standing
from tournaments.selectors.leaderboard import (
    leaderboard_player,
    leaderboard_ranks,
    leaderboard_rows,
    leaderboard_top,
    live_ranks,
)

#: Each player's (score, ended_at) games.
Field = dict[Player, list[tuple[int, datetime]]]

pytestmark = pytest.mark.django_db
PROVINCES = ("江苏", "浙江", "广东")


def _scores(n: int, start: datetime) -> list[tuple[int, datetime]]:
    return [(10, start + timedelta(minutes=i)) for i in range(n)]


def test_fourteen_games_leave_a_player_unranked() -> None:
    event = make_event(make_season())
    fourteen, fifteen = make_players(2)
    start = local(2021, 2, 1, 11)
    timed_games(event, {fourteen: _scores(14, start), fifteen: _scores(15, start)})

    rows = leaderboard_rows(event)[0:10]

    assert [(r.player, r.rank, r.eligible, r.games, r.total) for r in rows] == [
        (fifteen.external_id, 1, True, 15, 150),
        (fourteen.external_id, None, False, 14, 140),
    ]


def test_the_best_15_of_40_games_count() -> None:
    event = make_event(make_season())
    (player,) = make_players(1)
    start = local(2021, 2, 1, 11)
    timed_games(event, {player: [(s, start + timedelta(minutes=s)) for s in range(1, 41)]})

    (row,) = leaderboard_rows(event)[0:1]
    standing = Standing.objects.get(event=event, player=player)

    assert (row.total, row.games, row.best, row.rank) == (sum(range(26, 41)), 40, 40, 1)
    assert standing.kept == list(range(40, 25, -1))


def _tied_field(event: Event, n: int = 40, seed: int = 7) -> Field:
    """A field built to tie: few distinct scores, game counts around the minimum, few times."""
    rng = random.Random(seed)
    players = make_players(n, PROVINCES)
    times = [local(2021, 2, 1 + d, 12) for d in range(3)]
    field: Field = {}
    for player in players:
        games = rng.choice([14, 15, 15, 16, 20])
        field[player] = [(rng.choice([0, 10, 20]), rng.choice(times)) for _ in range(games)]
    # Two players with the very same games: only the player id tells them apart.
    field[players[1]] = list(field[players[0]])
    timed_games(event, field)
    return field


def _domain(field: Field, season: Season) -> list[Ranked]:
    return rank(
        [
            standing_from_scores(p.external_id, p.province, s, season.best_n)
            for p, s in field.items()
        ],
        minimum_games=season.minimum_games,
        order=season.tiebreak_order,
    )


@pytest.mark.parametrize(
    "order",
    [
        ["total", "games", "best", "reached_at", "player"],
        ["total", "best", "reached_at", "player"],
        ["total", "reached_at", "games", "player"],
    ],
)
def test_tie_breaks_served_equal_the_domain_rank(order: list[str]) -> None:
    season = make_season(tiebreak_order=order)
    event = make_event(season)
    field = _tied_field(event)
    expected = _domain(field, season)
    assert len({(r.standing.total, r.standing.games) for r in expected}) < len(expected)

    national = leaderboard_rows(event)[0:100]
    assert [(r.player, r.rank) for r in national] == [(e.player, e.rank) for e in expected]
    for province in PROVINCES:
        page = leaderboard_rows(event, province=province)[0:100]
        assert [(r.player, r.province_rank) for r in page] == [
            (e.player, e.province_rank) for e in expected if e.province == province
        ]
    for entry in expected:
        (row,) = leaderboard_player(event, player=entry.player)
        assert (row.rank, row.province_rank) == (entry.rank, entry.province_rank)

    event_finalise(event=event, by=None, force=True)
    event.refresh_from_db()
    whole = [(e.player, e.rank, e.province_rank) for e in expected]
    # A finalised page gives both ranks, whatever its size and depth.
    for size in (7, 100):
        pages = [leaderboard_rows(event)[i : i + size] for i in range(0, len(field), size)]
        assert [(r.player, r.rank, r.province_rank) for page in pages for r in page] == whole
    for province in PROVINCES:
        board = [row for row in whole if _province_of(row[0], field) == province]
        for size in (3, 100):
            pages = [
                leaderboard_rows(event, province=province)[i : i + size]
                for i in range(0, len(field), size)
            ]
            assert [(r.player, r.rank, r.province_rank) for page in pages for r in page] == board
        assert list(leaderboard_ranks(event, province=province)) == [
            row for row in board if row[1] is not None
        ]
    assert list(leaderboard_ranks(event, chunk=4)) == [row for row in whole if row[1] is not None]
    for entry in expected:
        (row,) = leaderboard_player(event, player=entry.player)
        assert (row.rank, row.province_rank) == (entry.rank, entry.province_rank)


def _province_of(key: str, field: Field) -> str:
    return next(p.province for p in field if p.external_id == key)


@pytest.mark.parametrize(
    ("national", "per_province"), [(1, 0), (6, 0), (0, 1), (0, 4), (3, 2), (100, 100)]
)
def test_the_top_rows_carry_their_whole_board_ranks(national: int, per_province: int) -> None:
    season = make_season()
    event = make_event(season)
    field = _tied_field(event)

    def top() -> list[tuple[str, int, int]]:
        rows = leaderboard_top(event, national=national, per_province=per_province)
        return [(r.player, r.rank, r.province_rank) for r in rows]

    ranked = [e for e in _domain(field, season) if e.rank is not None]
    expected = [
        (e.player, e.rank, e.province_rank)
        for e in ranked
        if e.rank is not None  # eligible: both ranks set
        and e.province_rank is not None
        and (e.rank <= national or e.province_rank <= per_province)
    ]
    assert top() == expected
    # A province whose only player is last lowers the cut to the bottom of the board.
    (last,) = make_players(1, ("西藏",))
    timed_games(event, {last: _scores(15, local(2021, 2, 3, 12))})
    Standing.objects.filter(event=event, player=last).update(total=-100)
    if len(ranked) + 1 <= national or per_province:
        expected.append((last.external_id, len(ranked) + 1, 1))
    assert top() == expected
    assert leaderboard_top(event, national=0, per_province=0) == []


def test_pages_slice_the_whole_order_across_the_eligible_boundary() -> None:
    event = make_event(make_season())
    field = _tied_field(event)
    whole = leaderboard_rows(event)[0:100]
    eligible = sum(1 for r in whole if r.eligible)
    assert 0 < eligible < len(field) == len(whole)

    pages = [leaderboard_rows(event)[i : i + 7] for i in range(0, len(field), 7)]

    assert [r for page in pages for r in page] == whole
    assert leaderboard_rows(event).count() == len(field)
    assert leaderboard_rows(event)[eligible - 1 : eligible + 1][1].rank is None


def test_a_players_live_rank_counts_the_rows_strictly_better() -> None:
    event = make_event(make_season())
    field = _tied_field(event)
    expected = {e.player: e for e in _domain(field, event.season)}

    for standing in Standing.objects.filter(event=event):
        entry = expected[standing.player_key]
        assert live_ranks(standing, event) == (entry.rank, entry.province_rank)
    assert leaderboard_player(event, player="nobody") == []
    some = next(iter(field))
    assert leaderboard_player(event, player=some.external_id, province="西藏") == []


def test_a_page_costs_the_same_queries_whatever_its_size() -> None:
    event = Event.objects.select_related("season").get(pk=make_event(make_season()).pk)
    _tied_field(event, n=120)
    eligible = Standing.objects.filter(event=event, eligible=True).count()
    assert 50 < eligible < 120 - 20

    def queries(start: int, size: int) -> int:
        with CaptureQueriesContext(connection) as captured:
            rows = leaderboard_rows(event)[start : start + size]
            assert len({r.name for r in rows}) == size
        return len(captured)

    # A count, then one slice; a page across the eligible boundary takes a second slice.
    assert [queries(0, 5), queries(0, 50)] == [2, 2]
    assert [queries(eligible - 2, 5), queries(eligible - 2, 20)] == [3, 3]


def test_a_finalised_page_costs_the_same_queries_whatever_its_size_or_depth() -> None:
    event = make_event(make_season())
    _tied_field(event, n=120)
    event_finalise(event=event, by=None, force=True)
    event = Event.objects.select_related("season").get(pk=event.pk)
    eligible = Standing.objects.filter(event=event, eligible=True).count()

    def queries(start: int, size: int, province: str | None = None) -> int:
        with CaptureQueriesContext(connection) as captured:
            rows = leaderboard_rows(event, province=province)[start : start + size]
            assert all(r.rank and r.province_rank for r in rows if r.eligible)
        return len(captured)

    # A count, a slice and the province counts above the page; a province page counts the
    # rows above it and numbers the national rows it spans.
    assert [queries(0, 5), queries(0, 50), queries(40, 20)] == [3, 3, 3]
    assert [queries(0, 5, "江苏"), queries(10, 20, "江苏")] == [4, 4]
    assert queries(eligible - 2, 5) == 4
