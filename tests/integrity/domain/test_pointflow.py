"""Tests for point flow / feeding (SPEC §7: collusion, giving away points)."""

from __future__ import annotations

import random
from unittest import mock

import pytest

from integrity.domain import pointflow
from integrity.domain.data import TableObs
from integrity.domain.pointflow import VERSION, detect_pointflow

from .sim import FRIENDS, honest_hands, honest_tables, make_table, seat_together, thurstone_week


def game(gid: str, seated: tuple[str, ...], hands: tuple[int, ...]) -> TableObs:
    return make_table(gid, 1, seated, hands)


def test_hand_computed_feeder() -> None:
    # B wins 5 games; F holds 50 against the others' 10 and 20: F's excess is 50 - 15 = 35.
    tables = [game(f"w{i}", ("B", "F", "x", "y"), (0, 50, 10, 20)) for i in range(5)]
    # F's 6 lost games without B (each to another winner), the baseline: excesses
    # 10 - 35 = -25 and 20 - 35 = -15.
    tables += [
        game(f"n{i}", (f"z{i}", "F", "x", "y"), (0, 10 + 10 * (i % 2), 30, 40)) for i in range(6)
    ]
    result = detect_pointflow(tables)
    # Ordered pairs with >= 5 shared B-wins: (F, B), (x, B), (y, B).
    assert result.family_size == 3
    assert result.version == VERSION == "pointflow-6"
    [flag] = result.flags
    assert (flag.feeder, flag.beneficiary) == ("F", "B")
    assert flag.players == ("B", "F")
    # The 5 shared wins hold the top ranks 7..11 of 11, in excess and in hand (50 against
    # 10 and 20): W = 45, P(W' >= 45) = 1 / C(11, 5).
    assert (flag.test, flag.shared_wins, flag.baseline_games) == ("rank", 5, 6)
    assert (flag.rank_sum, flag.rank_sum_hands, flag.rank_sum_expected) == (45, 45, 30)
    assert flag.p == pytest.approx(1 / 462, rel=1e-12)
    assert flag.q == pytest.approx(3 / 462, rel=1e-12)
    # (pointflow-1's sign test gave p = 3**-5, q = 0.0123: no discovery at q = 0.01.)
    assert flag.heaviest == 5
    assert flag.expected == pytest.approx(5 / 3, rel=1e-12)
    assert flag.mean_excess == pytest.approx(35, rel=1e-12)
    assert flag.feeder_mean == 50
    assert flag.feeder_baseline == 15
    assert (flag.flow_to_beneficiary, flag.flow_to_feeder, flag.reverse_wins) == (250, 0, 0)


def test_ties_count_against_the_shared_wins() -> None:
    tables = [game(f"w{i}", ("B", "F", "x", "y"), (0, 50, 10, 20)) for i in range(5)]
    # One baseline game ties the shared wins' excess 35; five fall below it (-25).
    tables += [game("tie", ("z", "F", "x", "y"), (0, 50, 10, 20))]
    tables += [game(f"n{i}", (f"z{i}", "F", "x", "y"), (0, 10, 30, 40)) for i in range(5)]
    [flag] = detect_pointflow(tables, q=0.5).flags
    # The tied baseline game (excess 35, hand 50) takes rank 11, the shared wins 6..10:
    # W = 40, 5 below the top; 19 of the C(11, 5) = 462 subsets lie within 5 of it.
    assert (flag.shared_wins, flag.baseline_games, flag.rank_sum, flag.rank_sum_hands) == (
        5,
        6,
        40,
        40,
    )
    assert flag.p == pytest.approx(19 / 462, rel=1e-12)


def test_the_baseline_is_the_feeders_games_without_the_beneficiary() -> None:
    tables = [game(f"w{i}", ("B", "F", "x", "y"), (0, 50, 10, 20)) for i in range(5)]
    # B lost too, and F held the heaviest hand (a feeder who finishes last feeds here as
    # well): games with B at the table are no baseline, or F's excess 90 - 10 = 80 would
    # outrank every shared win.
    tables += [game("both", ("z", "F", "B", "y"), (0, 90, 5, 10))]
    tables += [game("pair", ("z", "F", "B"), (0, 90, 5))]
    # A two-seat loss: no excess (its hand counts in F's mean hand apart).
    tables += [game("duel", ("z", "F"), (0, 40))]
    # Without B: F's excess over x and y, 40 - 15 = 25.
    tables += [game(f"s{i}", (f"z{i}", "F", "x", "y"), (0, 40, 10, 20)) for i in range(5)]
    [flag] = detect_pointflow(tables, q=0.99).flags
    # Pooled excesses 25 x 5, then the five 35s; hands 40 x 5, then the five 50s: both rank
    # sums 6 + ... + 10 = 40, the top, p = 1 / C(10, 5) — a rank test, since
    # C(10, 5) = 252 >= 3**5.
    assert (flag.feeder, flag.test, flag.shared_wins, flag.baseline_games) == ("F", "rank", 5, 5)
    assert (flag.rank_sum, flag.rank_sum_hands, flag.rank_sum_expected) == (40, 40, 27.5)
    assert flag.p == pytest.approx(1 / 252, rel=1e-12)
    # The hand baseline: F's lost games without B at the table (duel 40, five times 40).
    assert flag.feeder_baseline == 40


def test_the_history_adds_to_the_window_pairs_samples_not_to_the_family() -> None:
    # The window of the first test: F at 50 in B's 5 wins, 6 baseline games.
    window = [game(f"w{i}", ("B", "F", "x", "y"), (0, 50, 10, 20)) for i in range(5)]
    window += [
        game(f"n{i}", (f"z{i}", "F", "x", "y"), (0, 10 + 10 * (i % 2), 30, 40)) for i in range(6)
    ]
    # The week before: the same again, and G at 50 in D's 5 wins (a pair of the history
    # alone, so no opportunity of the window's).
    history = [game(f"hw{i}", ("B", "F", "x", "y"), (0, 50, 10, 20)) for i in range(5)]
    history += [
        game(f"hn{i}", (f"v{i}", "F", "x", "y"), (0, 10 + 10 * (i % 2), 30, 40)) for i in range(6)
    ]
    history += [game(f"hd{i}", ("D", "G", "u", "v"), (0, 50, 10, 20)) for i in range(5)]

    result = detect_pointflow(window, history=history)

    # The family is the window's: (F, B), (x, B), (y, B).
    assert result.family_size == 3
    [flag] = result.flags
    # F's 10 shared wins hold the top ranks 13..22 of 22: W = 175, p = 1 / C(22, 10).
    assert (flag.feeder, flag.beneficiary, flag.shared_wins, flag.baseline_games) == (
        "F",
        "B",
        10,
        12,
    )
    assert (flag.rank_sum, flag.rank_sum_hands) == (175, 175)
    assert flag.p == pytest.approx(1 / 646_646, rel=1e-12)
    assert flag.q == pytest.approx(3 / 646_646, rel=1e-12)
    assert (flag.flow_to_beneficiary, flag.feeder_baseline) == (500, 15)


def test_heavy_against_the_table_only_is_not_enough() -> None:
    # F's excess in B's wins, 10 - 1 = 9, tops a baseline where a cheater h holds 100 at
    # F's tables (excess 20 - 52.5); F's hand, 10, lies below its baseline's 20.
    tables = [game(f"w{i}", ("B", "F", "x", "y"), (0, 10, 1, 1)) for i in range(5)]
    tables += [game(f"n{i}", (f"z{i}", "F", "h", "y"), (0, 20, 100, 5)) for i in range(6)]
    result = detect_pointflow(tables, q=0.99)
    assert result.family_size == 3
    assert all(flag.feeder != "F" for flag in result.flags)


def test_a_pair_without_baseline_gets_the_sign_test() -> None:
    # No baseline: C(8, 8) = 1 < 3**8, so the per-table sign test of pointflow-1:
    # F held the heaviest of three non-winning hands in all 8, p = 3**-8.
    tables = [game(f"w{i}", ("B", "F", "x", "y"), (0, 50, 10, 20)) for i in range(8)]
    result = detect_pointflow(tables)
    assert result.family_size == 3
    [flag] = result.flags
    assert (flag.feeder, flag.test, flag.baseline_games, flag.heaviest) == ("F", "sign", 0, 8)
    assert flag.p == pytest.approx(3.0**-8, rel=1e-12)
    assert flag.q == pytest.approx(3 * 3.0**-8, rel=1e-12)


def test_the_rank_sums_decide_once_they_can_reach_far_below_bhs_first_threshold() -> None:
    """A weak friend: heaviest of three losing hands in all of B's 13 wins, and as heavy in
    his games apart. The sign test could reach 3**-13 = 6.3e-7; the rank sums decide once
    they can reach q / (1000 m) = 0.01 / 3,000, whatever the sign test could reach."""
    wins = [game(f"w{i}", ("B", "F", "x", "y"), (0, 50, 10, 20)) for i in range(13)]

    def apart(games: int) -> list[TableObs]:
        return [game(f"n{i}", (f"z{i}", "F", "x", "y"), (0, 50, 10, 20)) for i in range(games)]

    # 8 games apart: 1 / C(21, 13) = 1 / 203,490 cannot reach 1 / 300,000, so the sign test.
    result = detect_pointflow(wins + apart(8))
    assert result.family_size == 3
    [flag] = result.flags
    assert (flag.feeder, flag.test, flag.baseline_games, flag.heaviest) == ("F", "sign", 8, 13)
    assert flag.p == pytest.approx(3.0**-13, rel=1e-12)
    # 9 games apart: C(22, 13) = 497,420 >= 300,000, so the rank sums, where F's hands in
    # B's wins tie his hands apart and the ties count against the pair: p = 1, no flag
    # (the sign test, still at 3**-13, would flag him).
    result = detect_pointflow(wins + apart(9))
    assert (result.family_size, result.flags) == (3, ())


def test_without_a_baseline_the_feeder_is_compared_with_the_losing_strangers() -> None:
    # A farm of three: F and G both feed B and play nowhere else; x is a stranger. G holds
    # 60 or 40 by turns, so F (50) holds the heaviest losing hand in only 4 of 8 games.
    tables = [
        game(f"w{i}", ("B", "F", "G", "x"), (0, 50, 60 if i % 2 else 40, 10)) for i in range(8)
    ]
    alone = detect_pointflow(tables)
    assert (alone.family_size, alone.flags) == (3, ())
    # Co-seating found the three queueing together: G is no stranger, F and G are each
    # heavier than x in all 8, p = 2**-8; x has no losing stranger left to compare with.
    result = detect_pointflow(tables, queued=[("B", "F"), ("B", "G"), ("F", "G")])
    assert result.family_size == 3
    assert [(f.feeder, f.test, f.baseline_games, f.heaviest) for f in result.flags] == [
        ("F", "sign", 0, 8),
        ("G", "sign", 0, 8),
    ]
    for flag in result.flags:
        assert flag.shared_wins == 8
        assert flag.expected == 4
        assert flag.p == pytest.approx(2.0**-8, rel=1e-12)
        assert flag.q == pytest.approx(1.5 * 2.0**-8, rel=1e-12)


def test_too_few_shared_wins_are_not_tested() -> None:
    tables = [game(f"w{i}", ("B", "F", "x", "y"), (0, 50, 10, 20)) for i in range(4)]
    result = detect_pointflow(tables)
    assert (result.family_size, result.flags) == (0, ())
    assert detect_pointflow(tables, min_shared_wins=4).family_size == 3


def test_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="min_shared_wins"):
        detect_pointflow([], min_shared_wins=0)


def small_pool(seed: int) -> list[TableObs]:
    """60 players, about 4,400 tables: pairs meet often, many ordered pairs get tested."""
    return honest_tables(seed, n_players=60, hours=100, active=40, games=(3, 4, 5, 6))


def test_honest_population_rarely_flags() -> None:
    runs_with_flags = 0
    for seed in range(20):
        result = detect_pointflow(small_pool(seed))
        assert result.family_size > 1000
        runs_with_flags += bool(result.flags)
    assert runs_with_flags <= 1


def feed(tables: list[TableObs], feeder: str, beneficiary: str, indices: range) -> list[TableObs]:
    """Seat the pair together at ``indices``; the beneficiary goes out, the feeder keeps a
    heavy hand (what it would have held plus 40 points of wilds and actions)."""
    rng = random.Random(f"{feeder}{beneficiary}")
    out = seat_together(tables, [beneficiary, feeder], indices)
    for i in indices:
        hands = list(honest_hands(rng, len(out[i].players)))
        hands[0], hands[1] = 0, max(hands[1:]) + 40
        hands[2:] = [h or 5 for h in hands[2:]]
        out[i] = make_table(out[i].game_id, out[i].hour, out[i].players, hands)
    return out


def test_injected_feeders_are_found_with_exact_ranks() -> None:
    tables = small_pool(77)
    tables = feed(tables, "p0001", "p0002", range(0, 4000, 130))  # 31 fed wins
    # The second pair also shares 6 honest wins of p0004, which dilute its evidence.
    tables = feed(tables, "p0003", "p0004", range(101, 4000, 190))  # 21 fed wins
    result = detect_pointflow(tables)
    ranked = [(f.feeder, f.beneficiary) for f in result.flags]
    assert ranked == [("p0001", "p0002"), ("p0003", "p0004")]
    top = result.flags[0]
    assert top.feeder_baseline is not None
    assert top.feeder_mean > top.feeder_baseline + 40
    assert top.flow_to_beneficiary > top.flow_to_feeder
    assert top.heaviest >= 31


def test_the_bound_in_place_of_large_p_values_changes_no_flag() -> None:
    """Where the normal tail is 10 q or more, Hoeffding's bound stands in for the count: the
    same pairs are flagged with the same p-values as when every rank sum is counted, and
    the q-values move only up (BH over p-values no smaller)."""
    tables = feed(small_pool(77), "p0001", "p0002", range(0, 4000, 130))
    tables = feed(tables, "p0003", "p0004", range(101, 4000, 190))
    gated = detect_pointflow(tables)
    with mock.patch.object(pointflow, "_EXACT_BELOW", 1e9):
        counted = detect_pointflow(tables)
    assert gated.family_size == counted.family_size > 1000
    assert [(f.feeder, f.beneficiary, f.p) for f in gated.flags] == [
        (f.feeder, f.beneficiary, f.p) for f in counted.flags
    ]
    assert all(g.q >= c.q for g, c in zip(gated.flags, counted.flags, strict=True))


def test_honest_friends_raise_no_flag_where_luces_axiom_fails() -> None:
    """Thurstone's winner model (:func:`~tests.integrity.domain.sim.thurstone_week`): the
    hands of a strong player's friend in his wins are those of a loser, like anyone's."""
    found = [detect_pointflow(thurstone_week(seed), queued=FRIENDS) for seed in (1, 2, 3)]
    sizes_and_flags = [(result.family_size, len(result.flags)) for result in found]
    assert sizes_and_flags == [(92, 0), (75, 0), (83, 0)]
