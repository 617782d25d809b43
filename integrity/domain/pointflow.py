"""Point flow: one account feeding points to another (串谋让分, collusion) (SPEC §7).

Under the tour scoring the winner of a game collects the margins of the others, so a
feeder ``F`` helps a beneficiary ``B`` by staying at the table with a heavy hand (keeping
wilds and action cards) whenever ``B`` goes out.

**Data.** :class:`~integrity.domain.data.TableObs` of the audit window, hands and winner
seats read; a sequence, because the test needs a second pass for the candidate pairs. When
given, the window's *history* (the games before it) adds to both samples of the pairs the
window puts in the family: a pair that feeds this week fed the week before.

**Statistic.** In a game ``F`` lost, ``F``'s *excess* is ``F``'s hand minus the mean hand
of the other non-winners (it measures ``F`` against the table, so the game's length and the
winner's strength cancel; ``B`` is never among those non-winners, so ``B``'s own skill
never enters). For the ordered pair ``(F, B)`` ``F``'s games fall in two samples: the ``n``
games ``B`` won with ``F`` at the table among at least two non-winners ("shared B-wins",
where ``F``'s points flow to ``B``) and the ``M`` baseline games — the games ``F`` lost
without ``B`` at the table, with at least one other non-winner. The games ``B`` lost at
``F``'s table are in neither: a feeder who finishes last, or feeds whenever ``B`` trails,
feeds there too, and would hide his own feeding in the baseline. Two
Wilcoxon–Mann–Whitney rank sums of the shared B-wins in the pooled samples, ties broken
against them
(:func:`~integrity.domain.stats.rank_sum`): of ``F``'s excesses, and of ``F``'s hands.

**Null and p-value.** Each rank sum is exact under its own null
(:func:`~integrity.domain.stats.log_rank_sum_sf`; its Hoeffding bound, also valid, for
very large samples, and wherever the normal approximation's tail is ``10 q`` or more: no
pair can be flagged there, BH flagging only below ``q``, and the count, whose cost grows
with the baseline, is spent on the p-values that can be): *against the table* — ``F``'s
excess does not depend on whether ``B`` won, so the shared B-wins are a uniformly random
``n`` of the ``n + M`` excesses; *against ``F``'s own games* — the same for ``F``'s hand.
The p-value is the larger of the two (an
intersection–union test, Berger 1982): it is valid when either null holds, so a pair is
flagged only when ``F``'s hands in ``B``'s wins are heavy both against the table and
against ``F``'s own baseline — a cheater at ``F``'s other tables (who skews the excess)
or games ``B`` wins in a way that leaves every hand heavy (which skews the hands) cannot
flag an honest pair alone. Both compare ``F`` with ``F``, so ``F``'s skill cancels.
Power: ``n`` shared B-wins above the ``M`` baseline games reach ``1 / C(n + M, n)``.

**Without a baseline.** The rank sums are the test whenever they can reach
``q / (1000 m)`` (``C(n + M, n) >= 1000 m / q``, ``m`` the family: BH's first threshold
with room to spare), as their null compares ``F`` with ``F``. Below that, when
``C(n + M, n)`` is also smaller than the product, over the shared B-wins, of ``1 +`` the
losing strangers (so the rank sums could not reach the per-table sign test's best p-value
— counts of games and seats, not of hands, e.g. a farm feeder who plays only with the fed
account), the pair gets the per-table sign test against the *losing strangers*: the
non-winners besides ``F`` whom co-seating did not find queueing with ``F`` or ``B``
(``queued``; a farm's other feeders sit at every shared table and feed too, so they are
no reference). The count of shared B-wins in which ``F``'s hand is at least every losing
stranger's is Poisson-binomial with ``pi_g = (hands equal to the largest) / (1 + losing
strangers)`` when ``F``'s hand is exchangeable with theirs
(:func:`~integrity.domain.stats.log_poisson_binomial_sf`); a game without a losing
stranger does not count.

**Family (opportunity).** Every ordered pair with ``>= min_shared_wins`` (default 5)
shared B-wins in the window — a count that does not look at the hands.
Benjamini–Hochberg at ``q`` (default 0.01) over those ordered pairs. **False-positive
control:** the FDR of the flagged ordered pairs, under the nulls above, at ``q``.

**Evidence** (not part of the test): the test used, the two rank sums with their null
mean and the baseline size; in how many shared B-wins ``F``'s hand was at least every
losing stranger's (and how many the exchangeable null expects); ``F``'s mean hand in ``B``'s wins
against ``F``'s mean hand in ``F``'s lost games where ``B`` was not at the table; the mean
excess; and the flow asymmetry: hand points ``F`` held in ``B``'s wins against those ``B``
held in ``F``'s wins, with the reverse pair's shared wins. Flags are ordered by p-value,
then by (feeder, beneficiary).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import ClassVar, Final

from integrity.domain.data import TableObs, partners_of
from integrity.domain.stats import (
    DEFAULT_MAX_CELLS,
    bh_log_qvalues,
    log_comb,
    log_poisson_binomial_sf,
    log_rank_sum_sf,
    rank_sum,
)

__all__ = ["VERSION", "FlowFlag", "PointflowResult", "detect_pointflow"]

VERSION: Final = "pointflow-6"

_REACH: Final = 1000.0
"""How far below BH's first threshold ``q / m`` the rank sums must be able to reach to be
the test whatever the sign test could reach."""

_EXACT_BELOW: Final = 10.0
"""The rank sums are counted exactly where their normal approximation's tail is below this
many times ``q``; above it Hoeffding's bound stands in (module docstring)."""

_LN10: Final = math.log(10.0)

_NOBODY: Final[frozenset[str]] = frozenset()


@dataclass(frozen=True, slots=True)
class FlowFlag:
    """An ordered pair where the feeder held heavy hands in the beneficiary's wins.

    ``test`` is ``"rank"`` or ``"sign"`` (see the module docstring); ``rank_sum`` and
    ``rank_sum_hands`` are the rank sums of the ``shared_wins`` excesses and hands among
    them and the ``baseline_games`` ones (``rank_sum_expected`` under the null); in
    ``heaviest`` of the shared wins the feeder's hand was at least every losing stranger's
    (``expected`` of them if the feeder were exchangeable with them); ``mean_excess``
    is the mean excess in the shared wins; ``feeder_baseline`` is ``None`` when every lost
    game of the feeder had the beneficiary at the table.
    """

    family: ClassVar[str] = "pointflow"
    near_conclusive: ClassVar[bool] = False

    feeder: str
    beneficiary: str
    shared_wins: int
    test: str
    baseline_games: int
    rank_sum: int
    rank_sum_hands: int
    rank_sum_expected: float
    heaviest: int
    expected: float
    mean_excess: float
    feeder_mean: float
    feeder_baseline: float | None
    flow_to_beneficiary: int
    flow_to_feeder: int
    reverse_wins: int
    p: float
    q: float
    strength: float

    @property
    def players(self) -> tuple[str, ...]:
        return tuple(sorted((self.feeder, self.beneficiary)))


@dataclass(frozen=True, slots=True)
class PointflowResult:
    """The discoveries and the family they were controlled over."""

    flags: tuple[FlowFlag, ...]
    family_size: int
    version: str = VERSION


@dataclass(slots=True)
class _Shared:
    """One ordered pair's B-won games: their count, the sign test's probabilities (games
    with a losing stranger) and sums of evidence."""

    wins: int = 0
    probs: list[float] = field(default_factory=list)
    log_chances: float = 0.0
    heaviest: int = 0
    excess: float = 0.0
    feeder_points: int = 0


@dataclass(slots=True)
class _Samples:
    """One tested pair's (excess, hand) of the feeder: the shared B-wins, and the games with
    the beneficiary at the table (``seated``, to leave out of the feeder's games)."""

    wins: list[tuple[Fraction, int]] = field(default_factory=list)
    seated: list[tuple[Fraction, int]] = field(default_factory=list)
    seated_points: int = 0
    seated_lost: int = 0


def _lost_games(table: TableObs) -> list[int]:
    winners = set(table.winners)
    return [seat for seat in range(len(table.players)) if seat not in winners]


def _excess(hand: int, others: Sequence[int]) -> Fraction:
    """The hand minus the others' mean, exactly (ties in the ranks stay ties)."""
    return Fraction(len(others) * hand - sum(others), len(others))


def _tested_pairs(tables: Sequence[TableObs], min_shared_wins: int) -> list[tuple[str, str]]:
    """First pass: only count each ordered pair's shared B-wins (most pairs have one or two);
    the pairs with ``>= min_shared_wins``, sorted."""
    counts: Counter[tuple[str, str]] = Counter()
    for table in tables:
        losers = _lost_games(table)
        if len(losers) < 2:
            continue
        players = table.players
        counts.update(
            (players[seat], players[winner]) for winner in table.winners for seat in losers
        )
    return sorted(pair for pair, n in counts.items() if n >= min_shared_wins)


@dataclass
class _Evidence:
    """Second pass, over the tested pairs' feeders (and, for the flow asymmetry, their
    beneficiaries): the shared B-wins' evidence, and every excess of the feeders by
    partner."""

    partners: dict[str, list[str]]
    followed: dict[str, set[str]]
    queued: dict[str, frozenset[str]]
    samples: dict[tuple[str, str], _Samples]
    own: dict[str, list[tuple[Fraction, int]]]
    shared: dict[tuple[str, str], _Shared] = field(default_factory=dict)
    lost_points: dict[str, int] = field(default_factory=dict)
    lost_count: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, tested: Sequence[tuple[str, str]], queued: Iterable[tuple[str, str]]) -> _Evidence:
        partners: dict[str, list[str]] = {}
        followed: dict[str, set[str]] = {}
        for feeder, beneficiary in tested:
            partners.setdefault(feeder, []).append(beneficiary)
            followed.setdefault(feeder, set()).add(beneficiary)
            followed.setdefault(beneficiary, set()).add(feeder)
        samples = {pair: _Samples() for pair in tested}
        return cls(partners, followed, partners_of(queued), samples, {f: [] for f in partners})

    def add(self, table: TableObs) -> None:
        losers = _lost_games(table)
        if len(losers) >= 2 and any(table.players[seat] in self.followed for seat in losers):
            self._add_wins(table, losers)
        for seat in losers:
            if table.players[seat] in self.partners:
                self._add_feeder(table, losers, seat)

    def _add_wins(self, table: TableObs, losers: Sequence[int]) -> None:
        players = table.players
        hands = [table.hands[seat] for seat in losers]
        total, r = sum(hands), len(hands)
        for winner in table.winners:
            beneficiary = players[winner]
            for seat, hand in zip(losers, hands, strict=True):
                feeder = players[seat]
                if beneficiary not in self.followed.get(feeder, ()):
                    continue
                acc = self.shared.setdefault((feeder, beneficiary), _Shared())
                acc.wins += 1
                acc.excess += hand - (total - hand) / (r - 1)
                acc.feeder_points += hand
                known = self.queued.get(feeder, _NOBODY) | self.queued.get(beneficiary, _NOBODY)
                strangers = [
                    h
                    for k, h in zip(losers, hands, strict=True)
                    if players[k] not in known and k != seat
                ]
                if strangers:
                    heaviest = max(hand, *strangers)
                    acc.probs.append(
                        (strangers.count(heaviest) + (hand == heaviest)) / (len(strangers) + 1)
                    )
                    acc.log_chances += math.log(len(strangers) + 1)
                    acc.heaviest += hand == heaviest

    def _add_feeder(self, table: TableObs, losers: Sequence[int], seat: int) -> None:
        feeder, hand = table.players[seat], table.hands[seat]
        self.lost_points[feeder] = self.lost_points.get(feeder, 0) + hand
        self.lost_count[feeder] = self.lost_count.get(feeder, 0) + 1
        others = {table.players[i]: table.hands[i] for i in losers if i != seat}
        excess = (_excess(hand, list(others.values())), hand) if others else None
        if excess is not None:
            self.own[feeder].append(excess)
        for beneficiary in self.partners[feeder]:
            if beneficiary not in table.players:
                continue
            sample = self.samples[feeder, beneficiary]
            sample.seated_points += hand
            sample.seated_lost += 1
            if excess is None:
                continue
            sample.seated.append(excess)
            if beneficiary not in others:
                sample.wins.append(excess)


def _uses_ranks(n: int, baseline: int, acc: _Shared, log_reach: float) -> bool:
    """The rank sums are the test when their best p-value ``1 / C(n + M, n)`` is at most
    ``exp(-log_reach)`` or the sign test's best (see the module docstring)."""
    return log_comb(n + baseline, n) >= min(acc.log_chances, log_reach)


def _ranks(pair: tuple[str, str], evidence: _Evidence) -> tuple[int, int, int]:
    """The rank sums of the shared B-wins' excesses and hands among the feeder's baseline
    (the feeder's lost games without the beneficiary), and the baseline's size."""
    sample = evidence.samples[pair]
    baseline = list((Counter(evidence.own[pair[0]]) - Counter(sample.seated)).elements())
    return (
        rank_sum([e for e, _ in sample.wins], [e for e, _ in baseline]),
        rank_sum([h for _, h in sample.wins], [h for _, h in baseline]),
        len(baseline),
    )


def _flag(
    pair: tuple[str, str],
    log_p: float,
    log_q: float,
    ranks: tuple[int, int, int],
    evidence: _Evidence,
    test: str,
) -> FlowFlag:
    feeder, beneficiary = pair
    acc, sample = evidence.shared[pair], evidence.samples[pair]
    back = evidence.shared.get((beneficiary, feeder))
    n = acc.wins
    excess_sum, hand_sum, size = ranks
    rest = evidence.lost_count[feeder] - sample.seated_lost
    return FlowFlag(
        feeder=feeder,
        beneficiary=beneficiary,
        shared_wins=n,
        test=test,
        baseline_games=size,
        rank_sum=excess_sum,
        rank_sum_hands=hand_sum,
        rank_sum_expected=n * (n + size + 1) / 2,
        heaviest=acc.heaviest,
        expected=math.fsum(acc.probs),
        mean_excess=acc.excess / n,
        feeder_mean=acc.feeder_points / n,
        feeder_baseline=(
            (evidence.lost_points[feeder] - sample.seated_points) / rest if rest else None
        ),
        flow_to_beneficiary=acc.feeder_points,
        flow_to_feeder=back.feeder_points if back else 0,
        reverse_wins=back.wins if back else 0,
        p=math.exp(log_p),
        q=math.exp(log_q),
        strength=-log_q / _LN10,
    )


def detect_pointflow(
    tables: Sequence[TableObs],
    *,
    q: float = 0.01,
    min_shared_wins: int = 5,
    max_cells: int = DEFAULT_MAX_CELLS,
    queued: Iterable[tuple[str, str]] = (),
    history: Iterable[TableObs] = (),
) -> PointflowResult:
    """Flag feeder -> beneficiary pairs (see the module docstring); ``queued``: the pairs
    co-seating found queueing together, no strangers to each other's partners; ``history``:
    the games before the window (at least every one of the tested pairs' players)."""
    if not 0 < q < 1 or min_shared_wins < 1:
        raise ValueError("need 0 < q < 1 and min_shared_wins >= 1")
    tested = _tested_pairs(tables, min_shared_wins)
    evidence = _Evidence.of(tested, queued)
    for table in (*history, *tables):
        evidence.add(table)

    log_reach = math.log(_REACH * max(len(tested), 1) / q)
    exact_below = min(1.0, _EXACT_BELOW * q)
    log_ps = []
    ranks: dict[tuple[str, str], tuple[int, int, int]] = {}
    tests: dict[tuple[str, str], str] = {}
    for pair in tested:
        acc, n = evidence.shared[pair], len(evidence.samples[pair].wins)
        ranks[pair] = _ranks(pair, evidence)
        tests[pair] = "rank" if _uses_ranks(n, ranks[pair][2], acc, log_reach) else "sign"
        if tests[pair] == "rank":
            log_ps.append(
                max(
                    log_rank_sum_sf(
                        w, n, n + ranks[pair][2], max_cells=max_cells, exact_below=exact_below
                    )
                    for w in ranks[pair][:2]
                )
            )
        else:
            log_ps.append(log_poisson_binomial_sf(acc.heaviest, acc.probs, max_cells=max_cells))
    log_qs = bh_log_qvalues(log_ps, m=len(tested))
    threshold = math.log(q)
    flagged = [
        (log_p, log_q, pair)
        for pair, log_p, log_q in zip(tested, log_ps, log_qs, strict=True)
        if log_q <= threshold
    ]
    flags = [
        _flag(pair, log_p, log_q, ranks[pair], evidence, tests[pair])
        for log_p, log_q, pair in sorted(flagged)
    ]
    return PointflowResult(flags=tuple(flags), family_size=len(tested))
