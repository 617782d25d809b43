"""A fed account: the accounts that queue with it hold heavy hands in its wins (多开刷分,
串谋让分) (SPEC §7).

A farm that fills its tables (the fed account and three of its own accounts) leaves no
stranger at them, and its feeders play nowhere else: point flow has nobody to compare a
feeder with. This test looks at the fed account's group as a whole: its hands when the fed
account wins against its hands when someone else does.

**Data.** :class:`~integrity.domain.data.TableObs` of the window (at least every game of
the tested accounts) and the pairs co-seating found queueing together (``queued``). An
account ``B``'s *group* is the accounts queued with ``B``; a *group table* is a game with
``B`` and at least one of them at the table. One value per game, so that the seats of one
game (which share its length) never count as separate observations:

* *the group's hand*: the mean hand of the group's losing members at a group table;
* *the losers' hand* (evidence only): the mean hand of everyone but the winners.

**Statistic.** The Wilcoxon–Mann–Whitney rank sum, ties broken against the tested sample
(:func:`~integrity.domain.stats.rank_sum`), of the group's hand in the ``n`` group tables
``B`` won (``B`` among the winners, none of the group), less :data:`STYLE_MARGIN`, against
the group's hand in the ``m`` group tables someone else won (a member or a stranger) with a
member losing. The same accounts at the same tables, so the members' own skill cancels.

**Null and p-value.** The group's hand in ``B``'s wins is at most :data:`STYLE_MARGIN`
points heavier than when someone else wins: the margin allows for a way of winning (an
account that ends long games, or punishes late, leaves heavy hands) that is not feeding.
The rank sum is exact under the null (:func:`~integrity.domain.stats.log_rank_sum_sf`). The
margin is the spread of the tour's winners, measured on the calibration weeks: the mean
losers' hand in the wins of an account with ``>= 20`` wins, less the mean of all games,
has its median + 3.09 robust SDs (a normal spread's 99.9th percentile) at 13.5–14.8 points,
most of it the sampling noise of 20 wins. A fed account's feeders add 40–250 points.

**Family (opportunity).** Every account with a group, ``>= min_shared_wins`` won group
tables and ``C(n + m, n) >= 1 / q`` (so the rank sum could reach ``q``): counts of games,
not hands. Benjamini–Hochberg at ``q`` over those accounts. **False-positive control:** the
FDR of the flagged accounts at ``q``, under the null above.

**Evidence** (not part of the test): the sample sizes, the rank sum with its null mean, the
mean group's hand in each sample, and the mean losers' hand in ``B``'s won group tables
against ``B``'s ``k`` wins with none of the group at the table (how ``B`` wins elsewhere).
Flags are ordered by p-value, then by account.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import ClassVar, Final

from integrity.domain.data import TableObs, partners_of
from integrity.domain.stats import (
    DEFAULT_MAX_CELLS,
    bh_log_qvalues,
    log_comb,
    log_rank_sum_sf,
    rank_sum,
)

__all__ = ["STYLE_MARGIN", "VERSION", "FedFlag", "FedResult", "detect_fed"]

VERSION: Final = "fed-1"

#: Hand points by which the group's hand in the account's wins may exceed its hand in the
#: others' wins under the null (module docstring).
STYLE_MARGIN: Final = 15

_LN10: Final = math.log(10.0)


@dataclass(frozen=True, slots=True)
class FedFlag:
    """An account whose group held heavy hands in its wins.

    ``account`` is the fed account, ``group`` the accounts queued with it; ``wins`` its won
    group tables, ``other_wins`` the group tables someone else won with a member losing,
    ``apart_wins`` its wins without the group; ``rank_sum`` is the test's rank sum
    (``expected`` under the null, ``margin`` the style margin); the means are the group's
    hand and the losers' hand in each sample.
    """

    family: ClassVar[str] = "fed"
    near_conclusive: ClassVar[bool] = False

    account: str
    group: tuple[str, ...]
    wins: int
    other_wins: int
    apart_wins: int
    rank_sum: int
    expected: float
    margin: int
    group_in_wins: float
    group_in_other_wins: float
    losers_in_wins: float
    losers_apart: float | None
    p: float
    q: float
    strength: float

    @property
    def players(self) -> tuple[str, ...]:
        return tuple(sorted((self.account, *self.group)))


@dataclass(frozen=True, slots=True)
class FedResult:
    """The discoveries and the family they were controlled over."""

    flags: tuple[FedFlag, ...]
    family_size: int
    version: str = VERSION


@dataclass(slots=True)
class _Samples:
    """One account's games: the group's and losers' hands in its won group tables, the
    group's hand where someone else won, the losers' hand in its wins apart."""

    group_in_wins: list[Fraction] = field(default_factory=list)
    losers_in_wins: list[Fraction] = field(default_factory=list)
    group_in_other_wins: list[Fraction] = field(default_factory=list)
    losers_apart: list[Fraction] = field(default_factory=list)


def _mean(values: Sequence[int]) -> Fraction:
    return Fraction(sum(values), len(values))


def _add(samples: _Samples, table: TableObs, seat: int, group: frozenset[str]) -> None:
    """Add one game of the account at ``seat`` to its samples."""
    winners = set(table.winners)
    members = [k for k, p in enumerate(table.players) if p in group]
    losing = [table.hands[k] for k in members if k not in winners]
    if seat in winners:
        losers = [h for k, h in enumerate(table.hands) if k not in winners]
        if not losers:
            return
        if not members:
            samples.losers_apart.append(_mean(losers))
        elif losing and len(losing) == len(members):
            samples.group_in_wins.append(_mean(losing))
            samples.losers_in_wins.append(_mean(losers))
    elif members and losing:
        samples.group_in_other_wins.append(_mean(losing))


def _tested(samples: _Samples, min_shared_wins: int, q: float) -> bool:
    """Whether the counts let the rank sum reach ``q`` (the family, module docstring)."""
    n, m = len(samples.group_in_wins), len(samples.group_in_other_wins)
    return n >= min_shared_wins and log_comb(n + m, n) >= -math.log(q)


def _rank_test(samples: _Samples, max_cells: int) -> tuple[int, float]:
    """The rank sum of the group's hands in the account's wins, less the margin, among
    those in the others' wins, and its log p-value (module docstring)."""
    n, m = len(samples.group_in_wins), len(samples.group_in_other_wins)
    w = rank_sum(
        [hand - STYLE_MARGIN for hand in samples.group_in_wins], samples.group_in_other_wins
    )
    return w, log_rank_sum_sf(w, n, n + m, max_cells=max_cells)


def _average(values: Sequence[Fraction]) -> float:
    return float(sum(values, Fraction(0)) / len(values))


def detect_fed(
    tables: Iterable[TableObs],
    queued: Iterable[tuple[str, str]],
    *,
    q: float = 0.01,
    min_shared_wins: int = 5,
    max_cells: int = DEFAULT_MAX_CELLS,
) -> FedResult:
    """Flag the accounts whose group held heavy hands in their wins (module docstring);
    ``queued``: the pairs co-seating found queueing together."""
    if not 0 < q < 1 or min_shared_wins < 1:
        raise ValueError("need 0 < q < 1 and min_shared_wins >= 1")
    groups = partners_of(queued)
    samples = {account: _Samples() for account in groups}
    for table in tables:
        for seat, player in enumerate(table.players):
            if player in groups:
                _add(samples[player], table, seat, groups[player])

    tested = sorted(a for a, s in samples.items() if _tested(s, min_shared_wins, q))
    tests = [_rank_test(samples[a], max_cells) for a in tested]
    log_qs = bh_log_qvalues([log_p for _, log_p in tests], m=len(tested))
    threshold = math.log(q)
    flags = []
    for account, (w, log_p), log_q in zip(tested, tests, log_qs, strict=True):
        if log_q > threshold:
            continue
        s = samples[account]
        n, m = len(s.group_in_wins), len(s.group_in_other_wins)
        flags.append(
            FedFlag(
                account=account,
                group=tuple(sorted(groups[account])),
                wins=n,
                other_wins=m,
                apart_wins=len(s.losers_apart),
                rank_sum=w,
                expected=n * (n + m + 1) / 2,
                margin=STYLE_MARGIN,
                group_in_wins=_average(s.group_in_wins),
                group_in_other_wins=_average(s.group_in_other_wins),
                losers_in_wins=_average(s.losers_in_wins),
                losers_apart=_average(s.losers_apart) if s.losers_apart else None,
                p=math.exp(log_p),
                q=math.exp(log_q),
                strength=-log_q / _LN10,
            )
        )
    flags.sort(key=lambda f: (f.p, f.account))
    return FedResult(flags=tuple(flags), family_size=len(tested))
