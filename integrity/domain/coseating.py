"""Co-seating beyond the matchmaker: queue-together farming (多开刷分 / 串谋) (SPEC §7).

SPEC §7: matchmade tables are random, so two accounts sharing tables again and again far
beyond what the matchmaker explains is the first sign of queue-together farming.

**Data.** One :class:`~integrity.domain.data.TableObs` per game in the audit window; only
the game id, the hour bucket and the players are read.

**Null model.** Within hour ``h`` every table draws its seats at random from the seats
played that hour: ``S_h`` seats in all, ``s_x,h`` of them player ``x``'s. For a game of
``x`` at a table of ``k`` seats the chance that ``y`` holds one of the other ``k - 1``
seats is at most ``(k - 1) * s_y,h / (S_h - s_x,h)`` (the union bound over the seats;
drawing without replacement gives slightly less). The shared-table count of a pair is
then a sum of independent Bernoulli trials, a Poisson-binomial count.

**Statistic.** For the pair ``{a, b}``, ``X`` = tables shared in the window. *Symmetric by
construction:* in each hour both played, the shared count cannot exceed the games of the
less active of the two, so the trials are ``min(s_a,h, s_b,h)`` games, each with
probability ``min(1, k̄ * s_max / (S_h - s_max))`` where ``s_max = max(s_a,h, s_b,h)`` and
``k̄`` the larger of the two players' mean "other seats" per table that hour. That
probability is at least the union bound seen from either player (``S_h - s_max`` is the
smaller pool), so each hour's block dominates the less active player's view of it, and the
result does not depend on which player is called ``a``. (The minimum of the two one-way
p-values would need a Bonferroni factor 2; this costs one computation and no factor.)
Trials within an hour are in truth negatively dependent (a seat of ``b`` at one of ``a``'s
tables is not free for the next), which independence overstates: conservative again.
The p-value is the one-sided upper tail ``P(X >= shared)``
(:func:`~integrity.domain.stats.log_poisson_binomial_sf`: exact DP, or the Hoeffding
binomial bound for the few pairs too large for it — both valid, the bound conservative).

**Family (opportunity, never the statistic).** A pair is a hypothesis when both players
have ``>= min_games`` games in the window and were both active in ``>= min_common_hours``
hour buckets. ``m`` counts those pairs whether or not they ever sat together: exactly from
per-hour sets of active eligible players while the co-active pair-hours
``sum_h C(n_h, 2)`` stay under ``exact_family_cap``; above it by the upper bound
``min(C(E, 2), sum_h C(n_h, 2) // min_common_hours)`` (``E`` eligible players; a pair in
the family contributes at least ``min_common_hours`` pair-hours). An upper bound on ``m``
keeps FDR control (the extra hypotheses act as p = 1).

**Which p-values are computed.** Only for pairs with ``shared >= 2``; every other pair in the
family keeps p = 1. One shared table is never evidence of farming, and raising a p-value
to 1 is conservative-safe: the value 1 is a valid p-value, and BH's step-up rule is
monotone, so a larger p-value never adds a discovery.

**Threshold / false-positive control.** Benjamini–Hochberg at ``q`` (default 0.01) over the
family of ``m`` pairs. Counts of pairs that share a player are weakly dependent (negatively:
a seat at ``a``'s table taken by ``b`` is not ``c``'s), outside BH's PRDS guarantee; BH is
robust to such weak dependence, the conservative model leaves slack, and the honest-season
tests measure the realised false discoveries. (Benjamini–Yekutieli, ``q / H_m``, would hold
under any dependence at about a 13-fold stricter threshold for ``m`` in the millions.)

**Limits.** The hour bucket stands for the matchmaker's pool. Two honest accounts that are
online in the same minutes of the same hours (one group of friends, one school timetable)
meet more often than the hour pool predicts; the reviewer sees ``common_hours`` and
``expected`` with the count.

**Counting.** The statistic reads only counts (:class:`PairCounts`): each candidate pair's
games, shared tables and per common hour the two players' seats and other seats and the
hour's seats, plus the family size. :func:`coseating_from_counts` tests counted pairs however
they were counted; :func:`detect_coseating` counts them in Python (one pass over the tables,
a Counter of the ``C(k, 2)`` pairs of each table), the database audit in SQL
(:mod:`integrity.sql.coseating`), with the same result (tests/integrity/test_audit_sql.py).
Only pairs with ``p <= q`` are kept while streaming, which leaves BH's discoveries and
q-values unchanged.
Flags are ordered by p-value, then by players.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import combinations
from typing import ClassVar, Final

from integrity.domain.data import TableObs
from integrity.domain.stats import DEFAULT_MAX_CELLS, bh_log_qvalues, log_poisson_binomial_sf

__all__ = [
    "DEFAULT_EXACT_FAMILY_CAP",
    "VERSION",
    "CoseatingResult",
    "HourCounts",
    "PairCounts",
    "PairFlag",
    "coseating_from_counts",
    "detect_coseating",
    "family_bound",
    "hour_trials",
    "is_candidate",
]

VERSION: Final = "coseat-1"

#: Co-active pair-hours up to which the family size ``m`` is counted exactly.
DEFAULT_EXACT_FAMILY_CAP: Final = 5_000_000

_SHIFT: Final = 32
_MASK: Final = (1 << _SHIFT) - 1
_LN10: Final = math.log(10.0)


@dataclass(frozen=True, slots=True)
class PairFlag:
    """A pair that shared tables far beyond the matchmaker (a BH discovery).

    ``expected`` is the null-model mean of the shared count, ``trials`` the games it is
    spread over, ``strength`` is ``-log10 q`` taken from the log-space q-value (finite when
    ``q`` underflows to 0.0).
    """

    family: ClassVar[str] = "coseating"
    near_conclusive: ClassVar[bool] = False

    players: tuple[str, str]
    shared: int
    expected: float
    trials: int
    games: tuple[int, int]
    common_hours: int
    p: float
    q: float
    strength: float


@dataclass(frozen=True, slots=True)
class CoseatingResult:
    """The discoveries and the family they were controlled over."""

    flags: tuple[PairFlag, ...]
    family_size: int
    family_size_exact: bool
    tested: int
    version: str = VERSION


#: One hour both players of a pair played: seats of ``a``, seats of ``b``, other seats at
#: ``a``'s tables, other seats at ``b``'s tables, and every seat played that hour.
HourCounts = tuple[int, int, int, int, int]


@dataclass(frozen=True, slots=True)
class PairCounts:
    """A pair's counts in the window, all the statistic reads: its games each, the tables it
    shared, and one :data:`HourCounts` per hour both played, in hour order."""

    players: tuple[str, str]
    games: tuple[int, int]
    shared: int
    hours: tuple[HourCounts, ...]


def hour_trials(hours: Iterable[HourCounts]) -> list[float]:
    """The null's Bernoulli probabilities of a pair (module docstring): per common hour,
    ``min(s_a, s_b)`` trials of ``min(1, k̄ * s_max / (S_h - s_max))``."""
    probs: list[float] = []
    for xa, xb, oa, ob, hour_seats in hours:
        seat_max = max(xa, xb)
        mean_others = max(oa / xa, ob / xb)
        p = min(1.0, mean_others * seat_max / (hour_seats - seat_max))
        probs.extend([p] * min(xa, xb))
    return probs


def family_bound(eligible: int, active: Iterable[int], min_common_hours: int) -> tuple[int, int]:
    """Return ``(pair_hours, bound)``: the co-active pair-hours ``sum_h C(n_h, 2)`` of the
    eligible players active per hour (``active``), and the upper bound on ``m``,
    ``min(C(E, 2), pair_hours // min_common_hours)``."""
    pair_hours = sum(n * (n - 1) // 2 for n in active)
    return pair_hours, min(eligible * (eligible - 1) // 2, pair_hours // min_common_hours)


def is_candidate(pair: PairCounts, min_games: int, min_common_hours: int) -> bool:
    """Whether a pair gets a p-value: in the family (``>= min_games`` games each, ``>=
    min_common_hours`` common hours) and ``>= 2`` shared tables (module docstring)."""
    return pair.shared >= 2 and min(pair.games) >= min_games and len(pair.hours) >= min_common_hours


def coseating_from_counts(
    pairs: Iterable[PairCounts],
    *,
    family_size: int,
    family_size_exact: bool,
    q: float = 0.01,
    min_games: int = 10,
    min_common_hours: int = 2,
    max_cells: int = DEFAULT_MAX_CELLS,
) -> CoseatingResult:
    """The test over counted pairs, however they were counted (in Python by
    :func:`detect_coseating`, in SQL by the database audit): pairs that are not candidates
    (:func:`is_candidate`) keep p = 1; BH at ``q`` over ``family_size`` hypotheses.

    Streams: a pair is kept only when ``p <= q``. Every BH discovery has ``p <= q`` and its
    q-value is set by p-values ``<= q``, whose ranks are the same among the kept pairs as
    among all, so the flags and q-values equal those of BH over every tested pair."""
    if not 0 < q < 1 or min_games < 1 or min_common_hours < 1:
        raise ValueError("need 0 < q < 1, min_games >= 1 and min_common_hours >= 1")
    threshold = math.log(q)
    tested = 0
    kept: list[tuple[float, PairCounts, list[float]]] = []
    for pair in pairs:
        if not is_candidate(pair, min_games, min_common_hours):
            continue
        tested += 1
        probs = hour_trials(pair.hours)
        log_p = log_poisson_binomial_sf(pair.shared, probs, max_cells=max_cells)
        if log_p <= threshold:
            kept.append((log_p, pair, probs))
    if tested > family_size:
        raise ValueError(f"{tested} pairs tested in a family of {family_size}")
    log_qs = bh_log_qvalues([log_p for log_p, _, _ in kept], m=family_size)
    found = []
    for (log_p, pair, probs), log_q in zip(kept, log_qs, strict=True):
        if log_q > threshold:
            continue
        players, games = pair.players, pair.games
        if players[0] > players[1]:
            players, games = (players[1], players[0]), (games[1], games[0])
        flag = PairFlag(
            players=players,
            shared=pair.shared,
            expected=math.fsum(probs),
            trials=len(probs),
            games=games,
            common_hours=len(pair.hours),
            p=math.exp(log_p),
            q=math.exp(log_q),
            strength=-log_q / _LN10,
        )
        found.append((log_p, flag.players, flag))
    found.sort(key=lambda item: (item[0], item[1]))
    return CoseatingResult(
        flags=tuple(flag for _, _, flag in found),
        family_size=family_size,
        family_size_exact=family_size_exact,
        tested=tested,
    )


@dataclass(slots=True)
class _Player:
    games: int = 0
    seats: dict[int, int] = field(default_factory=dict)  # hour -> seats played
    others: dict[int, int] = field(default_factory=dict)  # hour -> other seats at them


def _family_size(
    players: list[_Player], min_games: int, min_common_hours: int, cap: int
) -> tuple[int, bool]:
    """Return ``(m, exact)``: the number of opportunity pairs, or an upper bound on it."""
    active: defaultdict[int, list[int]] = defaultdict(list)
    eligible = 0
    for i, player in enumerate(players):
        if player.games >= min_games and player.seats:
            eligible += 1
            for hour in player.seats:
                active[hour].append(i)
    pair_hours, bound = family_bound(
        eligible, (len(ids) for ids in active.values()), min_common_hours
    )
    if pair_hours > cap:
        return bound, False
    together: Counter[int] = Counter()
    for ids in active.values():
        together.update([a << _SHIFT | b for a, b in combinations(ids, 2)])
    return sum(1 for hours in together.values() if hours >= min_common_hours), True


def detect_coseating(
    tables: Iterable[TableObs],
    *,
    q: float = 0.01,
    min_games: int = 10,
    min_common_hours: int = 2,
    max_cells: int = DEFAULT_MAX_CELLS,
    exact_family_cap: int = DEFAULT_EXACT_FAMILY_CAP,
) -> CoseatingResult:
    """Flag pairs that shared tables beyond random matchmaking (see the module docstring),
    counting in Python: one pass over the tables, then :func:`coseating_from_counts`."""
    if not 0 < q < 1 or min_games < 1 or min_common_hours < 1:
        raise ValueError("need 0 < q < 1, min_games >= 1 and min_common_hours >= 1")
    index: dict[str, int] = {}
    names: list[str] = []
    players: list[_Player] = []
    hour_seats: Counter[int] = Counter()
    pairs: Counter[int] = Counter()
    for table in tables:
        hour = table.hour
        size = len(table.players)
        ids = []
        for name in table.players:
            i = index.get(name)
            if i is None:
                i = index[name] = len(names)
                names.append(name)
                players.append(_Player())
            ids.append(i)
            player = players[i]
            player.games += 1
            seats, others = player.seats, player.others
            seats[hour] = seats.get(hour, 0) + 1
            others[hour] = others.get(hour, 0) + size - 1
        hour_seats[hour] += size
        ids.sort()
        pairs.update([a << _SHIFT | b for a, b in combinations(ids, 2)])

    family_size, exact = _family_size(players, min_games, min_common_hours, exact_family_cap)

    def counted() -> Iterator[PairCounts]:
        for key, shared in pairs.items():
            if shared < 2:
                continue
            a, b = key >> _SHIFT, key & _MASK
            pa, pb = players[a], players[b]
            if pa.games < min_games or pb.games < min_games:
                continue
            sa, sb, oa, ob = pa.seats, pb.seats, pa.others, pb.others
            small, large = (sa, sb) if len(sa) <= len(sb) else (sb, sa)
            common = sorted(hour for hour in small if hour in large)
            yield PairCounts(
                players=(names[a], names[b]),
                games=(pa.games, pb.games),
                shared=shared,
                hours=tuple((sa[h], sb[h], oa[h], ob[h], hour_seats[h]) for h in common),
            )

    return coseating_from_counts(
        counted(),
        family_size=family_size,
        family_size_exact=exact,
        q=q,
        min_games=min_games,
        min_common_hours=min_common_hours,
        max_cells=max_cells,
    )
