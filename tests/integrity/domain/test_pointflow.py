"""Tests for point flow / feeding (SPEC §7: collusion, giving away points)."""

from __future__ import annotations

import random

import pytest

from integrity.domain.data import TableObs
from integrity.domain.pointflow import VERSION, detect_pointflow

from .sim import honest_hands, honest_tables, make_table, seat_together


def game(gid: str, seated: tuple[str, ...], hands: tuple[int, ...]) -> TableObs:
    return make_table(gid, 1, seated, hands)


def test_hand_computed_feeder() -> None:
    # B wins 5 games; F holds 50 against the others' 10 and 20: F holds the heaviest
    # non-winning hand in all 5; one of three non-winners holds it, so pi = 1/3.
    tables = [game(f"w{i}", ("B", "F", "x", "y"), (0, 50, 10, 20)) for i in range(5)]
    # F's lost games without B: the baseline (10 + 20) / 2 = 15.
    tables += [game("n1", ("z", "F", "x", "y"), (0, 10, 30, 40))]
    tables += [game("n2", ("z", "F", "x", "y"), (0, 20, 30, 40))]
    result = detect_pointflow(tables, q=0.05)
    # Ordered pairs with >= 5 shared B-wins: (F, B), (x, B), (y, B).
    assert result.family_size == 3
    assert result.version == VERSION == "pointflow-1"
    [flag] = result.flags
    assert (flag.feeder, flag.beneficiary) == ("F", "B")
    assert flag.players == ("B", "F")
    assert (flag.shared_wins, flag.heaviest) == (5, 5)
    assert flag.expected == pytest.approx(5 / 3, rel=1e-12)
    assert flag.p == pytest.approx(3.0**-5, rel=1e-12)
    assert flag.q == pytest.approx(3 * 3.0**-5, rel=1e-12)
    assert flag.mean_excess == pytest.approx(50 - 15, rel=1e-12)
    assert flag.feeder_mean == 50
    assert flag.feeder_baseline == 15
    assert (flag.flow_to_beneficiary, flag.flow_to_feeder, flag.reverse_wins) == (250, 0, 0)
    # At q = 0.01 the same evidence (q-value 0.0123) is not a discovery.
    assert detect_pointflow(tables).flags == ()


def test_null_probability_is_exact_with_ties() -> None:
    # Non-winners (30, 30, 1): two of three hold the heaviest hand -> pi = 2/3; F is one.
    tables = [game(f"t{i}", ("B", "F", "x", "y"), (0, 30, 30, 1)) for i in range(6)]
    # All equal: everyone holds the heaviest hand, pi = 1, a certain success.
    tables += [game("eq", ("B", "F", "x", "y"), (0, 10, 10, 10))]
    # F below x: a failure with pi = 1/3.
    tables += [game("lo", ("B", "F", "x", "y"), (0, 10, 20, 5))]
    result = detect_pointflow(tables, q=0.99)
    flag = next(f for f in result.flags if f.feeder == "F")
    assert (flag.shared_wins, flag.heaviest) == (8, 7)
    assert flag.expected == pytest.approx(6 * 2 / 3 + 1 + 1 / 3, rel=1e-12)
    # P(X >= 7): the certain game succeeds; of the other 7, at least 6 must.
    six, one = (2 / 3) ** 6, 1 / 3
    exact = six * one + six * (1 - one) + 6 * (2 / 3) ** 5 * (1 / 3) * one
    assert flag.p == pytest.approx(exact, rel=1e-12)
    assert flag.feeder_baseline is None


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
