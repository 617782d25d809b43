"""Co-seating over counted pairs (the entry point the SQL audit feeds): the candidacy rule,
the hand-computed statistic, BH over the streamed pairs equal to BH over every tested pair."""

from __future__ import annotations

import math
import random

import pytest

from integrity.domain.coseating import (
    PairCounts,
    coseating_from_counts,
    family_bound,
    hour_trials,
    is_candidate,
)
from integrity.domain.stats import bh_log_qvalues, log_poisson_binomial_sf


def test_hour_trials_follow_the_symmetric_null() -> None:
    # Hour 1: a 2 seats, b 1; k̄ = max(6/2, 3/1) = 3; p = 3 * 2 / (20 - 2) = 1/3, 1 trial.
    # Hour 2: both 3 seats, k̄ = 3; p = min(1, 3 * 3 / (10 - 3)) = 1, 3 trials.
    assert hour_trials([(2, 1, 6, 3, 20), (3, 3, 9, 9, 10)]) == [1 / 3, 1.0, 1.0, 1.0]


def test_family_bound() -> None:
    # 3 hours with 4, 2 and 1 eligible players active: 6 + 1 + 0 pair-hours.
    assert family_bound(5, [4, 2, 1], 2) == (7, 3)
    assert family_bound(3, [4, 2, 1], 1) == (7, 3)  # C(3, 2) = 3 < 7


def test_candidacy_is_by_opportunity_and_two_shared_tables() -> None:
    hours = ((1, 1, 3, 3, 40),) * 3
    pair = PairCounts(("a", "b"), (10, 12), 2, hours)
    assert is_candidate(pair, 10, 3)
    assert not is_candidate(PairCounts(("a", "b"), (10, 12), 1, hours), 10, 3)
    assert not is_candidate(PairCounts(("a", "b"), (9, 12), 2, hours), 10, 3)
    assert not is_candidate(pair, 10, 4)


def test_hand_computed_flag_and_skipped_pairs() -> None:
    # Six hours, one seat each of 16: p = 3 * 1 / 15 = 0.2 a game, shared 6 of 6.
    six = ((1, 1, 3, 3, 16),) * 6
    pairs = [
        PairCounts(("zed", "amy"), (6, 7), 6, six),
        PairCounts(("c", "d"), (6, 6), 1, six),  # one shared table: p = 1, not tested
        PairCounts(("e", "f"), (5, 6), 6, six),  # e below min_games: not in the family
    ]
    result = coseating_from_counts(
        pairs, family_size=120, family_size_exact=True, min_games=6, min_common_hours=2
    )
    assert result.tested == 1
    assert (result.family_size, result.family_size_exact) == (120, True)
    [flag] = result.flags
    assert (flag.players, flag.games, flag.shared, flag.trials, flag.common_hours) == (
        ("amy", "zed"),
        (7, 6),
        6,
        6,
        6,
    )
    assert flag.expected == pytest.approx(1.2, rel=1e-12)
    assert flag.p == pytest.approx(0.2**6, rel=1e-12)
    assert flag.q == pytest.approx(120 * 0.2**6, rel=1e-12)


def test_streamed_bh_equals_bh_over_every_tested_pair() -> None:
    rng = random.Random(3)
    pairs = []
    for i in range(400):
        hours = tuple(
            (rng.randint(1, 3), rng.randint(1, 3), 9, 9, rng.randint(40, 60))
            for _ in range(rng.randint(2, 8))
        )
        shared = rng.randint(2, 2 + len(hours))
        pairs.append(PairCounts((f"a{i:03d}", f"b{i:03d}"), (20, 20), shared, hours))
    q, m = 0.3, 2_000
    log_ps = [log_poisson_binomial_sf(p.shared, hour_trials(p.hours)) for p in pairs]
    log_qs = bh_log_qvalues(log_ps, m=m)
    expected = sorted(
        (log_p, pair.players, math.exp(log_q))
        for pair, log_p, log_q in zip(pairs, log_ps, log_qs, strict=True)
        if log_q <= math.log(q)
    )
    assert 10 < len(expected) < 400  # precondition: BH stops part-way

    result = coseating_from_counts(pairs, family_size=m, family_size_exact=True, q=q)

    assert result.tested == 400
    assert [(f.players, f.q) for f in result.flags] == [(pl, qv) for _, pl, qv in expected]


def test_more_tested_pairs_than_the_family_is_refused() -> None:
    hours = ((1, 1, 3, 3, 40),) * 2
    with pytest.raises(ValueError, match="2 pairs tested in a family of 1"):
        coseating_from_counts(
            [
                PairCounts(("a", "b"), (10, 10), 2, hours),
                PairCounts(("a", "c"), (10, 10), 2, hours),
            ],
            family_size=1,
            family_size_exact=False,
        )
