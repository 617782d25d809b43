"""Tests for the detectors' shared statistics: log-space tails and Benjamini–Hochberg."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations, product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from integrity.domain.stats import (
    _log_wins_polynomial,
    _wins_polynomial,
    bh_log_qvalues,
    bh_qvalues,
    log_binomial_sf,
    log_fisher_combined,
    log_fisher_lower,
    log_luce_tails,
    log_normal_sf,
    log_poisson_binomial_sf,
    log_poisson_sf,
    normal_sf,
)

E = math.e


def exact_log(value: Fraction) -> float:
    """log of an exact rational, however small (big-int logs do not underflow)."""
    return math.log(value.numerator) - math.log(value.denominator)


def brute_pb_sf(k: int, probs: list[float]) -> float:
    total = 0.0
    for outcome in product((0, 1), repeat=len(probs)):
        if sum(outcome) >= k:
            total += math.prod(p if o else 1 - p for p, o in zip(probs, outcome, strict=True))
    return total


# --- Poisson ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "mu", "expected"),
    [
        (0, 2.0, 1.0),
        (-3, 2.0, 1.0),
        (1, 2.0, 1 - E**-2),
        (3, 2.0, 1 - 5 * E**-2),  # 1 - e^-2 (1 + 2 + 2)
        (2, 1.0, 1 - 2 / E),
        (1, 0.5, 1 - E**-0.5),
        (4, 0.5, 1 - E**-0.5 * (1 + 0.5 + 0.125 + 0.5**3 / 6)),
    ],
)
def test_poisson_sf_hand_values(k: int, mu: float, expected: float) -> None:
    assert math.exp(log_poisson_sf(k, mu)) == pytest.approx(expected, rel=1e-12)


def test_poisson_sf_far_tail_in_log_space() -> None:
    # P(X >= 200 | mu = 1) = e^-1 * sum_{j >= 200} 1/j!  (about 1e-375: below float range).
    tail = sum((Fraction(1, math.factorial(j)) for j in range(200, 260)), Fraction(0))
    assert log_poisson_sf(200, 1.0) == pytest.approx(-1 + exact_log(tail), rel=1e-13)


def test_poisson_sf_zero_mean_and_bad_mean() -> None:
    assert log_poisson_sf(1, 0.0) == -math.inf
    assert log_poisson_sf(0, 0.0) == 0.0
    with pytest.raises(ValueError, match="mu must be >= 0"):
        log_poisson_sf(1, -0.1)


def test_poisson_sf_large_mean_both_branches() -> None:
    # Ramanujan: for an integer mean n, P(X >= n) = 1/2 + theta_n P(X = n) with
    # theta_n = 1/3 + 4/(135 n) + O(n^-2). k = n takes the lower-sum branch, k = n + 1
    # the upper one; their difference is P(X = n).
    n = 10_000
    pmf = math.exp(n * math.log(n) - n - math.lgamma(n + 1))
    at_mean = math.exp(log_poisson_sf(n, float(n)))
    above = math.exp(log_poisson_sf(n + 1, float(n)))
    assert at_mean == pytest.approx(0.5 + (1 / 3 + 4 / (135 * n)) * pmf, rel=1e-10)
    assert at_mean - above == pytest.approx(pmf, abs=1e-10)


# --- Binomial / sign test -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "n", "p", "expected"),
    [
        (8, 10, 0.5, 56 / 1024),  # sign test: C(10,8) + C(10,9) + C(10,10) = 56
        (3, 10, 0.5, 968 / 1024),  # 1 - (1 + 10 + 45) / 1024
        (1, 3, 0.2, 1 - 0.8**3),
        (3, 3, 0.2, 0.2**3),
        (0, 5, 0.3, 1.0),
    ],
)
def test_binomial_sf_hand_values(k: int, n: int, p: float, expected: float) -> None:
    assert math.exp(log_binomial_sf(k, n, p)) == pytest.approx(expected, rel=1e-12)


def test_binomial_sf_edges() -> None:
    assert log_binomial_sf(11, 10, 0.5) == -math.inf
    assert log_binomial_sf(1, 10, 0.0) == -math.inf
    assert log_binomial_sf(10, 10, 1.0) == 0.0
    assert log_binomial_sf(500, 500, 0.01) == pytest.approx(500 * math.log(0.01), rel=1e-13)
    with pytest.raises(ValueError, match="0 <= p <= 1"):
        log_binomial_sf(1, 10, 1.5)


# --- Poisson-binomial ---------------------------------------------------------------------


def test_poisson_binomial_hand_values() -> None:
    assert math.exp(log_poisson_binomial_sf(1, [0.5, 0.2])) == pytest.approx(0.6, rel=1e-12)
    assert math.exp(log_poisson_binomial_sf(2, [0.5, 0.2])) == pytest.approx(0.1, rel=1e-12)
    assert log_poisson_binomial_sf(3, [0.5, 0.2]) == -math.inf
    assert log_poisson_binomial_sf(0, []) == 0.0


def test_poisson_binomial_equal_probabilities_is_binomial() -> None:
    for k in range(11):
        assert log_poisson_binomial_sf(k, [0.3] * 10) == pytest.approx(
            log_binomial_sf(k, 10, 0.3), rel=1e-12, abs=1e-14
        )


def test_poisson_binomial_underflow_switches_to_log_space() -> None:
    # 400 trials of 1%: all succeed with probability 1e-800, far below float range.
    assert log_poisson_binomial_sf(400, [0.01] * 400) == pytest.approx(
        400 * math.log(0.01), rel=1e-12
    )
    probs = [0.01] * 300 + [0.5] * 100
    assert log_poisson_binomial_sf(390, probs) < math.log(1e-300)


def test_poisson_binomial_budget_uses_the_hoeffding_bound() -> None:
    probs = [0.01, 0.02, 0.03] * 40
    exact = log_poisson_binomial_sf(10, probs)
    bounded = log_poisson_binomial_sf(10, probs, max_cells=100)
    assert bounded == log_binomial_sf(10, 120, math.fsum(probs) / 120)
    assert exact < bounded


def test_poisson_binomial_rejects_bad_probability() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        log_poisson_binomial_sf(1, [0.5, 1.2])


probabilities = st.lists(st.floats(0.0, 1.0), min_size=0, max_size=9)


@given(probs=probabilities, k=st.integers(-1, 10))
def test_poisson_binomial_matches_enumeration(probs: list[float], k: int) -> None:
    expected = brute_pb_sf(k, probs)
    got = math.exp(log_poisson_binomial_sf(k, probs))
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-300)


@settings(max_examples=300)
@given(
    probs=st.lists(st.floats(0.0, 0.9), min_size=1, max_size=60),
    extra=st.integers(0, 30),
)
def test_tail_ordering_beyond_mean_plus_one(probs: list[float], extra: int) -> None:
    """For k >= mu + 1: Poisson-binomial <= Binomial(n, mean) (Hoeffding 1956) <= Poisson
    (Anderson & Samuels 1967) — the bounds the detectors rely on are conservative."""
    n = len(probs)
    mu = math.fsum(probs)
    k = math.ceil(mu + 1) + extra
    if k > n:
        return
    exact = log_poisson_binomial_sf(k, probs)
    binom = log_binomial_sf(k, n, min(1.0, mu / n))
    poisson = log_poisson_sf(k, mu)
    assert exact <= binom + 1e-9
    assert binom <= poisson + 1e-9


@given(probs=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30), k=st.integers(0, 30))
def test_poisson_binomial_monotone(probs: list[float], k: int) -> None:
    """Raising one probability, or lowering k, never lowers the tail."""
    base = log_poisson_binomial_sf(k, probs)
    raised = [*probs[:-1], min(1.0, probs[-1] + 0.1)]
    assert log_poisson_binomial_sf(k, raised) >= base - 1e-12
    assert log_poisson_binomial_sf(k - 1, probs) >= base - 1e-12


# --- Normal -------------------------------------------------------------------------------


def test_normal_tail() -> None:
    assert normal_sf(0.0) == 0.5
    assert normal_sf(1.959963984540054) == pytest.approx(0.025, rel=1e-12)
    assert normal_sf(-1.959963984540054) == pytest.approx(0.975, rel=1e-12)
    assert math.exp(log_normal_sf(3.0)) == pytest.approx(0.0013498980316301, rel=1e-12)
    # Asymptotic series beyond 30: continuous at the switch, finite far past underflow.
    assert log_normal_sf(30.0) == pytest.approx(log_normal_sf(29.999999), rel=1e-6)
    assert log_normal_sf(30.0) == pytest.approx(math.log(normal_sf(30.0)), rel=1e-12)
    assert log_normal_sf(100.0) == pytest.approx(-5005.524208, rel=1e-9)


# --- Benjamini–Hochberg -------------------------------------------------------------------


def test_fishers_combination_hand_values() -> None:
    # one p-value is itself; two: p1 p2 (1 - log(p1 p2)); three: e^-s (1 + s + s^2 / 2)
    assert log_fisher_combined([math.log(0.03)]) == pytest.approx(math.log(0.03), rel=1e-12)
    assert math.exp(log_fisher_combined([math.log(0.1), math.log(0.02)])) == pytest.approx(
        0.002 * (1 - math.log(0.002)), rel=1e-12
    )
    s = -math.log(0.5 * 0.2 * 0.01)
    assert math.exp(log_fisher_combined([math.log(v) for v in (0.5, 0.2, 0.01)])) == (
        pytest.approx(math.exp(-s) * (1 + s + s * s / 2), rel=1e-12)
    )
    assert log_fisher_combined([]) == 0.0
    assert log_fisher_combined([0.0, 0.0]) == 0.0
    assert log_fisher_combined([-math.inf, -1.0]) == -math.inf
    # far tails stay finite in log space: -s + log(1 + s) for s = 2000
    assert log_fisher_combined([-1000.0, -1000.0]) == pytest.approx(-2000 + math.log(2001))


@given(st.lists(st.floats(min_value=1e-12, max_value=1.0), min_size=1, max_size=6))
def test_fishers_combination_is_the_chi_square_tail(p_values: list[float]) -> None:
    from scipy.stats import chi2

    statistic = -2 * math.fsum(math.log(p) for p in p_values)
    expected = chi2.sf(statistic, 2 * len(p_values))
    got = math.exp(log_fisher_combined([math.log(p) for p in p_values]))
    assert got == pytest.approx(min(1.0, expected), rel=1e-9, abs=1e-300)


def test_bh_worked_example() -> None:
    # sorted: 0.005 (r1), 0.01 (r2), 0.03 (r3), 0.04 (r4); m p / r = .02 .02 .04 .04
    assert bh_qvalues([0.01, 0.04, 0.03, 0.005]) == pytest.approx(
        [0.02, 0.04, 0.04, 0.02], rel=1e-12
    )


def test_bh_ties_get_equal_qvalues() -> None:
    # m p / r = 0.03, 0.015, 0.03 -> suffix minima 0.015, 0.015, 0.03
    assert bh_qvalues([0.01, 0.01, 0.03]) == pytest.approx([0.015, 0.015, 0.03], rel=1e-12)


def test_bh_family_larger_than_supplied() -> None:
    assert bh_qvalues([0.001, 0.02], m=10) == pytest.approx([0.01, 0.1], rel=1e-12)
    assert bh_qvalues([0.5, 0.9], m=5) == [1.0, 1.0]
    assert bh_qvalues([0.0, 0.3]) == pytest.approx([0.0, 0.3], rel=1e-12)
    assert bh_qvalues([]) == []
    with pytest.raises(ValueError, match="smaller than the 2"):
        bh_qvalues([0.1, 0.2], m=1)


def test_bh_log_space_keeps_tiny_pvalues_apart() -> None:
    logs = bh_log_qvalues([-2000.0, -1000.0, math.log(0.5)], m=3)
    assert logs == pytest.approx(
        [-2000.0 + math.log(3), -1000.0 + math.log(1.5), math.log(0.5) + math.log(1)]
    )


def step_up(p_values: list[float], q: float, m: int) -> set[int]:
    """Reference step-up rule: reject the r smallest, r the largest with p_(r) <= r q / m."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    r = max((rank for rank, i in enumerate(order, 1) if p_values[i] <= rank * q / m), default=0)
    return set(order[:r])


pvalue_lists = st.lists(st.floats(0.0, 1.0), min_size=1, max_size=40)


@given(p_values=pvalue_lists, q=st.floats(0.001, 0.5), extra=st.integers(0, 50))
def test_bh_qvalues_match_the_step_up_rule(p_values: list[float], q: float, extra: int) -> None:
    m = len(p_values) + extra
    qvalues = bh_qvalues(p_values, m=m)
    rejected = {i for i, value in enumerate(qvalues) if value <= q * (1 + 1e-12)}
    reference = step_up(p_values, q, m)
    # Equal up to rounding at the boundary: anything in one set and not the other sits there.
    for i in rejected ^ reference:
        assert qvalues[i] == pytest.approx(q, rel=1e-9)


@given(p_values=pvalue_lists, q1=st.floats(0.001, 0.5), q2=st.floats(0.001, 0.5))
def test_bh_monotone_in_q(p_values: list[float], q1: float, q2: float) -> None:
    low, high = sorted((q1, q2))
    qvalues = bh_qvalues(p_values)
    rejected_low = {i for i, value in enumerate(qvalues) if value <= low}
    rejected_high = {i for i, value in enumerate(qvalues) if value <= high}
    assert rejected_low <= rejected_high
    assert rejected_low == step_up(p_values, low, len(p_values)) or any(
        qvalues[i] == pytest.approx(low, rel=1e-9)
        for i in rejected_low ^ step_up(p_values, low, len(p_values))
    )


@given(p_values=pvalue_lists, index=st.integers(0, 39), bump=st.floats(0.0, 1.0))
def test_bh_monotone_in_p(p_values: list[float], index: int, bump: float) -> None:
    """Raising a p-value (e.g. to 1 for an untested pair) never adds a discovery."""
    index %= len(p_values)
    raised = list(p_values)
    raised[index] = min(1.0, raised[index] + bump)
    before = bh_qvalues(p_values)
    after = bh_qvalues(raised)
    assert all(a >= b - 1e-12 for a, b in zip(after, before, strict=True))


# --- Luce's conditional test of wins -------------------------------------------------------


def brute_luce(
    x: int, first: list[Fraction], second: list[Fraction], wins: int, upper: bool
) -> Fraction:
    """P(X >= x) (or <= x) by enumerating every set of ``wins`` won games, each weighted by
    the product of 1/S over its games (the odds ratio against the player's strength)."""
    games = [(True, k) for k in first] + [(False, k) for k in second]
    total = tail = Fraction(0)
    for chosen in combinations(range(len(games)), wins):
        weight = math.prod(1 / games[i][1] for i in chosen)
        landed = sum(1 for i in chosen if games[i][0])
        total += weight
        if (landed >= x) if upper else (landed <= x):
            tail += weight
    return tail / total


#: Rivals' summed strengths: whole numbers of unit rivals and fitted strengths alike.
strengths = st.fractions(Fraction(1, 4), Fraction(6), max_denominator=8)


@settings(max_examples=60, deadline=None)
@given(
    first=st.lists(strengths, min_size=1, max_size=6),
    second=st.lists(strengths, min_size=1, max_size=6),
    data=st.data(),
)
def test_luce_tail_matches_enumeration(
    first: list[Fraction], second: list[Fraction], data: st.DataObject
) -> None:
    wins = data.draw(st.integers(0, len(first) + len(second)))
    x = data.draw(st.integers(0, len(first)))
    for upper in (True, False):
        expected = brute_luce(x, first, second, wins, upper)
        got = log_luce_tails(x, [float(s) for s in first], [float(s) for s in second], wins)[
            0 if upper else 1
        ]
        if expected == 0:
            assert got == -math.inf
        else:
            assert got == pytest.approx(exact_log(expected), abs=1e-9)


def test_luce_tail_with_one_rival_count_is_fishers_test() -> None:
    # 5 games together and 7 apart, all against three strangers, 6 won, 2 of them together
    assert log_luce_tails(2, [3.0] * 5, [3.0] * 7, 6)[1] == pytest.approx(
        log_fisher_lower(2, 5, 6, 12)
    )
    # the same games against one, two or three strangers: weaker rivals make wins together
    # less surprising when the together games hold fewer of them
    together_two = math.exp(log_luce_tails(4, [2.0] * 5, [3.0] * 7, 6)[0])
    together_three = math.exp(log_luce_tails(4, [3.0] * 5, [3.0] * 7, 6)[0])
    assert together_three < together_two
    two, three = [Fraction(2)] * 5, [Fraction(3)] * 7
    assert together_two == pytest.approx(float(brute_luce(4, two, three, 6, True)))


def test_luce_tail_sums_in_logs_where_the_coefficients_underflow() -> None:
    """2,000 games against rivals of strength 1e-3 and 1e3: the floating-point sums lose the
    far coefficients, the sums in logs keep them, and the tail equals Fisher's test of the
    same counts where every rival is alike."""
    far = log_luce_tails(0, [1e-3] * 1000, [1e3] * 1000, 1000)[1]
    # P(X <= 0) = e_1000(second) / Σ_j e_j(first) e_1000-j(second) <= the j = 0 term over
    # the j = 1000 one, (1e-3) ** 1000 / (1e3) ** 1000
    assert -math.inf < far <= -6000 * math.log(10.0)
    rivals = [0.5 + (k % 7) / 3 for k in range(300)]
    assert _wins_polynomial(rivals, 120) == pytest.approx(_log_wins_polynomial(rivals, 120))
    same = log_luce_tails(400, [7.0] * 1000, [7.0] * 1000, 1000)[1]
    assert same == pytest.approx(log_fisher_lower(400, 1000, 1000, 2000), rel=1e-9)


def test_luce_tail_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError, match="7 wins in 6 games"):
        log_luce_tails(0, [1.0] * 3, [2.0] * 3, 7)[0]
    with pytest.raises(ValueError, match="rivals of positive strength"):
        log_luce_tails(0, [0.0] * 3, [2.0] * 3, 1)[0]
