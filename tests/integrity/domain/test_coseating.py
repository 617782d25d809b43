"""Tests for co-seating beyond the matchmaker (SPEC §7)."""

from __future__ import annotations

import math
import random
from collections import Counter
from itertools import combinations

import pytest

from integrity.domain.coseating import VERSION, detect_coseating
from integrity.domain.data import TableObs

from .sim import honest_tables, make_table, seat_together


def table(gid: str, hour: int, seated: tuple[str, ...]) -> TableObs:
    return make_table(gid, hour, seated, [0] + [10] * (len(seated) - 1))


def rotation(seed: int, hours: int = 6) -> list[TableObs]:
    """16 players, 4 tables an hour; a and b always together, the rest drawn at random."""
    rng = random.Random(seed)
    others = [f"x{i:02d}" for i in range(14)]
    tables = []
    for hour in range(hours):
        rng.shuffle(others)
        seats = [("a", "b", *others[:2])] + [tuple(others[i : i + 4]) for i in (2, 6, 10)]
        tables += [table(f"g{hour}-{t}", 100 + hour, s) for t, s in enumerate(seats)]
    return tables


def shared_counts(tables: list[TableObs]) -> Counter[tuple[str, str]]:
    counts: Counter[tuple[str, str]] = Counter()
    for t in tables:
        counts.update(combinations(sorted(t.players), 2))
    return counts


def test_hand_computed_pair() -> None:
    tables = rotation(seed=7)
    counts = shared_counts(tables)
    assert max(n for pair, n in counts.items() if pair != ("a", "b")) <= 3  # precondition
    result = detect_coseating(tables, min_games=6, min_common_hours=2)
    # Every hour: S = 16 seats, one each; P(b at a's table) = 3 * 1 / (16 - 1) = 0.2.
    # a and b met in all 6 hours: p = 0.2^6. Every pair of the 16 was co-active 6 hours:
    # m = C(16, 2) = 120. Others met <= 3 times (p >= P(Bin(6, .2) >= 3) ~ 0.099), so the
    # BH q-value of a-b is m p / 1.
    assert result.family_size == 120
    assert result.family_size_exact is True
    assert result.tested == sum(1 for n in counts.values() if n >= 2)
    assert result.version == VERSION == "coseat-1"
    assert len(result.flags) == 1
    flag = result.flags[0]
    assert flag.players == ("a", "b")
    assert flag.shared == 6
    assert flag.trials == 6
    assert flag.games == (6, 6)
    assert flag.common_hours == 6
    assert flag.expected == pytest.approx(1.2, rel=1e-12)
    assert flag.p == pytest.approx(0.2**6, rel=1e-12)
    assert flag.q == pytest.approx(120 * 0.2**6, rel=1e-12)
    assert flag.strength == pytest.approx(-math.log10(120 * 0.2**6), rel=1e-12)


def test_players_sorted_and_games_follow_them() -> None:
    # Each hour: zed plays 2 games, one with amy; 3 filler tables; S = 20 seats.
    # Trials = min(2, 1) = 1 with p = 3 * 2 / (20 - 2) = 1/3; six hours: p = 3^-6.
    tables = []
    for h in range(6):
        tables.append(table(f"g{h}", h, ("zed", "amy", f"o{h}a", f"o{h}b")))
        tables.append(table(f"h{h}", h, ("zed", f"q{h}a", f"q{h}b", f"q{h}c")))
        tables += [table(f"f{h}{t}", h, tuple(f"f{h}{t}{s}" for s in range(4))) for t in range(3)]
    result = detect_coseating(tables, min_games=6, min_common_hours=2)
    assert result.family_size == 1
    [flag] = result.flags
    assert flag.players == ("amy", "zed")
    assert flag.games == (6, 12)
    assert flag.p == pytest.approx(3.0**-6, rel=1e-12)
    assert flag.q == flag.p


def test_min_games_and_common_hours_define_the_family() -> None:
    tables = rotation(seed=7)
    assert detect_coseating(tables, min_games=7).family_size == 0
    assert detect_coseating(tables, min_games=7).flags == ()
    assert detect_coseating(tables, min_games=6, min_common_hours=7).family_size == 0


def test_family_size_bound_when_over_the_cap() -> None:
    # Hour 1: players A0..A7; hour 2: B0..B7; every pair within a group co-active once.
    tables = []
    for group, hour in (("A", 1), ("B", 2)):
        names = [f"{group}{i}" for i in range(8)]
        tables += [table(f"{group}{t}", hour, tuple(names[4 * t : 4 * t + 4])) for t in (0, 1)]
        tables += [table(f"{group}{t}r", hour, tuple(names[t::2])) for t in (0, 1)]
    exact = detect_coseating(tables, min_games=2, min_common_hours=1)
    bound = detect_coseating(tables, min_games=2, min_common_hours=1, exact_family_cap=0)
    assert (exact.family_size, exact.family_size_exact) == (56, True)
    # min(C(16, 2) = 120, pair-hours 2 * C(8, 2) = 56 // 1) = 56
    assert (bound.family_size, bound.family_size_exact) == (56, False)


def test_result_does_not_depend_on_table_order() -> None:
    tables = seat_together(
        honest_tables(5, n_players=120, hours=20, active=80), ["p0001", "p0002"], range(0, 800, 40)
    )
    shuffled = list(tables)
    random.Random(9).shuffle(shuffled)
    assert detect_coseating(shuffled) == detect_coseating(tables)


def test_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="0 < q < 1"):
        detect_coseating([], q=0.0)
    with pytest.raises(ValueError, match="min_common_hours"):
        detect_coseating([], min_common_hours=0)


def test_honest_population_rarely_flags() -> None:
    """All-null seasons: BH at q = 0.01 bounds P(any discovery) by about 0.01 per season,
    and the model is conservative. On 20 seasons at most one may flag anything (this can
    fail if the p-values were anti-conservative: it would then fail most of the time)."""
    runs_with_flags = 0
    for seed in range(20):
        # Every pair of the 400 is co-active in >= 2 hours, so the cheap bound on m is
        # C(400, 2), the exact count (up to a pair or two); it keeps the suite fast.
        result = detect_coseating(honest_tables(seed), exact_family_cap=0)
        assert result.family_size == 79_800
        runs_with_flags += bool(result.flags)
    assert runs_with_flags <= 1


def test_injected_farm_and_pair_are_found_with_exact_ranks() -> None:
    tables = honest_tables(42)
    by_hour: dict[int, list[int]] = {}
    for i, t in enumerate(tables):
        by_hour.setdefault(t.hour, []).append(i)
    hours = sorted(by_hour)
    farm = ["p0010", "p0011", "p0012"]
    # The farm queues together: two tables an hour in 12 hours (24 shared tables each pair).
    farm_tables = [i for h in hours[:12] for i in by_hour[h][:2]]
    # A colluding pair: one table in each of 9 other hours.
    pair = ["p0200", "p0300"]
    pair_tables = [by_hour[h][5] for h in hours[20:29]]
    tables = seat_together(seat_together(tables, farm, farm_tables), pair, pair_tables)
    result = detect_coseating(tables)
    ranked = [f.players for f in result.flags]
    assert set(ranked[:3]) == {("p0010", "p0011"), ("p0010", "p0012"), ("p0011", "p0012")}
    assert ranked[3:] == [("p0200", "p0300")]
    assert all(f.shared >= 24 for f in result.flags[:3])
    assert result.flags[3].shared >= 9
    assert [f.p for f in result.flags] == sorted(f.p for f in result.flags)
