"""Boosting: someone else playing the account (代练代打) (SPEC §7).

A hired player shows up as a block of games in which the account plays better, that starts
where the account's sessions change hands — another device, another address range, other
hours — and, when the owner takes the account back, ends where they change back.

**Data.** Per player, the performance residuals in play order — observed game score minus
the score expected from the opponents' skill (pass them in, or build them with
:func:`residual_series` from the tables and an expectation function) — and the
:class:`~integrity.domain.data.SessionObs` of those games.

**Session changes (opportunity, from sessions only).** A split ``i`` (games ``[0, i)``
before, ``[i, n)`` after) *coincides* with a change of a kind when the typical value of that
kind differs between the ``window`` games before ``i`` and the ``window`` games from ``i``:
the most frequent device; the most frequent IP range (IPv4 /24, IPv6 /48); the typical hour
of play (circular mean of the local hour, each side concentrated — mean resultant length
>= 0.5 — and ``>= min_hour_shift`` hours apart); near the ends the windows hold the games
there are. A window sees one change from several consecutive splits: each run of
consecutive such splits is one **change**, placed at the split of the run where the sessions
separate best — of the ``window`` games before it, those on the run's old device (range)
less those on the new one, plus the reverse for the ``window`` games from it, summed over
device and range (the earliest such split; the run's middle when only the hours change).

**Segments (the hypotheses).** The boundaries are ``0``, the changes and ``n``; each pair
``a < b`` of boundaries other than ``(0, n)``, with ``>= min_segment`` games inside and
outside, is a segment ``[a, b)``: the hired player's games — from a change to the end
(``b = n``), from the start to a change (``a = 0``), or between two changes when the owner
came back (the "epidemic" alternative). A segment **changes hands** when its games and the
others share no device and no address range, each side having at least one known device and
one known range: someone else's sessions. A player with a segment that changes hands (an
*identity* player) is tested on those segments only; any other player on all its segments.

**Statistic.** Per segment, the one-sided Mann–Whitney rank-sum ``z`` of the residuals inside
over those outside (tie-corrected variance, continuity correction 1/2): the hired player
plays better. Rank-based, so heavy-tailed game scores do not matter: under the null the
residuals are exchangeable up to the player's days (*Days*, below). The player's statistic
is the segment of largest ``z`` (ties: the earliest).

**A step, not a trend.** A steady improver who changes phone also plays better after the
change. Per segment, the pieces ``[0, a)``, ``[a, b)``, ``[b, n)`` (those not empty) each
get their own level and share one trend: ``S = sum over the pieces of sum (t - mean t)(r -
mean r)`` over the game indexes ``t`` and residual ranks ``r`` of the piece, standardised by
its permutation variance within the pieces (``sum over the pieces of sum (t - mean t)**2 *
sum (r - mean r)**2 / (size - 1)``). A segment whose games lie later (earlier) on average
than the others, with a trend ``>= TREND_Z`` (``<= -TREND_Z``), is a trend that explains
the shift, not a step: its p-value is 1. The trend is measured within the pieces, so a step
at the boundaries does not feed it.

**Days.** A player's games on one tour day share a form (rested, tired, on a good day),
so a block of whole days looks better than the rest more often than games drawn at random
would; a hired player is such a block too, and the test must not mistake one for the other.
A player's *days* are the runs of consecutive games on one tour day (``hour // 24``). The
*day ICC* ``rho`` is the share of the variance of the residual ranks that lies between a
player's days, from the one-way ANOVA of the ranks by day pooled over the rest of the
family (the player left out, so a hired block does not raise its own ``rho``; 0 with fewer
than ``day_family`` others, :data:`DAY_FAMILY` unless told, or when the days differ no more
than the games). Under
day effects the difference of the mean ranks inside and outside ``[a, b)`` has variance
``(1 - rho) (1/n_in + 1/n_out) + rho C`` (in units of the rank variance), with ``C = sum
over the days of (in_d / n_in - out_d / n_out) ** 2``, ``in_d`` and ``out_d`` the day's
games inside and outside; the segment's *design effect* is its ratio to ``1/n_in +
1/n_out``, raised to 1, and its ``z`` is divided by the square root. The chosen segment is
the one of largest such ``z``. ``rho`` is read from the family, so the database audit,
whose family is the same, gets the same.

**p-value.** ``p = min(1, J * P(W >= w))`` (Bonferroni) for the chosen segment, with ``J``
the number of segments the player was tested on, trends included. With a design effect
above 1, ``P(W >= w)`` is the normal bound at the divided ``z``; else it is the
exact rank-sum tail with ties broken against the segment
(:func:`~integrity.domain.stats.log_rank_sum_sf`) when ``J`` times the normal bound below
is under 0.1 and the count fits :data:`~integrity.domain.stats.DEFAULT_MAX_CELLS`, else the
normal bound ``P(Z >= z)``: with the continuity correction it is above the exact tail
wherever the exact one is below 0.01 (checked exhaustively for segments of 10 to 30 games),
so it is conservative where decisions are made. Using the chosen segment's tail rather than
the smallest one over the segments, and setting a trend's p-value to 1, only raise
p-values.

**History.** An owner who lends the account early in the window leaves few games of his own
in it. A series may begin with the player's games from before the window (its *history*,
``history[player]`` games; the database audit reads the 7 days before, setting
``INTEGRITY_HISTORY_DAYS``): they are the owner's baseline, never a hypothesis. The
changes are found over the whole series; a segment must start in the window (``a >=`` the
history), and the history counts among the games outside it. A player is tested only when
the window alone holds ``>= 2 * min_segment`` of its games and passes :func:`may_be_tested`,
so history lengthens the series of the players the window can test and adds none; and it is
read only when the window holds two or more known devices and two or more known IP ranges
(:func:`reads_history`), as a block of the window that changes hands needs both. History
serves only an identity player (one with a segment that changes hands, with the history
counted among the others; above): the baseline is there for someone else's sessions. Any
other player — the owner on a new phone at home, on the same phone elsewhere — is tested on
the window alone, as a slow improver's earlier weeks would make any later block of his look
better; and as the history showed that none of his blocks changes hands, none counts as
changing hands in the window either (a tablet used last week and again after days on the
phone is the owner's).

**Family / threshold / false-positive control.** The players with at least one segment
(session data and game counts only). Weighted Benjamini–Hochberg (Genovese, Roeder &
Wasserman 2006) at ``q`` (default 0.01): a player is a discovery when ``p / w`` passes BH
over the family, with weights fixed by the sessions alone — the identity players share
:data:`IDENTITY_SHARE` of the weight (``w = IDENTITY_SHARE * m / m_identity``), the others
the rest (``w = (1 - IDENTITY_SHARE) * m / m_other``); when one group is empty its share
is left unused. The weights average at most 1 over the family and, the sessions saying
nothing about performance under the null, weighted BH controls the false discovery rate at
``q`` (independent players). The q-value is BH's on ``p / w``. Flags are ordered by
``p / w``, then by player. :data:`IDENTITY_SHARE` and :data:`TREND_Z` were set on simulated
calibration weeks (seed 7; seeds 8 and 9 looked at), never on a reported seed
(docs/integrity.md).
"""

from __future__ import annotations

import ipaddress
import math
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from operator import itemgetter
from typing import ClassVar, Final, Literal

from integrity.domain.data import SessionObs, TableObs
from integrity.domain.stats import (
    DEFAULT_MAX_CELLS,
    bh_log_qvalues,
    log_normal_sf,
    log_rank_sum_sf,
    share_weights,
)

__all__ = [
    "DAY_FAMILY",
    "IDENTITY_SHARE",
    "TREND_Z",
    "VERSION",
    "BoostFlag",
    "BoostingResult",
    "ChangeKind",
    "detect_boosting",
    "may_be_tested",
    "reads_history",
    "residual_series",
]

VERSION: Final = "boost-4"

ChangeKind = Literal["device", "hours", "ip_range"]

#: The share of the weighted-BH weight given to the players whose sessions change hands.
IDENTITY_SHARE: Final = 0.9

#: A within-piece trend this strong, in the shift's direction, makes a segment a trend.
TREND_Z: Final = 2.0

#: The day ICC is estimated from at least this many other players of the family, else 0:
#: fewer say too little of a week's days (the audit's families hold thousands).
DAY_FAMILY: Final = 100

_LN10: Final = math.log(10.0)
_MIN_RESULTANT: Final = 0.5
#: The exact rank-sum tail is counted for a player whose normal bound is below this (log):
#: decisions are made far below it (``p <= IDENTITY_SHARE * q * k / m_identity``).
_EXACT_BELOW: Final = math.log(0.1)


@dataclass(frozen=True, slots=True)
class BoostFlag:
    """A block of better games that starts or ends where the account's sessions change.

    ``segment`` is the block ``[start, end)`` of the player's games (0-based, in play order,
    its ``history`` games before the window first); ``change_index`` its first boundary that
    is a session change (``start``, or ``end`` when the block opens the series) and
    ``change_game`` / ``change_hour`` that game; ``kinds`` the kinds of change at the
    block's boundaries. ``before_mean`` is the mean residual of the games outside the block,
    ``after_mean`` inside it, ``shift`` their difference; ``z`` the rank statistic divided by
    the square root of ``day_effect``, the block's day design effect (1 without one);
    ``identity`` whether the block's sessions share no device and no address range with the
    others'; ``splits`` the number of segments tested for the player (the Bonferroni
    factor); ``weight`` the player's weighted-BH weight.
    """

    family: ClassVar[str] = "boosting"
    near_conclusive: ClassVar[bool] = False

    player: str
    games: int
    history: int
    segment: tuple[int, int]
    change_index: int
    change_game: str
    change_hour: int | None
    kinds: tuple[ChangeKind, ...]
    identity: bool
    before_mean: float
    after_mean: float
    shift: float
    z: float
    day_effect: float
    splits: int
    weight: float
    p: float
    q: float
    strength: float

    @property
    def players(self) -> tuple[str, ...]:
        return (self.player,)


@dataclass(frozen=True, slots=True)
class BoostingResult:
    """The discoveries, the family they were controlled over and its day ICC (*Days*,
    pooled over the whole family)."""

    flags: tuple[BoostFlag, ...]
    family_size: int
    day_icc: float = 0.0
    version: str = VERSION


def residual_series(
    tables: Iterable[TableObs], expected: Callable[[TableObs], Sequence[float]]
) -> dict[str, list[tuple[str, float]]]:
    """Per player, ``(game id, score - expected)`` in the order of ``tables`` (give them in
    play order); ``expected(table)`` gives the expected score of each seat, in seat order."""
    series: dict[str, list[tuple[str, float]]] = {}
    for table in tables:
        game_id = table.game_id
        for player, score, expectation in zip(
            table.players, table.scores, expected(table), strict=True
        ):
            games = series.get(player)
            if games is None:
                series[player] = games = []
            games.append((game_id, score - expectation))
    return series


@lru_cache(maxsize=1 << 16)
def _ip_range(ip: str) -> str:
    """The /24 of an IPv4 address, the /48 of an IPv6 one (anything else: itself);
    remembered, as a player's games mostly repeat a few addresses."""
    parts = ip.split(".")
    if len(parts) == 4 and all(p.isdigit() and int(p) < 256 for p in parts):
        return f"{parts[0]}.{parts[1]}.{parts[2]}.0/24"
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return ip
    return str(ipaddress.ip_network(f"{address}/48", strict=False))


def _mode(values: Sequence[str]) -> str | None:
    """The most frequent known value (ties: the smallest), ``None`` when there is none."""
    counts: dict[str, int] = {}
    for value in values:
        if value:
            counts[value] = counts.get(value, 0) + 1
    if len(counts) < 2:
        return next(iter(counts), None)
    top = max(counts.values())
    return min(v for v, c in counts.items() if c == top)


def _value_changes(values: Sequence[str], window: int, splits: range) -> set[int]:
    """The splits ``i`` in ``splits`` where the most frequent value of the ``window`` values
    before ``i`` differs from that of the ``window`` values from ``i`` (empty values ignored).

    Two windows can only disagree if they hold two consecutive known values that differ,
    so only the splits near such a boundary are looked at."""
    known = [(i, v) for i, v in enumerate(values) if v]
    candidates: set[int] = set()
    for (_, previous), (j, value) in zip(known, known[1:], strict=False):
        if value != previous:
            candidates.update(
                range(max(splits.start, j - window + 1), min(splits.stop, j + window))
            )
    if not candidates:
        return set()
    counts = _Counts(values)
    changes = set()
    for i in candidates:
        before = counts.mode(max(0, i - window), i)
        after = counts.mode(i, min(len(values), i + window))
        if before is not None and after is not None and before != after:
            changes.add(i)
    return changes


class _Counts:
    """Prefix counts of each known value of a series: the most frequent value of any window
    in one step per distinct value (a player's games repeat a few devices and ranges)."""

    def __init__(self, values: Sequence[str]) -> None:
        self.order = sorted({value for value in values if value})
        self.prefix: list[list[int]] = []
        for known in self.order:
            running, prefix = 0, [0]
            for value in values:
                running += value == known
                prefix.append(running)
            self.prefix.append(prefix)

    def mode(self, lo: int, hi: int) -> str | None:
        """:func:`_mode` of ``values[lo:hi]``: the most frequent known value (ties: the
        smallest), ``None`` when there is none."""
        best, top = None, 0
        for value, prefix in zip(self.order, self.prefix, strict=True):
            count = prefix[hi] - prefix[lo]
            if count > top:
                best, top = value, count
        return best


#: The unit vector of each local hour on the 24-hour circle.
_HOUR_VECTORS: Final = tuple(
    (math.cos(hour * math.pi / 12), math.sin(hour * math.pi / 12)) for hour in range(24)
)


def _hour_changes(
    hours: Sequence[int | None], window: int, min_hour_shift: float, splits: range
) -> set[int]:
    """The splits ``i`` in ``splits`` where the circular mean local hours of the ``window``
    games on each side are both concentrated and ``>= min_hour_shift`` hours apart."""
    xs, ys, counts = [0.0], [0.0], [0]
    x = y = 0.0
    count = 0
    for h in hours:
        if h is not None:
            dx, dy = _HOUR_VECTORS[h % 24]
            x += dx
            y += dy
            count += 1
        xs.append(x)
        ys.append(y)
        counts.append(count)

    n = len(hours)
    changes = set()
    hypot, atan2, least = math.hypot, math.atan2, _MIN_RESULTANT
    for i in splits:  # inline: this runs for every player of the window's summary
        lo, hi = max(0, i - window), min(n, i + window)
        count = counts[i] - counts[lo]
        x, y = xs[i] - xs[lo], ys[i] - ys[lo]
        if not count or hypot(x, y) < least * count:
            continue
        count = counts[hi] - counts[i]
        after_x, after_y = xs[hi] - xs[i], ys[hi] - ys[i]
        if not count or hypot(after_x, after_y) < least * count:
            continue
        gap = abs((atan2(y, x) * 12 / math.pi) % 24 - (atan2(after_y, after_x) * 12 / math.pi) % 24)
        if min(gap, 24 - gap) >= min_hour_shift:
            changes.add(i)
    return changes


def _session_changes(
    devices: Sequence[str],
    ranges: Sequence[str],
    hours: Sequence[int | None],
    window: int,
    min_hour_shift: float,
    splits: range,
) -> list[tuple[int, tuple[ChangeKind, ...]]]:
    """The splits in ``splits`` that coincide with a session change, each with the kinds of
    change there (see the module docstring)."""
    by_kind: tuple[tuple[ChangeKind, set[int]], ...] = (
        ("device", _value_changes(devices, window, splits)),
        ("hours", _hour_changes(hours, window, min_hour_shift, splits)),
        ("ip_range", _value_changes(ranges, window, splits)),
    )
    found = []
    for i in splits:
        kinds = tuple(kind for kind, changes in by_kind if i in changes)
        if kinds:
            found.append((i, kinds))
    return found


def may_be_tested(
    hours: Sequence[int | None],
    *,
    several_devices: bool,
    several_ranges: bool,
    min_segment: int = 10,
    window: int = 10,
    min_hour_shift: float = 6.0,
) -> bool:
    """Whether :func:`detect_boosting` can test a player, from a summary of the player's
    series: the local hour of each game in play order, and whether the games hold two or
    more distinct known devices, and IP ranges.

    It can only if the series has ``>= 2 * min_segment`` games and its session changes
    give a segment: a device or IP-range change needs two distinct values (necessary, not
    sufficient); with one device and one range, the hours changes and the segments are
    decided here exactly as the detector decides them. The database audit loads the series
    of only the players for whom this holds: it computes the inputs in SQL
    (:mod:`integrity.sql.summary`)."""
    n = len(hours)
    if n < 2 * min_segment:
        return False
    if several_devices or several_ranges:
        return True
    # With no device or range known, _changes reduces to the hours' changes, one split per
    # run of consecutive ones, the run's middle.
    splits = sorted(_hour_changes(hours, window, min_hour_shift, range(1, n)))
    changes = [(first + last) // 2 for first, last in _runs(splits)]
    return bool(_segments(changes, n, min_segment))


def _runs(splits: Sequence[int]) -> list[tuple[int, int]]:
    """The first and last split of each run of consecutive ``splits`` (ascending)."""
    runs: list[tuple[int, int]] = []
    for split in splits:
        if runs and split == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], split)
        else:
            runs.append((split, split))
    return runs


def reads_history(*, several_devices: bool, several_ranges: bool) -> bool:
    """Whether boosting reads a player's history, from whether the player's games in the
    window hold two or more known devices and two or more known IP ranges: only then can a
    block of the window change hands (module docstring). The database audit reads the
    history of only these players (:mod:`integrity.sql.summary`)."""
    return several_devices and several_ranges


def _segments(
    changes: Sequence[int], n: int, min_segment: int, first: int = 0
) -> list[tuple[int, int]]:
    """The segments ``[a, b)`` between two boundaries (``0``, the ``changes``, ``n``), other
    than ``[0, n)``, with ``>= min_segment`` games inside and outside, that start in the
    window (``a >= first``, the games before ``first`` being its history)."""
    bounds = [0, *changes, n]
    return [
        (a, b)
        for k, a in enumerate(bounds)
        for b in bounds[k + 1 :]
        if a >= first and (a, b) != (0, n) and b - a >= min_segment and n - (b - a) >= min_segment
    ]


def _midranks(values: Sequence[float]) -> tuple[list[float], float]:
    """Mid-ranks (1-based) and the tie term ``sum(t**3 - t)``."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    ties = 0.0
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        rank = (start + end) / 2 + 1
        for k in range(start, end + 1):
            ranks[order[k]] = rank
        t = end - start + 1
        ties += t**3 - t
        start = end + 1
    return ranks, ties


def _agreement(values: Sequence[str], old: str | None, new: str | None, i: int, w: int) -> int:
    """How well ``i`` separates ``old`` from ``new``: of the ``w`` values before ``i``, those
    that are ``old`` less those that are ``new``, plus the reverse from ``i``."""
    before = values[max(0, i - w) : i]
    after = values[i : i + w]
    return (
        sum(v == old for v in before)
        - sum(v == new for v in before)
        + sum(v == new for v in after)
        - sum(v == old for v in after)
    )


def _changes(
    devices: Sequence[str],
    ranges: Sequence[str],
    hours: Sequence[int | None],
    window: int,
    min_hour_shift: float,
) -> list[tuple[int, tuple[ChangeKind, ...]]]:
    """The session changes: one split per run of consecutive splits that coincide with a
    change, with the kinds of change in the run (module docstring)."""
    splits = range(1, len(devices))
    found = dict(_session_changes(devices, ranges, hours, window, min_hour_shift, splits))
    changes = []
    for first, last in _runs(list(found)):
        kinds = tuple(sorted({kind for i in range(first, last + 1) for kind in found[i]}))
        sides = [
            (
                values,
                _mode(values[max(0, first - window) : first]),
                _mode(values[last : last + window]),
            )
            for values in (devices, ranges)
        ]
        sides = [(values, old, new) for values, old, new in sides if old != new]
        if sides:
            best = max(
                range(first, last + 1),
                key=lambda i: (
                    sum(_agreement(values, old, new, i, window) for values, old, new in sides),
                    -i,
                ),
            )
        else:
            best = (first + last) // 2
        changes.append((best, kinds))
    return changes


class _Positions:
    """Where each known value occurs in a series, to tell whether a segment's values are
    shared with the rest of the series."""

    def __init__(self, values: Sequence[str]) -> None:
        self.at: dict[str, list[int]] = {}
        for i, value in enumerate(values):
            if value:
                self.at.setdefault(value, []).append(i)

    def separates(self, a: int, b: int) -> bool:
        """Whether no value occurs both inside ``[a, b)`` and outside it, and each side has
        a known value."""
        inside = outside = False
        for positions in self.at.values():
            count = bisect_left(positions, b) - bisect_left(positions, a)
            if count and count < len(positions):
                return False
            if count:
                inside = True
            else:
                outside = True
        return inside and outside


@dataclass(frozen=True, slots=True)
class _Series:
    """Prefix sums of a player's residual ranks, for segment statistics in O(1)."""

    n: int
    spread: float  # (n + 1) - ties / (n (n - 1)): the tie-corrected rank variance factor
    r: list[float]  # prefix sums of ranks
    rr: list[float]  # of squared ranks
    tr: list[float]  # of index times rank

    @classmethod
    def of(cls, values: Sequence[float]) -> _Series:
        n = len(values)
        ranks, ties = _midranks(values)
        r, rr, tr = [0.0], [0.0], [0.0]
        for t, rank in enumerate(ranks):
            r.append(r[-1] + rank)
            rr.append(rr[-1] + rank * rank)
            tr.append(tr[-1] + t * rank)
        return cls(n, (n + 1) - ties / (n * (n - 1)), r, rr, tr)

    def z(self, a: int, b: int) -> float:
        """One-sided rank-sum z of ``[a, b)`` over the rest (continuity-corrected)."""
        n, inside = self.n, b - a
        outside = n - inside
        excess = self.r[b] - self.r[a] - inside * (n + 1) / 2
        variance = inside * outside / 12 * self.spread
        if variance <= 0:
            return 0.0
        return (excess - 0.5) / math.sqrt(variance)

    def trend(self, a: int, b: int) -> float:
        """The within-piece rank trend z of the pieces ``[0, a)``, ``[a, b)``, ``[b, n)``
        (module docstring); 0 when it is undefined."""
        total = variance = 0.0
        for lo, hi in ((0, a), (a, b), (b, self.n)):
            size = hi - lo
            if size < 2:
                continue
            sum_r = self.r[hi] - self.r[lo]
            sum_t = (lo + hi - 1) * size / 2
            total += self.tr[hi] - self.tr[lo] - sum_t * sum_r / size
            ss_t = size * (size * size - 1) / 12
            ss_r = self.rr[hi] - self.rr[lo] - sum_r * sum_r / size
            variance += ss_t * ss_r / (size - 1)
        return total / math.sqrt(variance) if variance > 0 else 0.0


def _day_runs(obs: Sequence[SessionObs | None]) -> list[tuple[int, int]]:
    """The series' days: the runs ``[lo, hi)`` of consecutive games on one tour day (a game
    without a session is on the day of the game before it)."""
    runs: list[tuple[int, int]] = []
    day: int | None = None
    for i, o in enumerate(obs):
        today = o.hour // 24 if o else day
        if runs and today == day:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
        day = today
    return runs


def _day_sums(values: Sequence[float], runs: Sequence[tuple[int, int]]) -> list[float]:
    """The one-way ANOVA of a series' residual ranks by day: the sums of squares between
    and within the days, their degrees of freedom, and ``n - sum(n_d ** 2) / n`` (the
    weight of the day variance in the expected sum between)."""
    ranks, _ = _midranks(values)
    n = len(ranks)
    mean = (n + 1) / 2
    between = within = 0.0
    squares = 0
    for lo, hi in runs:
        size = hi - lo
        level = math.fsum(ranks[lo:hi]) / size
        between += size * (level - mean) ** 2
        within += math.fsum((rank - level) ** 2 for rank in ranks[lo:hi])
        squares += size * size
    return [between, within, len(runs) - 1, n - len(runs), n - squares / n]


def _icc(sums: Sequence[float]) -> float:
    """The day ICC of pooled :func:`_day_sums`: ``var_day / (var_day + var_game)``, with
    ``var_game`` the mean square within and ``var_day`` the excess of the mean square
    between over it, per unit of weight (0 when not positive)."""
    between, within, df_between, df_within, weight = sums
    if df_between <= 0 or df_within <= 0 or weight <= 0:
        return 0.0
    var_game = within / df_within
    var_day = (between / df_between - var_game) * df_between / weight
    return var_day / (var_day + var_game) if var_day > 0 and var_game > 0 else 0.0


@dataclass(frozen=True, slots=True)
class _Days:
    """A series' days and the day ICC ``rho`` of its residual ranks."""

    runs: Sequence[tuple[int, int]]
    rho: float

    def deff(self, a: int, b: int) -> float:
        """The design effect of ``[a, b)`` against the rest (module docstring)."""
        n = self.runs[-1][1]
        inside, outside = b - a, n - (b - a)
        spread = 0.0
        for lo, hi in self.runs:
            shared = max(0, min(hi, b) - max(lo, a))
            spread += (shared / inside - (hi - lo - shared) / outside) ** 2
        return max(1.0, 1 - self.rho + self.rho * spread / (1 / inside + 1 / outside))


@dataclass(frozen=True, slots=True)
class _Test:
    segment: tuple[int, int]
    z: float
    trend: bool
    splits: int
    identity: bool
    kinds: tuple[ChangeKind, ...]
    deff: float


def _test(
    values: Sequence[float],
    changes: Sequence[tuple[int, tuple[ChangeKind, ...]]],
    devices: _Positions,
    ranges: _Positions,
    min_segment: int,
    first: int = 0,
    may_change_hands: bool = True,
    days: _Days | None = None,
) -> _Test | None:
    """The player's best segment (module docstring), ``None`` without any segment; with
    ``may_change_hands`` false, no segment counts as changing hands; with ``days``, each
    segment's ``z`` is divided by the square root of its day design effect."""
    n = len(values)
    kinds_at: dict[int, tuple[ChangeKind, ...]] = dict(changes)
    segments = _segments(list(kinds_at), n, min_segment, first)
    if not segments:
        return None
    identity = [
        (a, b)
        for a, b in segments
        if may_change_hands and devices.separates(a, b) and ranges.separates(a, b)
    ]
    tested = identity or segments
    series = _Series.of(values)
    deff = days.deff if days else lambda a, b: 1.0
    scored = sorted(
        ((series.z(a, b) / math.sqrt(deff(a, b)), a, b) for a, b in tested),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    chosen = scored[0]
    trend = True
    for z, a, b in scored:
        inside = (a + b - 1) / 2
        outside = ((n - 1) * n / 2 - inside * (b - a)) / (n - (b - a))
        slope = series.trend(a, b)
        if not (
            (inside > outside and slope >= TREND_Z) or (inside < outside and slope <= -TREND_Z)
        ):
            chosen, trend = (z, a, b), False
            break
    z, a, b = chosen
    kinds = tuple(sorted({kind for edge in (a, b) for kind in kinds_at.get(edge, ())}))
    return _Test((a, b), z, trend, len(tested), bool(identity), kinds, deff(a, b))


def _log_tail(values: Sequence[float], a: int, b: int, z: float) -> float:
    """``log P(W >= w)`` for the rank sum ``w`` of ``[a, b)`` among ``values`` (ties broken
    against the segment): exact while the count fits :data:`DEFAULT_MAX_CELLS`, else the
    normal bound at ``z`` (module docstring)."""
    n, size = len(values), b - a
    order = sorted(range(n), key=lambda i: (values[i], not a <= i < b))
    observed = sum(rank for rank, i in enumerate(order, start=1) if a <= i < b)
    deficit = size * (2 * n - size + 1) // 2 - observed
    if min(size, n - size) * deficit > DEFAULT_MAX_CELLS:
        return log_normal_sf(z)
    return log_rank_sum_sf(observed, size, n)


def _by_game(
    series: Sequence[tuple[str, float]], sessions: list[SessionObs]
) -> Sequence[SessionObs | None]:
    """The session of each game of ``series`` (``None`` if it has none; of a game given
    twice, the last). An audit's sessions are the series' games in the same order — one per
    seat, in play order — and are then returned as they are."""
    if list(map(itemgetter(0), sessions)) == list(map(itemgetter(0), series)):
        return sessions
    games = {session.game_id: session for session in sessions}
    return [games.get(game_id) for game_id, _ in series]


@dataclass(frozen=True, slots=True)
class _Tested:
    """A player in the family: the test, the series tested (with its ``history`` games
    first), the sessions of its games, and what the test needs to run again."""

    player: str
    test: _Test
    series: Sequence[tuple[str, float]]
    obs: Sequence[SessionObs | None]
    history: int
    may_change_hands: bool
    sessions: _Sessions


@dataclass(frozen=True, slots=True)
class _Sessions:
    """A series' session changes and where each device and address range occurs."""

    changes: list[tuple[int, tuple[ChangeKind, ...]]]
    devices: _Positions
    ranges: _Positions

    @classmethod
    def of(cls, obs: Sequence[SessionObs | None], window: int, min_hour_shift: float) -> _Sessions:
        devices = [o.device if o else "" for o in obs]
        ranges = [_ip_range(o.ip) if o and o.ip else "" for o in obs]
        hours = [o.hour if o else None for o in obs]
        changes = _changes(devices, ranges, hours, window, min_hour_shift)
        return cls(changes, _Positions(devices), _Positions(ranges))

    def test(
        self,
        series: Sequence[tuple[str, float]],
        first: int,
        min_segment: int,
        may_change_hands: bool = True,
        days: _Days | None = None,
    ) -> _Test | None:
        """The player's best segment over ``series`` (the games before ``first`` its
        history), ``None`` when it has none; ``may_change_hands`` and ``days`` as
        :func:`_test`'s. A history is given only with two devices and two ranges in the
        window (:func:`reads_history`), which :func:`may_be_tested` then passes."""
        if not self.changes:
            return None
        return _test(
            [value for _, value in series],
            self.changes,
            self.devices,
            self.ranges,
            min_segment,
            first,
            may_change_hands,
            days,
        )


def detect_boosting(
    residuals: Mapping[str, Sequence[tuple[str, float]]],
    sessions: Iterable[SessionObs],
    *,
    history: Mapping[str, int] | None = None,
    q: float = 0.01,
    min_segment: int = 10,
    window: int = 10,
    min_hour_shift: float = 6.0,
    day_family: int = DAY_FAMILY,
) -> BoostingResult:
    """Flag blocks of better games that start or end where the account's sessions change
    (module docstring); ``history[player]`` leading games of a series come before the
    window (see *History* there); the day ICC is estimated from ``day_family`` or more
    other players of the family (*Days* there)."""
    if not 0 < q < 1 or min(min_segment, window, day_family) < 1:
        raise ValueError("need 0 < q < 1, min_segment >= 1, window >= 1 and day_family >= 1")
    prior = history or {}
    # The sessions of the players long enough to test, by player, in the order given.
    seen: dict[str, list[SessionObs]] = {
        player: []
        for player, series in residuals.items()
        if len(series) - prior.get(player, 0) >= 2 * min_segment
    }
    for session in sessions:
        games = seen.get(session.player)
        if games is not None:
            games.append(session)
    tested: list[_Tested] = []
    for player in sorted(seen):
        series = residuals[player]
        first = prior.get(player, 0)
        obs = _by_game(series, seen[player])
        if first and not reads_history(
            several_devices=len({o.device for o in obs[first:] if o and o.device}) > 1,
            several_ranges=len({_ip_range(o.ip) for o in obs[first:] if o and o.ip}) > 1,
        ):
            series, obs, first = series[first:], obs[first:], 0
        found_sessions = _Sessions.of(obs, window, min_hour_shift)
        test = found_sessions.test(series, first, min_segment)
        may_change_hands = True
        if test is not None and first and not test.identity:
            # History serves a block that changes hands only; without one, as judged with
            # the history, the window is tested alone, all of it the owner's (module
            # docstring).
            series, obs, first, may_change_hands = series[first:], obs[first:], 0, False
            found_sessions = _Sessions.of(obs, window, min_hour_shift)
            test = found_sessions.test(series, 0, min_segment, may_change_hands=False)
        if test is not None:
            tested.append(
                _Tested(player, test, series, obs, first, may_change_hands, found_sessions)
            )

    # Each player's tests again, with the day ICC of the rest of the family.
    runs = [_day_runs(t.obs) for t in tested]
    sums = [
        _day_sums([value for _, value in t.series], r) for t, r in zip(tested, runs, strict=True)
    ]
    total = [math.fsum(column) for column in zip(*sums, strict=True)]
    estimated = len(tested) - 1 >= day_family
    log_ps: list[float] = []
    for k, (t, own) in enumerate(zip(tested, sums, strict=True)):
        rho = _icc([a - b for a, b in zip(total, own, strict=True)]) if estimated else 0.0
        test = t.test
        if rho > 0:
            days = _Days(runs[k], rho)
            test = (
                t.sessions.test(t.series, t.history, min_segment, t.may_change_hands, days) or test
            )
            tested[k] = replace(t, test=test)
        log_p = 0.0 if test.trend else min(0.0, math.log(test.splits) + log_normal_sf(test.z))
        if log_p < _EXACT_BELOW and test.deff == 1.0:
            # The exact tail is below the normal bound there, and worth the count.
            tail = _log_tail([value for _, value in t.series], *test.segment, test.z)
            log_p = min(0.0, math.log(test.splits) + tail)
        log_ps.append(log_p)

    weight = share_weights([t.test.identity for t in tested], IDENTITY_SHARE)
    log_w = [math.log(weight[0] if t.test.identity else weight[1]) for t in tested]
    weighted = [log_p - lw for log_p, lw in zip(log_ps, log_w, strict=True)]
    log_qs = bh_log_qvalues(weighted, m=len(tested))
    threshold = math.log(q)
    found = []
    for t, log_p, lw, log_q in zip(tested, log_ps, log_w, log_qs, strict=True):
        if log_q > threshold:
            continue
        player, test, series, obs = t.player, t.test, t.series, t.obs
        values = [value for _, value in series]
        a, b = test.segment
        inside = values[a:b]
        outside = values[:a] + values[b:]
        before = math.fsum(outside) / len(outside)
        after = math.fsum(inside) / len(inside)
        change = a if a else b
        at_change = obs[change]
        flag = BoostFlag(
            player=player,
            games=len(values),
            history=t.history,
            segment=test.segment,
            change_index=change,
            change_game=series[change][0],
            change_hour=at_change.hour if at_change else None,
            kinds=test.kinds,
            identity=test.identity,
            before_mean=before,
            after_mean=after,
            shift=after - before,
            z=test.z,
            day_effect=test.deff,
            splits=test.splits,
            weight=math.exp(lw),
            p=math.exp(log_p),
            q=math.exp(log_q),
            strength=-log_q / _LN10,
        )
        found.append((log_p - lw, player, flag))
    found.sort(key=lambda item: (item[0], item[1]))
    return BoostingResult(
        flags=tuple(flag for _, _, flag in found),
        family_size=len(tested),
        day_icc=_icc(total) if estimated else 0.0,
    )
