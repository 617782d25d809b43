"""Boosting: someone else playing the account (代练代打) (SPEC §7).

A hired player shows up as a jump in the account's performance that starts when the
account's sessions change hands: a new device, a new address range, other hours of play.

**Data.** Per player, the performance residuals in play order — observed game score minus
the score expected from the opponents' skill (pass them in, or build them with
:func:`residual_series` from the tables and an expectation function) — and the
:class:`~integrity.domain.data.SessionObs` of those games.

**Session changes (opportunity, from sessions only).** A split ``i`` (games ``[0, i)``
before, ``[i, n)`` after) *coincides* with a change of a kind when the typical value of that
kind differs between the ``window`` games before ``i`` and the ``window`` games from ``i``:
the most frequent device; the most frequent IP range (IPv4 /24, IPv6 /48); the typical hour
of play (circular mean of the local hour, each side concentrated — mean resultant length
>= 0.5 — and ``>= min_hour_shift`` hours apart). The splits tested are those with
``min_segment <= i <= n - min_segment`` that coincide with at least one change.

**Statistic.** At each tested split the Mann–Whitney rank-sum statistic of the residuals
after against before, standardised with the tie-corrected variance and a continuity
correction of 1/2 (``z``); the change
point is the split of largest ``|z|`` (ties: the earliest). Rank-based, so heavy-tailed
game scores do not matter: under the null the residuals are exchangeable.

**p-value.** A Bonferroni-corrected normal bound, ``p = min(1, J * 2 * P(Z >= |z|))`` with
``J`` the number of tested splits of that player (``normal_sf`` via ``erfc``). The rank
statistic is lighter-tailed than the normal: with the continuity correction the normal tail
is above the exact one wherever the exact one is below 0.01 (checked exhaustively for
segments of 10 to 30 games), so the bound is conservative where decisions are made.
Because the splits are chosen from the session data alone, the scan is narrow (``J`` small)
and the coincidence is part of the test rather than a filter applied after it — filtering
Benjamini–Hochberg discoveries afterwards would void its guarantee.

**Family / threshold / false-positive control.** The players with at least one tested split
(session data and game counts only); Benjamini–Hochberg at ``q`` (default 0.01) over them.
Flags are ordered by p-value, then by player.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from typing import ClassVar, Final, Literal

from integrity.domain.data import SessionObs, TableObs
from integrity.domain.stats import bh_log_qvalues, log_normal_sf

__all__ = [
    "VERSION",
    "BoostFlag",
    "BoostingResult",
    "ChangeKind",
    "detect_boosting",
    "may_be_tested",
    "residual_series",
]

VERSION: Final = "boost-1"

ChangeKind = Literal["device", "hours", "ip_range"]

_LN10: Final = math.log(10.0)
_MIN_RESULTANT: Final = 0.5


@dataclass(frozen=True, slots=True)
class BoostFlag:
    """A performance shift that starts where the account's sessions change.

    ``change_index`` is the first game after the change (0-based in the player's series),
    ``shift`` the mean residual after minus before, ``z`` the signed rank statistic there,
    ``splits`` the number of session-change splits scanned (the Bonferroni factor).
    """

    family: ClassVar[str] = "boosting"
    near_conclusive: ClassVar[bool] = False

    player: str
    games: int
    change_index: int
    change_game: str
    change_hour: int | None
    kinds: tuple[ChangeKind, ...]
    before_mean: float
    after_mean: float
    shift: float
    z: float
    splits: int
    p: float
    q: float
    strength: float

    @property
    def players(self) -> tuple[str, ...]:
        return (self.player,)


@dataclass(frozen=True, slots=True)
class BoostingResult:
    """The discoveries and the family they were controlled over."""

    flags: tuple[BoostFlag, ...]
    family_size: int
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


def _typical_hour(x: float, y: float, count: int) -> float | None:
    """Circular mean hour from the summed unit vectors (``None``: unknown or spread out)."""
    if not count or math.hypot(x, y) < _MIN_RESULTANT * count:
        return None
    return (math.atan2(y, x) * 12 / math.pi) % 24


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
    changes = set()
    for i in candidates:
        before = _mode(values[max(0, i - window) : i])
        after = _mode(values[i : i + window])
        if before is not None and after is not None and before != after:
            changes.add(i)
    return changes


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
    for i in splits:
        lo, hi = max(0, i - window), min(n, i + window)
        before = _typical_hour(xs[i] - xs[lo], ys[i] - ys[lo], counts[i] - counts[lo])
        if before is None:
            continue
        after = _typical_hour(xs[hi] - xs[i], ys[hi] - ys[i], counts[hi] - counts[i])
        if after is not None:
            gap = abs(before - after)
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

    It can only if the series has ``>= 2 * min_segment`` games and a split coincides with
    a session change: a device or IP-range change needs two distinct values (necessary,
    not sufficient), an hours change is decided here exactly as the detector decides it.
    The database audit loads the series of only the players for whom this holds: it
    computes the inputs in SQL (:mod:`integrity.sql.summary`)."""
    n = len(hours)
    if n < 2 * min_segment:
        return False
    if several_devices or several_ranges:
        return True
    splits = range(min_segment, n - min_segment + 1)
    return bool(_hour_changes(hours, window, min_hour_shift, splits))


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


@dataclass(frozen=True, slots=True)
class _Scan:
    split: int
    z: float
    splits: int
    kinds: tuple[ChangeKind, ...]


def _scan(
    residuals: Sequence[float], splits: Sequence[tuple[int, tuple[ChangeKind, ...]]]
) -> _Scan:
    n = len(residuals)
    ranks, ties = _midranks(residuals)
    prefix = [0.0]
    for r in ranks:
        prefix.append(prefix[-1] + r)
    spread = (n + 1) - ties / (n * (n - 1))
    best = _Scan(splits[0][0], 0.0, len(splits), splits[0][1])
    for split, kinds in splits:
        n1, n2 = split, n - split
        variance = n1 * n2 / 12 * spread
        if variance <= 0:
            continue
        excess = prefix[n] - prefix[split] - n2 * (n2 + 1) / 2 - n1 * n2 / 2
        z = math.copysign(max(0.0, abs(excess) - 0.5), excess) / math.sqrt(variance)
        if abs(z) > abs(best.z):
            best = _Scan(split, z, len(splits), kinds)
    return best


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


def detect_boosting(
    residuals: Mapping[str, Sequence[tuple[str, float]]],
    sessions: Iterable[SessionObs],
    *,
    q: float = 0.01,
    min_segment: int = 10,
    window: int = 10,
    min_hour_shift: float = 6.0,
) -> BoostingResult:
    """Flag performance shifts that coincide with session changes (module docstring)."""
    if not 0 < q < 1 or min_segment < 1 or window < 1:
        raise ValueError("need 0 < q < 1, min_segment >= 1 and window >= 1")
    # The sessions of the players long enough to test, by player, in the order given.
    seen: dict[str, list[SessionObs]] = {
        player: [] for player, series in residuals.items() if len(series) >= 2 * min_segment
    }
    for session in sessions:
        games = seen.get(session.player)
        if games is not None:
            games.append(session)
    # (player, scan, log p, the session of the game at the split)
    tested: list[tuple[str, _Scan, float, SessionObs | None]] = []
    for player in sorted(residuals):
        series = residuals[player]
        n = len(series)
        if n < 2 * min_segment:
            continue
        obs = _by_game(series, seen[player])
        devices = [o.device if o else "" for o in obs]
        ranges = [_ip_range(o.ip) if o and o.ip else "" for o in obs]
        hours = [o.hour if o else None for o in obs]
        splits = _session_changes(
            devices, ranges, hours, window, min_hour_shift, range(min_segment, n - min_segment + 1)
        )
        if not splits:
            continue
        scan = _scan([value for _, value in series], splits)
        log_p = min(0.0, math.log(2 * len(splits)) + log_normal_sf(abs(scan.z)))
        tested.append((player, scan, log_p, obs[scan.split]))

    log_qs = bh_log_qvalues([log_p for _, _, log_p, _ in tested], m=len(tested))
    threshold = math.log(q)
    found = []
    for (player, scan, log_p, change), log_q in zip(tested, log_qs, strict=True):
        if log_q > threshold:
            continue
        values = [value for _, value in residuals[player]]
        before = math.fsum(values[: scan.split]) / scan.split
        after = math.fsum(values[scan.split :]) / (len(values) - scan.split)
        game_id = residuals[player][scan.split][0]
        flag = BoostFlag(
            player=player,
            games=len(values),
            change_index=scan.split,
            change_game=game_id,
            change_hour=change.hour if change else None,
            kinds=scan.kinds,
            before_mean=before,
            after_mean=after,
            shift=after - before,
            z=scan.z,
            splits=scan.splits,
            p=math.exp(log_p),
            q=math.exp(log_q),
            strength=-log_q / _LN10,
        )
        found.append((log_p, player, flag))
    found.sort(key=lambda item: (item[0], item[1]))
    return BoostingResult(flags=tuple(flag for _, _, flag in found), family_size=len(tested))
