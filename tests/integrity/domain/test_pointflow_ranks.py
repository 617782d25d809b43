"""Tests for the rank-sum test behind point flow (stats.rank_sum, stats.log_rank_sum_sf)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest

from integrity.domain.stats import log_rank_sum_sf, normal_sf, rank_sum


def test_rank_sum_breaks_ties_against_the_first_sample() -> None:
    # Pooled 1, 2, 2, 2, 3: the first sample's 2 and 2 take ranks 2 and 3, the second's 4.
    assert rank_sum([1, 2, 2], [2, 3]) == 1 + 2 + 3
    assert rank_sum([Fraction(1, 3)], [Fraction(2, 6)]) == 1
    assert rank_sum([], [5]) == 0


def test_rank_sum_orders_values_whose_floats_tie_exactly() -> None:
    third, above = Fraction(1, 3), Fraction(1, 3) + Fraction(1, 10**20)
    assert float(third) == float(above)
    assert rank_sum([above], [third]) == 2
    assert rank_sum([third], [above]) == 1
    assert rank_sum([above, 0.25, 7], [third, Fraction(1, 4), 7]) == 4 + 1 + 5


@pytest.mark.parametrize("total", range(1, 10))
def test_tail_is_exact_against_enumeration(total: int) -> None:
    for n in range(total + 1):
        sums = [sum(c) for c in itertools.combinations(range(1, total + 1), n)]
        for observed in range(min(sums) - 1, max(sums) + 2):
            exact = sum(s >= observed for s in sums) / len(sums)
            assert math.exp(log_rank_sum_sf(observed, n, total)) == pytest.approx(exact, rel=1e-12)
            # Beyond max_cells, Hoeffding's bound: never below the exact tail.
            assert math.exp(log_rank_sum_sf(observed, n, total, max_cells=0)) >= exact * (1 - 1e-12)


def test_hand_values() -> None:
    # The top 5 of 11 ranks: 1 / C(11, 5); 5 below the top: 19 subsets (partitions of 0..5).
    assert math.exp(log_rank_sum_sf(45, 5, 11)) == pytest.approx(1 / 462, rel=1e-12)
    assert math.exp(log_rank_sum_sf(40, 5, 11)) == pytest.approx(19 / 462, rel=1e-12)
    assert log_rank_sum_sf(46, 5, 11) == -math.inf
    assert log_rank_sum_sf(15, 5, 11) == 0.0
    # Far tails stay finite in log space: the top 60 of 1,000 ranks.
    top = sum(range(941, 1001))
    assert log_rank_sum_sf(top, 60, 1000) == pytest.approx(-math.log(math.comb(1000, 60)))
    # Hoeffding, one below the top of 2 of 5 ranks: mean rank 4, 1 over 3: exp(-2*2*1/16)
    # (exactly 2 of the 10 subsets sum to 8 or more).
    assert log_rank_sum_sf(8, 2, 5, max_cells=0) == pytest.approx(-0.25, rel=1e-12)
    assert log_rank_sum_sf(8, 2, 5) == pytest.approx(math.log(0.2), rel=1e-12)


def test_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError, match="n <= total"):
        log_rank_sum_sf(3, 4, 3)


def test_the_count_is_spent_only_below_exact_below() -> None:
    # 5 of 40 ranks, normal mean 102.5 and variance 5 * 35 * 41 / 12: at 140 the
    # continuity-corrected tail is 0.065, at 115 0.31.
    exact, bound = log_rank_sum_sf(140, 5, 40), log_rank_sum_sf(140, 5, 40, max_cells=0)
    assert log_rank_sum_sf(140, 5, 40, exact_below=0.1) == exact < bound
    assert log_rank_sum_sf(115, 5, 40, exact_below=0.1) == log_rank_sum_sf(115, 5, 40, max_cells=0)
    assert log_rank_sum_sf(115, 5, 40, exact_below=0.1) > log_rank_sum_sf(115, 5, 40)


@pytest.mark.parametrize("n", range(2, 21))
def test_where_the_exact_tail_reaches_one_percent_the_normal_one_is_below_ten(n: int) -> None:
    """Point flow counts exactly only where the normal tail is below 10 q: no p-value of 1 %
    or less is ever replaced by the bound (n shared wins against 1–100 baseline games; the
    largest normal tail at the smallest sum whose exact tail is 1 % or less: 0.018)."""
    worst = 0.0
    for baseline in range(1, 101):
        total = n + baseline
        low, high = n * (n + 1) // 2, n * (2 * total - n + 1) // 2
        if log_rank_sum_sf(high, n, total) > math.log(0.01):
            continue  # not even the top sum reaches 1 %
        while low < high:  # the smallest sum whose exact tail is 1 % or less
            middle = (low + high) // 2
            if log_rank_sum_sf(middle, n, total) <= math.log(0.01):
                high = middle
            else:
                low = middle + 1
        mean, sd = n * (total + 1) / 2, math.sqrt(n * baseline * (total + 1) / 12)
        worst = max(worst, normal_sf((low - 0.5 - mean) / sd))
    assert 0.01 < worst < 0.1
