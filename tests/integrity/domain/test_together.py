"""Better together than apart (issue 28): integrity/domain/together.py, and the rank-sum
tail it reads from integrity/domain/stats.py."""

import math
import random
import zlib

import pytest

from integrity.domain.data import TableObs
from integrity.domain.stats import log_rank_sum_sf, log_rank_sum_tail
from integrity.domain.together import Side, _log_wins, _sides, detect_together


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


def test_each_game_compares_the_player_with_one_stranger() -> None:
    picked = zlib.crc32(b"g5") % 3  # one of the three strangers, by the game id
    games = [
        # k queues with them, so s is the stranger: x out first (a win over the stranger)
        ("g1", ("x", "y", "k", "s"), (0, 9, 3, 4), (0,), 0),
        ("g2", ("x", "k", "s"), (3, 1, 0), (2,), 0),  # apart: the stranger won
        ("g3", ("x", "y", "s", "k"), (12, 0, 5, 7), (1,), 0),  # both lost: 12 - 5
        ("g4", ("x", "y", "k"), (2, 9, 0), (2,), 0),  # no stranger: not used
        ("g5", ("x", "s", "t", "u"), (3, 6, 0, 12), (2,), 0),
    ]
    together, apart = _sides(games, "y", frozenset({"x", "y", "k"}))
    assert together == Side(won=1, lost=0, hands=(7,))
    if picked == 1:  # t won, not the player: a loss to the stranger
        assert apart == Side(won=0, lost=2, hands=())
    else:
        assert apart == Side(won=0, lost=1, hands=(3 - (6, 0, 12)[picked],))


def test_the_wins_are_fishers_exact_test_one_sided() -> None:
    # together 4 wins of 5 decided, apart 1 of 5: P(>= 4 of the 5 wins land together)
    together, apart = Side(4, 1), Side(1, 4)
    expected = (math.comb(5, 4) * math.comb(5, 1) + math.comb(5, 5)) / math.comb(10, 5)
    assert math.exp(_log_wins(together, apart, better=True)) == pytest.approx(expected)
    assert math.exp(_log_wins(apart, together, better=False)) == pytest.approx(expected)
    assert _log_wins(Side(0, 0), apart, better=True) == 0.0


def week(feed: bool, seed: int) -> list[TableObs]:
    """x and y sit together at 40 of their 80 games with two strangers; apart, with three
    (the lowest hand goes out). With ``feed``, y holds 40 more points whenever it sits
    with x."""
    rng = random.Random(seed)
    tables = []
    for g in range(80):
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
        ("x", 40, 40),
        ("y", 40, 40),
    ]
    assert flag.q <= 0.01
    assert flag.strength == pytest.approx(-math.log10(flag.q))

    # the honest pair, 200 weeks: p-values no smaller than uniform ones (at most about 2 of
    # 200 at 0.01 and 10 at 0.05 by chance; Bonferroni over four tests keeps them fewer)
    honest = [detect_together(week(False, seed), [("x", "y")], q=1.0) for seed in range(200)]
    assert {found.family_size for found in honest} == {1}
    p_values = sorted(found.flags[0].p for found in honest)
    assert (sum(p <= 0.01 for p in p_values), sum(p <= 0.05 for p in p_values)) == (1, 5)
    assert p_values[0] > 0.01 / 4


def test_a_player_without_enough_games_apart_is_not_tested() -> None:
    tables = [t for t in week(True, 1) if "y" not in t.players or "x" in t.players]
    # y plays only with x now (a farm's feeder): x alone is tested, both directions
    found = detect_together(tables, [("x", "y")], q=1.0)
    assert found.family_size == 1
    assert found.flags[0].tests == 2
    assert [s.player for s in found.flags[0].sides] == ["x"]
    assert detect_together(tables, [("x", "y")], min_apart=41).family_size == 0
