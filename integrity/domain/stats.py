"""Tail probabilities and false-discovery control for the integrity detectors (SPEC §7).

SPEC §7: statistics rank cases for human review and each detector states its false-positive
control. This module holds the shared arithmetic; it decides nothing by itself.

Data: counts, probabilities and p-values. Statistic: none of its own. Threshold: none of
its own (the detectors apply Benjamini–Hochberg at their level ``q``). False-positive
control: :func:`bh_log_qvalues` / :func:`bh_qvalues` (Benjamini & Hochberg 1995), which
control the false discovery rate at ``q`` for independent or positively dependent (PRDS)
p-values, and stay valid when ``m`` is an upper bound on the family size (the missing
hypotheses act as p = 1, which BH never rejects).

Every upper tail is computed in log space (natural logarithms), so a p-value of 1e-400
is a finite number and still ranks correctly against 1e-300:

* :func:`log_poisson_sf` — ``log P(X >= k)``, ``X ~ Poisson(mu)``.
* :func:`log_binomial_sf` — ``log P(X >= k)``, ``X ~ Binomial(n, p)``; the sign test is
  the case ``p = 1/2``.
* :func:`log_poisson_binomial_sf` — ``log P(X >= k)`` for a sum of independent Bernoulli
  trials with probabilities ``probs``: exact by dynamic programming over the count
  (states ``0..k-1`` plus an absorbing ``>= k``; ``len(probs) * k`` cells). When that would
  exceed ``max_cells`` and ``k >= mu + 1`` (``mu = sum(probs)``) it returns the upper bound
  ``P(Binomial(n, mu/n) >= k)`` instead: Hoeffding (1956, Theorem 4) shows the binomial
  with the mean probability has the larger upper tail there, so the bound is conservative
  (a larger p-value never adds a discovery). Anderson & Samuels (1967) put the Poisson tail
  above that binomial one for ``k >= mu + 1``; the Poisson tail is therefore a looser bound
  of the same kind (Le Cam: the total-variation gap is at most ``sum(p_i**2)``).
* :func:`log_normal_sf` / :func:`normal_sf` — the standard normal upper tail through
  :func:`math.erfc`, with the asymptotic series beyond ``z = 30``.
* :func:`rank_sum` / :func:`log_rank_sum_sf` — the Wilcoxon–Mann–Whitney rank-sum test of
  "the first sample is stochastically larger". Ties are broken against the first sample
  (its members take the lowest of the tied ranks), which can only lower the rank sum, so
  the p-value stays valid (conservative) with ties. The null distribution of the sum of
  ``n`` ranks drawn without replacement from ``1..N`` is exact: the number of ``n``-subsets
  whose sum falls ``k`` below the largest possible sum is the coefficient of ``x**k`` in the
  Gaussian binomial ``[N choose n]_x`` (Andrews 1976, ch. 3), counted in integers up to the
  observed deficit (``min(n, N-n) * deficit`` cells). Beyond ``max_cells`` it returns
  Hoeffding's (1963, §6) bound for sampling without replacement, ``exp(-2 n t**2 /
  (N-1)**2)`` with ``t`` the mean rank's excess over ``(N+1)/2`` — never below the exact
  tail, so again conservative. A caller that needs exactness only below some level gives
  it as ``exact_below``: where the normal approximation's tail (continuity-corrected) is at
  that level or above, the bound is returned without the count.
* :func:`log_fisher_lower` / :func:`log_fisher_sum_lower` — Fisher's exact test of a 2×2
  table, one-sided (the hypergeometric lower tail), and its stratified form: the lower tail
  of the sum over several tables, each with its margins fixed.
* :func:`log_luce_tails` — the exact conditional test of a player's wins in one set of games
  against another, each game won or lost to rivals of summed strength ``S`` with odds
  ``θ / S`` (Luce's choice axiom): given the total wins, free of ``θ``; Fisher's exact
  test when every game has the same ``S``.
* :func:`log_fisher_combined` — Fisher's combination of independent p-values: the upper
  tail of ``-2 Σ log p_i`` under the chi-square law with ``2k`` degrees of freedom, in
  closed form (``Σ_{i<k} s**i / i!`` times ``exp(-s)``, ``s = -Σ log p_i``). Valid (and
  conservative) when the p-values are independent and each at least uniform, as exact
  tests of discrete data are.
* :func:`log_mid_rank_sum_tail` — the same test for samples of few distinct values (shares
  such as 0, 1/2 and 1), where breaking the many ties against the first sample would throw
  its evidence away: tied values share their mean rank, and the tail is the normal
  approximation with the ties' variance correction and a continuity correction.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Final

__all__ = [
    "DEFAULT_MAX_CELLS",
    "bh_log_qvalues",
    "bh_qvalues",
    "log_binomial_sf",
    "log_comb",
    "log_fisher_combined",
    "log_fisher_lower",
    "log_fisher_sum_lower",
    "log_luce_tails",
    "log_mid_rank_sum_tail",
    "log_normal_sf",
    "log_poisson_binomial_sf",
    "log_poisson_sf",
    "log_rank_sum_sf",
    "normal_sf",
    "rank_sum",
    "share_weights",
]

#: Cells of the exact Poisson-binomial DP (trials x count) before the binomial bound is used.
DEFAULT_MAX_CELLS: Final = 200_000

_REL_EPS: Final = 1e-17
_LINEAR_FLOOR: Final = 1e-250  # below this the linear DP may have lost mass to underflow
_RESCALE: Final = 1e100  # Luce's coefficients are rescaled once they may have grown past this
_NEG_INF: Final = -math.inf


def _log1mexp(log_x: float) -> float:
    """Return ``log(1 - exp(log_x))`` for ``log_x <= 0``, accurately at both ends."""
    if log_x > -math.log(2.0):
        return math.log(-math.expm1(log_x))
    return math.log1p(-math.exp(log_x))


def _logaddexp(a: float, b: float) -> float:
    if a == _NEG_INF:
        return b
    if b == _NEG_INF:
        return a
    if a < b:
        a, b = b, a
    return a + math.log1p(math.exp(b - a))


def log_poisson_sf(k: int, mu: float) -> float:
    """Return ``log P(X >= k)`` for ``X ~ Poisson(mu)``.

    Above the mean the tail is summed upwards from ``k`` (terms shrink geometrically);
    at or below it, ``1 - P(X <= k-1)`` with the lower sum taken downwards from ``k-1``
    (that sum is at most about one half there, so the subtraction loses nothing).
    """
    if mu < 0:
        raise ValueError(f"mu must be >= 0, got {mu}")
    if k <= 0:
        return 0.0
    if mu == 0:
        return _NEG_INF
    if k > mu:
        log_first = k * math.log(mu) - mu - math.lgamma(k + 1)
        total = term = 1.0
        j = k
        while term > total * _REL_EPS:
            j += 1
            term *= mu / j
            total += term
        return log_first + math.log(total)
    log_last = (k - 1) * math.log(mu) - mu - math.lgamma(k)
    total = term = 1.0
    j = k - 1
    while j > 0 and term > total * _REL_EPS:
        term *= j / mu
        total += term
        j -= 1
    return _log1mexp(log_last + math.log(total))


def log_binomial_sf(k: int, n: int, p: float) -> float:
    """Return ``log P(X >= k)`` for ``X ~ Binomial(n, p)`` (summed like :func:`log_poisson_sf`)."""
    if n < 0 or not 0.0 <= p <= 1.0:
        raise ValueError(f"need n >= 0 and 0 <= p <= 1, got n={n}, p={p}")
    if k <= 0:
        return 0.0
    if k > n or p == 0.0:
        return _NEG_INF
    if p == 1.0:
        return 0.0
    odds = p / (1.0 - p)
    if k > n * p:
        log_first = (
            math.lgamma(n + 1)
            - math.lgamma(k + 1)
            - math.lgamma(n - k + 1)
            + k * math.log(p)
            + (n - k) * math.log1p(-p)
        )
        total = term = 1.0
        j = k
        while j < n and term > total * _REL_EPS:
            term *= (n - j) / (j + 1) * odds
            total += term
            j += 1
        return log_first + math.log(total)
    log_last = (
        math.lgamma(n + 1)
        - math.lgamma(k)
        - math.lgamma(n - k + 2)
        + (k - 1) * math.log(p)
        + (n - k + 1) * math.log1p(-p)
    )
    total = term = 1.0
    j = k - 1
    while j > 0 and term > total * _REL_EPS:
        term *= j / (n - j + 1) / odds
        total += term
        j -= 1
    return _log1mexp(log_last + math.log(total))


def _pb_tail_linear(k: int, probs: Sequence[float]) -> float:
    """``P(sum >= k)`` by the DP over counts ``0..k-1`` and an absorbing ``>= k`` state."""
    dist = [1.0] + [0.0] * (k - 1)
    tail = 0.0
    last = k - 1
    for p in probs:
        stay = 1.0 - p
        tail += dist[last] * p
        for j in range(last, 0, -1):
            dist[j] = dist[j] * stay + dist[j - 1] * p
        dist[0] *= stay
    return tail


def _pb_tail_log(k: int, probs: Sequence[float]) -> float:
    """The same DP with every cell a logarithm (used when the linear one underflows)."""
    dist = [0.0] + [_NEG_INF] * (k - 1)
    tail = _NEG_INF
    for p in probs:
        log_p = math.log(p) if p > 0 else _NEG_INF
        log_stay = math.log1p(-p) if p < 1 else _NEG_INF
        tail = _logaddexp(tail, dist[-1] + log_p)
        dist = [
            _logaddexp(a + log_stay, b + log_p)
            for a, b in zip(dist, [_NEG_INF, *dist[:-1]], strict=True)
        ]
    return tail


def log_poisson_binomial_sf(
    k: int, probs: Sequence[float], *, max_cells: int = DEFAULT_MAX_CELLS
) -> float:
    """Return ``log P(X >= k)`` for ``X`` the number of successes in independent trials.

    Exact unless ``len(probs) * k > max_cells`` and ``k >= sum(probs) + 1``, where the
    Hoeffding binomial bound (never smaller than the exact value) is returned instead.
    """
    if any(not 0.0 <= p <= 1.0 for p in probs):
        raise ValueError("every probability must lie in [0, 1]")
    n = len(probs)
    if k <= 0:
        return 0.0
    if k > n:
        return _NEG_INF
    mu = math.fsum(probs)
    if n * k > max_cells and k >= mu + 1:
        return log_binomial_sf(k, n, min(1.0, mu / n))
    tail = _pb_tail_linear(k, probs)
    if tail > _LINEAR_FLOOR:
        return math.log(tail)
    return _pb_tail_log(k, probs)


def normal_sf(z: float) -> float:
    """Return ``P(Z >= z)`` for a standard normal ``Z``."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def log_normal_sf(z: float) -> float:
    """Return ``log P(Z >= z)``; beyond ``z = 30`` by the asymptotic (Mills ratio) series."""
    if z < 30.0:
        return math.log(normal_sf(z))
    inv = 1.0 / (z * z)
    series = 1.0 - inv * (1.0 - 3.0 * inv * (1.0 - 5.0 * inv))
    return -0.5 * z * z - math.log(z) - 0.5 * math.log(2.0 * math.pi) + math.log(series)


def rank_sum(
    first: Sequence[Fraction | int | float], second: Sequence[Fraction | int | float]
) -> int:
    """Return the sum of the first sample's ranks (``1..N``) in the pooled sample, ties
    broken against the first sample (see the module docstring). Values are compared by
    their nearest float first (rounding is monotonic: the order is the values' own, and
    only values whose floats tie are compared exactly)."""
    pooled = sorted(
        [(float(value), value, 0) for value in first]
        + [(float(value), value, 1) for value in second]
    )
    return sum(rank for rank, (_, _, sample) in enumerate(pooled, start=1) if sample == 0)


def log_rank_sum_sf(
    observed: int,
    n: int,
    total: int,
    *,
    max_cells: int = DEFAULT_MAX_CELLS,
    exact_below: float = 1.0,
) -> float:
    """Return ``log P(W >= observed)`` for ``W`` the sum of ``n`` ranks drawn without
    replacement from ``1..total`` — exact, or Hoeffding's upper bound beyond ``max_cells``
    or where the normal approximation's tail (continuity-corrected) is ``exact_below`` or
    more: a caller that needs exactness only for small p-values spends the count there."""
    if not 0 <= n <= total:
        raise ValueError(f"need 0 <= n <= total, got n={n}, total={total}")
    top = n * (2 * total - n + 1) // 2
    deficit = top - observed
    if deficit < 0:
        return _NEG_INF
    if deficit >= n * (total - n):  # at or below the smallest possible sum
        return 0.0
    small, large = min(n, total - n), max(n, total - n)
    mean = n * (total + 1) / 2
    if small * deficit > max_cells or (
        exact_below < 1.0
        and log_normal_sf((observed - 0.5 - mean) / math.sqrt(mean * (total - n) / 6))
        >= math.log(exact_below)
    ):
        excess = observed / n - (total + 1) / 2
        return 0.0 if excess <= 0 else -2.0 * n * excess * excess / (total - 1) ** 2
    # [total choose small]_x = prod_{i=1..small} (1 - x**(large+i)) / (1 - x**i), to x**deficit.
    coeffs = [1] + [0] * deficit
    for i in range(1, small + 1):
        for k in range(deficit, large + i - 1, -1):
            coeffs[k] -= coeffs[k - large - i]
        for k in range(i, deficit + 1):
            coeffs[k] += coeffs[k - i]
    return math.log(sum(coeffs)) - math.log(math.comb(total, n))


def _family_size(count: int, m: int | None) -> int:
    size = count if m is None else m
    if size < count:
        raise ValueError(f"family size m={m} is smaller than the {count} p-values given")
    return size


def bh_log_qvalues(log_p: Sequence[float], *, m: int | None = None) -> list[float]:
    """Return the logs of Benjamini–Hochberg adjusted p-values (q-values), in input order.

    ``q_(i) = min(1, min_{j >= i} m * p_(j) / j)`` over the p-values sorted ascending;
    ``m`` defaults to ``len(log_p)`` and may be larger (hypotheses not supplied count as
    p = 1). A hypothesis is a discovery at level ``q`` exactly when its q-value is
    ``<= q`` — the step-up rule. Tied p-values get equal q-values.
    """
    size = _family_size(len(log_p), m)
    order = sorted(range(len(log_p)), key=lambda i: log_p[i])
    log_m = math.log(size) if size else 0.0
    adjusted = [0.0] * len(log_p)
    running = 0.0
    for rank in range(len(order), 0, -1):
        i = order[rank - 1]
        running = min(running, log_p[i] + log_m - math.log(rank))
        adjusted[i] = running
    return adjusted


def share_weights(inside: Sequence[bool], share: float) -> tuple[float, float]:
    """Weighted BH's weights when the hypotheses marked ``inside`` hold ``share`` of the
    family's weight and the others the rest, each side alike: ``(share * m / m_inside,
    (1 - share) * m / m_outside)``. An empty side leaves its share unused (weight 0.0), so
    the weights average at most 1 and weighted BH keeps its FDR control."""
    m, ones = len(inside), sum(inside)
    return (
        share * m / ones if ones else 0.0,
        (1 - share) * m / (m - ones) if ones < m else 0.0,
    )


def bh_qvalues(p_values: Sequence[float], *, m: int | None = None) -> list[float]:
    """Return Benjamini–Hochberg q-values for plain p-values (see :func:`bh_log_qvalues`)."""
    if any(not 0.0 <= p <= 1.0 for p in p_values):
        raise ValueError("every p-value must lie in [0, 1]")
    logs = [math.log(p) if p > 0 else _NEG_INF for p in p_values]
    return [math.exp(lq) for lq in bh_log_qvalues(logs, m=m)]


def log_fisher_combined(log_p: Sequence[float]) -> float:
    """Return the log p-value of Fisher's combination of the independent p-values whose logs
    are ``log_p`` (module docstring); none: 0 (p = 1)."""
    if not log_p:
        return 0.0
    s = -math.fsum(log_p)
    if s <= 0.0:
        return 0.0
    if math.isinf(s):
        return _NEG_INF
    log_s = math.log(s)
    terms = [i * log_s - math.lgamma(i + 1) for i in range(len(log_p))]
    return min(0.0, -s + _log_sum(terms))


def log_mid_rank_sum_tail(first: Sequence[float], second: Sequence[float]) -> float:
    """Return ``log P(W >= w)`` for the rank sum ``w`` of ``first`` in the pooled sample,
    tied values sharing their mean rank (for samples with many ties, where breaking them
    against ``first`` would throw the evidence away): the normal approximation with the
    tie-corrected variance and continuity correction 1/2. Either sample empty: 0 (p = 1)."""
    n, total = len(first), len(first) + len(second)
    if not first or not second:
        return 0.0
    counts = Counter([*first, *second])
    mid: dict[float, float] = {}
    below = 0
    for value in sorted(counts):
        mid[value] = below + (counts[value] + 1) / 2
        below += counts[value]
    observed = math.fsum(mid[value] for value in first)
    ties = sum(t**3 - t for t in counts.values())
    variance = n * (total - n) / 12 * ((total + 1) - ties / (total * (total - 1)))
    if variance <= 0:
        return 0.0
    z = (observed - n * (total + 1) / 2 - 0.5) / math.sqrt(variance)
    return log_normal_sf(z)


def log_comb(n: int, k: int) -> float:
    """Return ``log C(n, k)``."""
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _hypergeometric(k: int, successes: int, total: int) -> list[tuple[int, float]]:
    """``(j, log P(X = j))`` over the support of ``X`` hypergeometric: ``k`` draws from
    ``total`` of which ``successes`` are successes."""
    denominator = log_comb(total, k)
    return [
        (j, log_comb(successes, j) + log_comb(total - successes, k - j) - denominator)
        for j in range(max(0, k - (total - successes)), min(k, successes) + 1)
    ]


def log_fisher_lower(x: int, k: int, successes: int, total: int) -> float:
    """``log P(X <= x)`` for ``X`` hypergeometric: ``k`` draws from ``total`` of which
    ``successes`` are successes (Fisher's exact test, lower tail)."""
    terms = [log_p for j, log_p in _hypergeometric(k, successes, total) if j <= x]
    return min(0.0, _log_sum(terms)) if terms else -math.inf


def log_fisher_sum_lower(strata: Sequence[tuple[int, int, int, int]]) -> float:
    """``log P(X_1 + … + X_m <= x_1 + … + x_m)`` for independent hypergeometric ``X_i``,
    each given as :func:`log_fisher_lower`'s ``(x, k, successes, total)``: the exact
    conditional test of one direction across 2×2 tables (strata), every margin fixed — the
    exact form of the Cochran–Mantel–Haenszel test's one-sided question. A stratum whose
    table cannot move adds nothing; no strata: 0 (p = 1)."""
    dist = [0.0]  # log P(sum = s), s = 0, 1, …
    for x, k, successes, total in strata:
        pmf = _hypergeometric(k, successes, total)
        if not pmf[0][0] <= x <= pmf[-1][0]:
            raise ValueError(f"{x} successes in {k} draws is impossible here")
        dist = _log_convolve(dist, [_NEG_INF] * pmf[0][0] + [log_p for _, log_p in pmf])
    observed = sum(x for x, *_ in strata)
    return min(0.0, _log_sum(dist[: observed + 1]))


def log_luce_tails(
    x: int, first: Sequence[float], second: Sequence[float], wins: int
) -> tuple[float, float]:
    """``(log P(X >= x), log P(X <= x))`` for ``X`` the wins that land in the ``first``
    games, given ``wins`` over the ``first`` and ``second`` games together.

    Each game is won by the player or by one of its rivals (``first``, ``second``: the
    rivals' summed strength ``S`` in each game), the player with odds ``θ / S`` (Luce's
    choice axiom; ``S = k`` for ``k`` rivals of unit strength). Given the total,
    ``P(X = j) ∝ e_j(first) e_{wins - j}(second)``, ``e_j`` the coefficient of ``z**j`` in
    ``Π (1 + z / S)``: free of ``θ`` (the conditional test of a logistic model with offset
    ``-log S``), exact; when every game has the same ``S`` it is Fisher's exact test
    (:func:`log_fisher_lower`). The coefficients are summed in floating point, rescaled as
    they grow; where one the test needs underflows, they are summed again in logs."""
    n_first, n_second = len(first), len(second)
    if not 0 <= wins <= n_first + n_second:
        raise ValueError(f"{wins} wins in {n_first + n_second} games")
    if any(not strength > 0 for strength in (*first, *second)):
        raise ValueError("every game needs rivals of positive strength")
    support = range(max(0, wins - n_second), min(wins, n_first) + 1)
    pmf = _luce_pmf(first, second, wins, support, _wins_polynomial)
    if any(v == _NEG_INF for v in pmf.values()):
        pmf = _luce_pmf(first, second, wins, support, _log_wins_polynomial)
    total = _log_sum(list(pmf.values()))

    def tail(logs: list[float]) -> float:
        return min(0.0, _log_sum(logs) - total) if logs else -math.inf

    return (
        tail([v for j, v in pmf.items() if j >= x]),
        tail([v for j, v in pmf.items() if j <= x]),
    )


def _luce_pmf(
    first: Sequence[float],
    second: Sequence[float],
    wins: int,
    support: range,
    polynomial: Callable[[Sequence[float], int], list[float]],
) -> dict[int, float]:
    """``log e_j(first) + log e_{wins - j}(second)`` over ``support`` (unnormalised)."""
    left, right = polynomial(first, wins), polynomial(second, wins)
    return {j: left[j] + right[wins - j] for j in support}


def _wins_polynomial(rivals: Sequence[float], cap: int) -> list[float]:
    """``log`` of the coefficients of ``z**0 … z**min(cap, n)`` in ``Π (1 + z / S)``, summed
    in floating point with a running scale (``-inf`` where a coefficient underflowed)."""
    poly, log_scale = [1.0], 0.0
    bound = 1.0  # at least the largest coefficient: each game multiplies it by 1 + 1/S at most
    for strength in rivals:
        odds = 1.0 / strength
        if len(poly) <= cap:
            poly.append(0.0)
        poly = [poly[0], *(p + odds * q for p, q in zip(poly[1:], poly, strict=False))]
        bound *= 1.0 + odds
        if bound > _RESCALE:
            peak = max(poly)
            poly = [v / peak for v in poly]
            log_scale += math.log(peak)
            bound = 1.0
    return [math.log(v) + log_scale if v > 0.0 else _NEG_INF for v in poly]


def _log_wins_polynomial(rivals: Sequence[float], cap: int) -> list[float]:
    """The same coefficients as :func:`_wins_polynomial`, summed in logs (never underflows)."""
    poly = [0.0]
    for strength in rivals:
        poly = _log_convolve(poly, [0.0, -math.log(strength)], cap)
    return poly


def _log_convolve(a: Sequence[float], b: Sequence[float], cap: int | None = None) -> list[float]:
    """The convolution of two sequences given by their logs (index ``s`` holds
    ``log Σ_{i+j=s} exp(a[i] + b[j])``), up to index ``cap`` when given."""
    top = len(a) + len(b) - 2 if cap is None else min(len(a) + len(b) - 2, cap)
    return [
        _log_sum([a[i] + b[s - i] for i in range(max(0, s - len(b) + 1), min(s, len(a) - 1) + 1)])
        for s in range(top + 1)
    ]


def _log_sum(logs: Sequence[float]) -> float:
    """``log Σ exp(v)`` over ``logs`` (not empty), scaled by the largest."""
    peak = max(logs)
    if peak == _NEG_INF:
        return peak
    return peak + math.log(math.fsum(math.exp(v - peak) for v in logs))
