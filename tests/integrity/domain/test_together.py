"""Better together than apart (issue 28): integrity/domain/together.py, and the rank-sum
tail it reads from integrity/domain/stats.py."""

import math
import random
import zlib

import pytest

from integrity.domain.data import TableObs
from integrity.domain.stats import log_rank_sum_sf, log_rank_sum_tail
from integrity.domain.together import _sides, detect_together


def table(game: str, players: tuple[str, ...], hands: tuple[int, ...]) -> TableObs:
    winner = hands.index(min(hands))
    scores = tuple(0 if k == winner else -h for k, h in enumerate(hands))
    return TableObs(game, 0, players, hands, scores, (winner,))


def test_the_tail_is_the_exact_rank_sum_within_the_budget() -> None:
    first, second = [5.0, 7.0, 9.0], [1.0, 2.0, 6.0, 8.0]
    # ranks of the first sample in the pooled seven: 3, 5, 7 -> 15
    assert log_rank_sum_tail(first, second) == log_rank_sum_sf(15, 3, 7)
    # ties are broken against the first sample: a tie at 6 takes rank 4, not 5
    assert log_rank_sum_tail([6.0, 7.0, 9.0], second) == log_rank_sum_sf(15, 3, 7)
    assert log_rank_sum_tail([], second) == 0.0


def test_the_tail_beyond_the_budget_is_the_normal_approximation() -> None:
    rng = random.Random(3)
    first = [rng.gauss(0.5, 1.0) for _ in range(60)]
    second = [rng.gauss(0.0, 1.0) for _ in range(200)]
    exact = log_rank_sum_tail(first, second, max_cells=10**9)
    approx = log_rank_sum_tail(first, second, max_cells=0)
    assert approx != exact
    assert math.exp(approx) == pytest.approx(math.exp(exact), rel=0.05)


def test_the_excess_is_taken_over_one_stranger() -> None:
    picked = zlib.crc32(b"g4") % 3  # one of the three strangers, by the game id
    games = [
        ("g1", ("x", "y", "k", "s"), (10, 0, 3, 4), 0),  # k queues with them: 10 - 4
        ("g2", ("x", "k", "s"), (3, 1, 9), 0),  # apart: 3 - 9
        ("g3", ("x", "y", "k"), (2, 9, 5), 0),  # no stranger: no excess
        ("g4", ("x", "s", "t", "u"), (3, 6, 9, 12), 0),
    ]
    together, apart = _sides(games, "y", frozenset({"x", "y", "k"}))
    assert together == [6.0]
    assert apart == [-6.0, 3.0 - (6, 9, 12)[picked]]


def week(feed: bool, seed: int) -> list[TableObs]:
    """x and y sit together at 20 of their 40 games with two strangers; apart, with three.
    With ``feed``, y holds 40 more points whenever it sits with x."""
    rng = random.Random(seed)
    tables = []
    for g in range(40):
        strangers = [f"s{rng.randrange(200):03d}" for _ in range(3)]
        while len(set(strangers)) < 3:
            strangers = [f"s{rng.randrange(200):03d}" for _ in range(3)]
        hands = [rng.randint(0, 60) for _ in range(4)]
        if g % 2:
            players = ("x", "y", *strangers[:2])
            if feed:
                hands[1] += 40
            tables.append(table(f"g{g}a", players, tuple(hands)))
        else:
            tables.append(table(f"g{g}a", ("x", *strangers), tuple(hands)))
            y_hands = [rng.randint(0, 60) for _ in range(4)]
            tables.append(table(f"g{g}b", ("y", *strangers), tuple(y_hands)))
    return tables


def test_a_feeder_worse_together_is_flagged_and_an_honest_friend_is_not() -> None:
    fed = detect_together(week(True, 1), [("y", "x")], q=0.01, min_shared=5, min_apart=5)
    assert fed.family_size == 1
    (flag,) = fed.flags
    assert (flag.players, flag.player, flag.direction, flag.tests) == (
        ("x", "y"),
        "y",
        "worse",
        4,
    )
    assert [(s.player, s.together, s.apart) for s in flag.sides] == [
        ("x", 20, 20),
        ("y", 20, 20),
    ]
    assert flag.q <= 0.01
    assert flag.strength == pytest.approx(-math.log10(flag.q))

    # the honest pair, 200 weeks: at q = 0.01 (one pair, so p <= 0.01) at most about 2
    # flagged by chance (Bonferroni over four tests keeps it below); none here, and the
    # smallest p-value is of the order the 200 draws make likely
    honest = [detect_together(week(False, seed), [("x", "y")], q=1.0) for seed in range(200)]
    assert {found.family_size for found in honest} == {1}
    p_values = sorted(found.flags[0].p for found in honest)
    assert sum(p <= 0.01 for p in p_values) == 0
    assert p_values[0] > 0.01 / 4


def test_a_player_without_enough_games_apart_is_not_tested() -> None:
    tables = [t for t in week(True, 1) if "y" not in t.players or "x" in t.players]
    # y plays only with x now (a farm's feeder): x alone is tested, both directions
    found = detect_together(tables, [("x", "y")], q=1.0)
    assert found.family_size == 1
    assert found.flags[0].tests == 2
    assert [s.player for s in found.flags[0].sides] == ["x"]
    assert detect_together(tables, [("x", "y")], min_apart=21).family_size == 0
