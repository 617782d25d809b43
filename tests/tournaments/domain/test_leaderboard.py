"""Tests for tournaments.domain.leaderboard: best-N standings and ranking (SPEC §4)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.domain.clock import TOUR_TZ
from tournaments.domain.leaderboard import (
    DEFAULT_ORDER,
    TIEBREAKS,
    OutOfOrderGameError,
    Ranked,
    Standing,
    add_game,
    keep_best,
    rank,
    rank_in_province,
    resolve_order,
    sort_key,
    standing_from_scores,
)

START = datetime(2021, 2, 1, 10, 0, tzinfo=TOUR_TZ)


def at(minutes: int) -> datetime:
    return START + timedelta(minutes=minutes)


def fold(player: str, province: str, games: list[tuple[int, datetime]], n: int) -> Standing:
    standing = Standing(player=player, province=province)
    for score, ended_at in games:
        standing = add_game(standing, score, ended_at, n)
    return standing


def make(
    player: str,
    province: str = "江苏",
    *,
    games: int = 15,
    total: int = 100,
    best: int | None = 50,
    reached_at: datetime | None = START,
) -> Standing:
    """A stand-in standing: ranking only looks at these fields, not at kept."""
    return Standing(
        player=player,
        province=province,
        games=games,
        kept=(),
        total=total,
        best=best,
        reached_at=reached_at,
    )


# --- keep_best ---------------------------------------------------------------------------


def test_keep_best_fills_until_n_even_with_negative_scores() -> None:
    assert keep_best((), -30, 3) == (-30,)
    assert keep_best((10, -30), 0, 3) == (10, 0, -30)


def test_keep_best_displaces_the_smallest_when_strictly_greater() -> None:
    assert keep_best((90, 40, 10), 11, 3) == (90, 40, 11)
    assert keep_best((90, 40, 10), 100, 3) == (100, 90, 40)


def test_keep_best_equal_score_does_not_displace() -> None:
    assert keep_best((90, 40, 10), 10, 3) is None


def test_keep_best_smaller_score_does_not_enter() -> None:
    assert keep_best((90, 40, 10), -5, 3) is None


@pytest.mark.parametrize(
    ("kept", "n", "message"),
    [
        ((1, 2), 3, "descending"),
        ((3, 2, 1), 2, "more than N=2"),
        ((), 0, "N >= 1"),
    ],
)
def test_keep_best_rejects_bad_input(kept: tuple[int, ...], n: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        keep_best(kept, 5, n)


# --- add_game / standing_from_scores -----------------------------------------------------


def test_first_game_sets_everything() -> None:
    standing = add_game(Standing("p0000001", "江苏"), -12, at(3), 15)
    assert standing == Standing("p0000001", "江苏", 1, (-12,), -12, -12, at(3))


def test_equal_score_keeps_total_and_reached_at() -> None:
    games = [(30, at(0)), (20, at(5)), (10, at(10))]
    standing = fold("p1", "江苏", games, 3)
    after = add_game(standing, 10, at(20), 3)
    assert after == Standing("p1", "江苏", 4, (30, 20, 10), 60, 30, at(10))


def test_lower_score_only_counts_the_game() -> None:
    standing = fold("p1", "江苏", [(30, at(0)), (20, at(5))], 2)
    after = add_game(standing, -40, at(9), 2)
    assert after == Standing("p1", "江苏", 3, (30, 20), 50, 30, at(5))


def test_displacing_score_moves_total_and_reached_at() -> None:
    standing = fold("p1", "江苏", [(30, at(0)), (20, at(5)), (-8, at(7))], 2)
    after = add_game(standing, 25, at(9), 2)
    assert after == Standing("p1", "江苏", 4, (30, 25), 55, 30, at(9))


def test_zero_score_filling_a_slot_moves_reached_at_but_not_total() -> None:
    standing = fold("p1", "江苏", [(30, at(0))], 3)
    after = add_game(standing, 0, at(4), 3)
    assert (after.kept, after.total, after.reached_at) == ((30, 0), 30, at(4))


def test_game_older_than_reached_at_needs_recompute() -> None:
    standing = fold("p1", "江苏", [(30, at(0)), (20, at(5))], 2)
    with pytest.raises(OutOfOrderGameError, match="recompute from scratch"):
        add_game(standing, 40, at(4), 2)
    # Ending exactly at reached_at is still in order.
    assert add_game(standing, 40, at(5), 2).total == 70


def test_no_games_is_an_empty_standing() -> None:
    assert standing_from_scores("p1", "江苏", [], 15) == Standing("p1", "江苏")


def test_from_scratch_settles_equal_scores_for_the_earlier_game() -> None:
    # Two 10s compete for the last place; the earlier one (minute 1) is kept, so the
    # total was reached at minute 2, not at minute 8.
    games = [(10, at(8)), (50, at(2)), (10, at(1))]
    standing = standing_from_scores("p1", "江苏", games, 2)
    assert standing == Standing("p1", "江苏", 3, (50, 10), 60, 50, at(2))


def test_best_15_of_40_scores_exact_total() -> None:
    # 40 distinct scores from -20 to 60, nine of them negative: game i scores (37 i mod 81) - 20.
    scores = [(i * 37) % 81 - 20 for i in range(40)]
    games = [(score, at(4 * i)) for i, score in enumerate(scores)]
    standing = standing_from_scores("p0000001", "浙江", games, 15)
    expected_kept = tuple(sorted(scores, reverse=True)[:15])
    assert expected_kept == (60, 58, 56, 54, 53, 51, 49, 47, 46, 44, 42, 40, 37, 35, 33)
    assert standing.kept == expected_kept
    assert standing.total == 705
    assert standing.games == 40
    assert standing.best == 60
    assert standing == fold("p0000001", "浙江", games, 15)


# --- properties --------------------------------------------------------------------------

scores_strategy = st.integers(min_value=-400, max_value=400)
games_strategy = st.lists(
    st.tuples(scores_strategy, st.integers(min_value=0, max_value=60 * 24 * 7)),
    max_size=60,
)


@given(games=games_strategy, n=st.integers(min_value=1, max_value=20))
def test_incremental_equals_from_scratch(games: list[tuple[int, int]], n: int) -> None:
    timed = [(score, at(minute)) for score, minute in games]
    in_time_order = sorted(timed, key=lambda game: game[1])
    assert fold("p1", "江苏", in_time_order, n) == standing_from_scores("p1", "江苏", timed, n)


@given(data=st.data(), games=games_strategy, n=st.integers(min_value=1, max_value=20))
def test_from_scratch_ignores_input_order(
    data: st.DataObject, games: list[tuple[int, int]], n: int
) -> None:
    timed = [(score, at(minute)) for score, minute in games]
    shuffled = data.draw(st.permutations(timed))
    assert standing_from_scores("p1", "江苏", shuffled, n) == standing_from_scores(
        "p1", "江苏", timed, n
    )


@given(games=games_strategy, n=st.integers(min_value=1, max_value=20))
def test_standing_invariants(games: list[tuple[int, int]], n: int) -> None:
    timed = sorted(((score, at(minute)) for score, minute in games), key=lambda g: g[1])
    standing = fold("p1", "江苏", timed, n)
    scores = [score for score, _ in games]
    assert standing.games == len(games)
    assert standing.total == sum(standing.kept)
    assert len(standing.kept) == min(n, len(games))
    assert standing.kept == tuple(sorted(scores, reverse=True)[:n])
    assert standing.best == (max(scores) if scores else None)
    if games:
        assert standing.reached_at in {ended_at for _, ended_at in timed}
    else:
        assert standing.reached_at is None


@given(
    kept=st.lists(scores_strategy, max_size=8),
    score=scores_strategy,
    n=st.integers(min_value=1, max_value=8),
)
def test_keep_best_property(kept: list[int], score: int, n: int) -> None:
    current = tuple(sorted(kept, reverse=True)[:n])
    result = keep_best(current, score, n)
    if len(current) == n and score <= current[-1]:
        assert result is None
    else:
        assert result == tuple(sorted([*current, score], reverse=True)[:n])


# --- tie-break registry ------------------------------------------------------------------


def test_registry_and_default_order() -> None:
    assert DEFAULT_ORDER == ("total", "games", "best", "reached_at", "player")
    assert set(DEFAULT_ORDER) <= set(TIEBREAKS)
    columns = [
        (tb.name, tb.column, tb.descending, tb.nulls_last) for tb in resolve_order(DEFAULT_ORDER)
    ]
    assert columns == [
        ("total", "total", True, False),
        ("games", "games", True, False),
        ("best", "best", True, True),
        ("reached_at", "reached_at", False, True),
        ("player", "player", False, False),
    ]


def test_order_without_player_gets_it_appended() -> None:
    assert [tb.name for tb in resolve_order(["total", "best"])] == ["total", "best", "player"]


def test_unknown_tiebreaks_are_named() -> None:
    with pytest.raises(ValueError, match="unknown tie-breaks: wins, luck"):
        resolve_order(["total", "wins", "luck"])


@pytest.mark.parametrize(
    ("order", "message"),
    [
        ((), 'must start with "total"'),
        (("games", "total"), 'must start with "total"'),
        (("total", "player", "games"), '"player" must be the last'),
        (("total", "games", "games"), "more than once: games"),
    ],
)
def test_invalid_orders(order: tuple[str, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        resolve_order(order)


def test_order_must_not_be_a_bare_string() -> None:
    with pytest.raises(TypeError):
        resolve_order("total")


def test_sort_key_is_ascending_comparable() -> None:
    higher = make("p2", total=120)
    lower = make("p1", total=100)
    assert sort_key(higher) < sort_key(lower)


def names(ranked: list[Ranked]) -> list[str]:
    return [row.player for row in ranked]


def test_tiebreak_total() -> None:
    assert names(rank([make("a", total=10), make("b", total=11)], minimum_games=15)) == [
        "b",
        "a",
    ]


def test_tiebreak_games() -> None:
    field = [make("a", games=20), make("b", games=31)]
    assert names(rank(field, minimum_games=15)) == ["b", "a"]


def test_tiebreak_best() -> None:
    field = [make("a", best=80), make("b", best=95)]
    assert names(rank(field, minimum_games=15)) == ["b", "a"]


def test_tiebreak_reached_at_earlier_first_and_none_last() -> None:
    field = [make("a", reached_at=None), make("b", reached_at=at(30)), make("c", reached_at=at(5))]
    assert names(rank(field, minimum_games=0)) == ["c", "b", "a"]


def test_tiebreak_player_is_the_last_resort() -> None:
    field = [make("p0000009"), make("p0000002"), make("p0000005")]
    assert names(rank(field, minimum_games=15)) == ["p0000002", "p0000005", "p0000009"]


def test_best_none_sorts_last() -> None:
    field = [make("a", best=None), make("b", best=-300)]
    assert names(rank(field, minimum_games=0, order=("total", "best"))) == ["b", "a"]


def test_season_order_changes_the_ranking() -> None:
    field = [make("a", games=40, best=10), make("b", games=15, best=90)]
    assert names(rank(field, minimum_games=15)) == ["a", "b"]
    assert names(rank(field, minimum_games=15, order=("total", "best", "games"))) == ["b", "a"]


# --- ranking -----------------------------------------------------------------------------


def test_fourteen_games_is_unranked_with_minimum_fifteen() -> None:
    games = [(100, at(i)) for i in range(14)]
    standing = standing_from_scores("p1", "江苏", games, 15)
    other = standing_from_scores("p2", "江苏", [(1, at(i)) for i in range(15)], 15)
    assert standing.total == 1400
    assert not standing.is_eligible(15)
    ranked = rank([standing, other], minimum_games=15)
    assert [(row.player, row.rank, row.province_rank) for row in ranked] == [
        ("p2", 1, 1),
        ("p1", None, None),
    ]
    assert not ranked[1].eligible


def test_national_and_province_ranks() -> None:
    field = [
        make("p1", "江苏", total=500),
        make("p2", "浙江", total=400),
        make("p3", "江苏", total=300),
        make("p4", "浙江", total=900, games=3),
        make("p5", "浙江", total=200),
        make("p6", "江苏", total=100, games=1),
    ]
    ranked = rank(field, minimum_games=15)
    assert [(row.player, row.rank, row.province_rank) for row in ranked] == [
        ("p1", 1, 1),
        ("p2", 2, 1),
        ("p3", 3, 2),
        ("p5", 4, 2),
        ("p4", None, None),
        ("p6", None, None),
    ]
    jiangsu = rank_in_province(field, "江苏", minimum_games=15)
    assert [(row.player, row.rank, row.province_rank) for row in jiangsu] == [
        ("p1", 1, 1),
        ("p3", 3, 2),
        ("p6", None, None),
    ]


def test_rank_rejects_duplicate_players_and_negative_minimum() -> None:
    with pytest.raises(ValueError, match="more than one standing: p1"):
        rank([make("p1"), make("p1", total=3)], minimum_games=15)
    with pytest.raises(ValueError, match="minimum_games"):
        rank([], minimum_games=-1)


standings_strategy = st.lists(
    st.builds(
        make,
        st.text(alphabet="p0123456789", min_size=1, max_size=4),
        st.sampled_from(["江苏", "浙江", "上海"]),
        games=st.integers(min_value=0, max_value=30),
        total=st.integers(min_value=-50, max_value=50),
        best=st.one_of(st.none(), st.integers(min_value=-5, max_value=5)),
        reached_at=st.one_of(st.none(), st.integers(min_value=0, max_value=5).map(at)),
    ),
    max_size=30,
    unique_by=lambda standing: standing.player,
)


@given(data=st.data(), field=standings_strategy, minimum=st.integers(min_value=0, max_value=30))
def test_ranking_is_a_total_order_independent_of_input_order(
    data: st.DataObject, field: list[Standing], minimum: int
) -> None:
    ranked = rank(field, minimum_games=minimum)
    shuffled = data.draw(st.permutations(field))
    assert rank(shuffled, minimum_games=minimum) == ranked
    assert len(ranked) == len(field)

    eligible = [row for row in ranked if row.rank is not None]
    assert [row.rank for row in eligible] == list(range(1, len(eligible) + 1))
    assert all(row.standing.games >= minimum for row in eligible)
    assert all(row.rank is None and row.province_rank is None for row in ranked[len(eligible) :])
    assert all(row.standing.games < minimum for row in ranked[len(eligible) :])
    keys = [sort_key(row.standing) for row in eligible]
    assert all(a < b for a, b in zip(keys, keys[1:], strict=False))  # strict: no full ties

    for province in {standing.province for standing in field}:
        in_province = [row for row in eligible if row.province == province]
        assert [row.province_rank for row in in_province] == list(range(1, len(in_province) + 1))
