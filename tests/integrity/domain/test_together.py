"""Better together than apart (issue 28): integrity/domain/together.py, and the rank-sum
tail it reads from integrity/domain/stats.py (Luce's wins test: test_stats.py)."""

import math
import random
import zlib

import pytest

from integrity.domain.audit import window_skills
from integrity.domain.data import TableObs
from integrity.domain.stats import (
    bh_log_qvalues,
    log_fisher_lower,
    log_luce_tails,
    log_mid_rank_sum_tail,
    log_normal_sf,
    log_rank_sum_sf,
    rank_sum,
)
from integrity.domain.strengths import luce_strengths
from integrity.domain.together import Side, _log_directions, _log_wins, _sides, detect_together

from .sim import FRIENDS, thurstone_week


def table(game: str, players: tuple[str, ...], hands: tuple[int, ...]) -> TableObs:
    winner = hands.index(min(hands))
    scores = tuple(0 if k == winner else -h for k, h in enumerate(hands))
    return TableObs(game, 0, players, hands, scores, (winner,))


def test_tied_shares_take_their_mean_rank() -> None:
    first, second = [1.0, 1.0, 0.5], [0.0, 0.5, 0.0, 1.0]
    # pooled: 0, 0 -> rank 1.5; 0.5, 0.5 -> 3.5; 1, 1, 1 -> 6: the first sample sums 15.5
    # against a mean of 12; tie correction (2**3 - 2) * 2 + (3**3 - 3) = 36
    variance = 3 * 4 / 12 * (8 - 36 / (7 * 6))
    expected = log_normal_sf((15.5 - 12 - 0.5) / math.sqrt(variance))
    assert log_mid_rank_sum_tail(first, second) == pytest.approx(expected, rel=1e-12)
    assert log_mid_rank_sum_tail([], second) == 0.0
    assert log_mid_rank_sum_tail([1.0, 1.0], [1.0]) == 0.0  # all tied: no evidence


def test_without_ties_the_tail_is_near_the_exact_rank_sum() -> None:
    rng = random.Random(3)
    first = [rng.gauss(0.5, 1.0) for _ in range(60)]
    second = [rng.gauss(0.0, 1.0) for _ in range(200)]
    exact = log_rank_sum_sf(rank_sum(first, second), 60, 260, max_cells=10**9)
    assert math.exp(log_mid_rank_sum_tail(first, second)) == pytest.approx(
        math.exp(exact), rel=0.05
    )


def test_each_game_compares_the_player_with_the_strangers() -> None:
    picked = zlib.crc32(b"g5") % 2  # one of the two losing strangers, by the game id
    games = [
        # k queues with them, so s is the only stranger: x out first (a win over one)
        ("g1", ("x", "y", "k", "s"), (0, 9, 3, 4), (0,), 0),
        ("g2", ("x", "k", "s"), (3, 1, 0), (2,), 0),  # apart: lost to one stranger
        ("g3", ("x", "y", "s", "k"), (12, 0, 5, 7), (1,), 0),  # y won: x outweighs s
        ("g4", ("x", "y", "k"), (2, 9, 0), (2,), 0),  # no stranger: not used
        # apart, t won: a loss to three strangers, and x ties s or is lighter than u
        ("g5", ("x", "s", "t", "u"), (6, 6, 0, 12), (2,), 0),
        ("g6", ("x", "s", "t", "u"), (0, 0, 5, 7), (0, 1), 0),  # x and s co-win: not used
    ]
    together, apart = _sides(games, "y", frozenset({"x", "y", "k"}), {})
    assert together == Side(games=2, won=(1.0,), lost=(), heavier=(1.0,))
    assert apart == Side(games=2, won=(), lost=(1.0, 3.0), heavier=((0.5, 0.0)[picked],))
    # with the strangers' strengths, each decided game holds their sum (1 without one)
    strengths = {"s": 0.5, "t": 2.0, "k": 9.0, "y": 9.0}
    together, apart = _sides(games, "y", frozenset({"x", "y", "k"}), strengths)
    assert together.won == (0.5,)
    assert apart.lost == (0.5, 3.5)


def test_the_wins_are_luces_conditional_test_one_sided() -> None:
    # together 4 wins of 5 against three strangers, apart 1 of 5: Fisher's exact test
    together, apart = Side(5, (3,) * 4, (3,)), Side(5, (3,), (3,) * 4)
    expected = (math.comb(5, 4) * math.comb(5, 1) + math.comb(5, 5)) / math.comb(10, 5)
    assert math.exp(_log_wins(together, apart)[0]) == pytest.approx(expected)
    assert math.exp(_log_wins(apart, together)[1]) == pytest.approx(expected)
    assert _log_wins(together, apart)[0] == pytest.approx(
        log_fisher_lower(1, 5, 5, 10)  # P(1 loss or fewer together)
    )
    # with two strangers at the table together and three apart, each game weighs 1/k
    fewer = Side(5, (2,) * 4, (2,))
    assert _log_wins(fewer, apart)[0] == log_luce_tails(4, [2.0] * 5, [3.0] * 5, 5)[0]
    assert _log_wins(fewer, apart)[0] > _log_wins(together, apart)[0]
    assert _log_wins(Side(), apart) == (0.0, 0.0)


def test_the_two_parts_combine_by_fishers_method() -> None:
    """Wins together 4 of 5 against 1 of 5 apart, and lighter hands together: each part's
    p-value, and the direction's is Fisher's combination of the two (a part without games
    on one side is left out)."""
    together = Side(5, (3,) * 4, (3,), (0.0, 0.0, 0.5))
    apart = Side(5, (3,), (3,) * 4, (1.0, 0.5, 1.0, 1.0))
    log_wins = _log_wins(together, apart)[0]
    log_hands = log_mid_rank_sum_tail([-0.0, -0.0, -0.5], [-1.0, -0.5, -1.0, -1.0])
    product = math.exp(log_wins + log_hands)
    assert math.exp(_log_directions(together, apart)["better"]) == pytest.approx(
        product * (1 - math.log(product)), rel=1e-12
    )
    no_hands = Side(5, (3,) * 4, (3,))
    assert _log_directions(no_hands, apart)["better"] == pytest.approx(log_wins, rel=1e-12)
    assert _log_directions(Side(), Side()) == {"better": 0.0, "worse": 0.0}


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
    assert (flag.shared, flag.weight) == (40, 1.0)  # one pair: its weight is the mean
    assert flag.q <= 0.01
    assert flag.strength == pytest.approx(-math.log10(flag.q))

    # the honest pair, 200 weeks: p-values no smaller than uniform ones (about 2 of 200 at
    # 0.01 and 10 at 0.05 by chance, give or take 3)
    honest = [detect_together(week(False, seed), [("x", "y")], q=1.0) for seed in range(200)]
    assert {found.family_size for found in honest} == {1}
    p_values = sorted(found.flags[0].p for found in honest)
    assert (sum(p <= 0.01 for p in p_values), sum(p <= 0.05 for p in p_values)) == (2, 7)
    assert p_values[0] > 0.001  # uniform ones: below 0.001 in 18 % of 200-week runs


def test_a_player_without_enough_games_apart_is_not_tested() -> None:
    tables = [t for t in week(True, 1) if "y" not in t.players or "x" in t.players]
    # y plays only with x now (a farm's feeder): x alone is tested, both directions
    found = detect_together(tables, [("x", "y")], q=1.0)
    assert found.family_size == 1
    assert found.flags[0].tests == 2
    assert [s.player for s in found.flags[0].sides] == ["x"]
    assert detect_together(tables, [("x", "y")], min_apart=41).family_size == 0


def test_pairs_that_sit_together_more_weigh_more() -> None:
    """Weighted BH: a pair's weight is its tables together over the family's mean."""
    many = week(True, 1)  # x and y: 40 tables together
    renamed = {"x": "u", "y": "v"}
    few = [  # u and v: 20 tables together (the other 20 left out), honest
        t._replace(game_id=f"h{t.game_id}", players=tuple(renamed.get(p, p) for p in t.players))
        for t in week(False, 2)
        if int(t.game_id[1:-1]) % 4 != 1  # games 1, 5, 9, ... of the 40 odd ones together
    ]
    found = detect_together([*many, *few], [("x", "y"), ("u", "v")], q=1.0)
    assert found.family_size == 2
    by_pair = {flag.players: flag for flag in found.flags}
    assert {pair: f.shared for pair, f in by_pair.items()} == {("x", "y"): 40, ("u", "v"): 20}
    assert by_pair["x", "y"].weight == pytest.approx(40 / 30)
    assert by_pair["u", "v"].weight == pytest.approx(20 / 30)
    pairs = [("u", "v"), ("x", "y")]
    weighted = [math.log(by_pair[p].p / by_pair[p].weight) for p in pairs]
    expected = [math.exp(log_q) for log_q in bh_log_qvalues(weighted)]
    assert [by_pair[p].q for p in pairs] == pytest.approx(expected)
    assert [f.players for f in found.flags] == sorted(
        pairs, key=lambda p: by_pair[p].p / by_pair[p].weight
    )


def test_honest_friends_are_not_flagged_where_luces_axiom_fails() -> None:
    """The null (module docstring) rests on Luce's axiom. Under Thurstone's winner model a
    strong partner at the table changes a little who wins among the others, yet the pairs'
    p-values stay no smaller than uniform ones (300 pairs: about 3 at 0.01 and 15 at 0.05 by
    chance; fewer, as each pair's p is the smallest of 4 tests times 4)."""
    weeks = [thurstone_week(seed) for seed in (1, 2, 3)]
    found = [detect_together(tables, FRIENDS, q=1.0) for tables in weeks]
    assert [result.family_size for result in found] == [100, 100, 100]
    p_values = [flag.p for result in found for flag in result.flags]
    assert (sum(p <= 0.01 for p in p_values), sum(p <= 0.05 for p in p_values)) == (0, 1)
    assert [len(detect_together(tables, FRIENDS).flags) for tables in weeks] == [0, 0, 0]


def test_the_strangers_strengths_keep_weak_strangers_from_looking_like_help() -> None:
    """x and y sit together with two weak strangers and apart with three strong ones, the
    winner drawn by Luce's axiom at each player's strength: taking the strangers as alike,
    x and y look better together; weighed by their strengths (fitted to the strangers' mean
    scores over their own games), they do not."""
    rng = random.Random(0)
    weak, strong = [f"w{i:02d}" for i in range(40)], [f"s{i:02d}" for i in range(40)]
    skill = {**dict.fromkeys(weak, -1.0), **dict.fromkeys(strong, 1.0), "x": 0.0, "y": 0.0}
    tables: list[TableObs] = []

    def play(game: str, players: list[str]) -> None:
        won = rng.choices(range(len(players)), [math.exp(skill[p]) for p in players])[0]
        hands = [0 if k == won else 10 + (7 * k + len(tables)) % 50 for k in range(len(players))]
        scores = [sum(hands) if k == won else -hands[k] for k in range(len(players))]
        tables.append(TableObs(game, 0, tuple(players), tuple(hands), tuple(scores), (won,)))

    for r in range(30):  # the strangers' own games, weak and strong at one table
        pool = weak + strong
        rng.shuffle(pool)
        for t in range(0, 80, 4):
            play(f"r{r}t{t}", pool[t : t + 4])
    for g in range(60):
        play(f"t{g}", ["x", "y", *rng.sample(weak, 2)])
        play(f"a{g}", ["x", *rng.sample(strong, 3)])
        play(f"b{g}", ["y", *rng.sample(strong, 3)])

    alike = detect_together(tables, [("x", "y")], q=1.0)
    strengths = luce_strengths(window_skills(tables), tables)
    weighed = detect_together(tables, [("x", "y")], q=1.0, strengths=strengths)
    assert (alike.flags[0].direction, alike.flags[0].p < 1e-3) == ("better", True)
    assert weighed.flags[0].p == 1.0
    # the fitted strengths set the weak strangers apart from the strong ones
    assert sum(strengths[p] for p in weak) * 2 < sum(strengths[p] for p in strong)
