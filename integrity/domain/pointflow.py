"""Point flow: one account feeding points to another (串谋让分, collusion) (SPEC §7).

Under the tour scoring the winner of a game collects the margins of the others, so a
feeder ``F`` helps a beneficiary ``B`` by staying at the table with a heavy hand (keeping
wilds and action cards) whenever ``B`` goes out.

**Data.** :class:`~integrity.domain.data.TableObs` of the audit window, hands and winner
seats read; a sequence, because the evidence needs a second pass for the flagged pairs.

**Statistic.** For the ordered pair ``(F, B)``, over the games ``B`` won with ``F`` at the
table among at least two non-winners ("shared B-wins"): the count ``X`` of games in which
``F`` held the heaviest hand of the non-winners (ties included) — a one-sided sign test on
the paired difference ``F's hand - the largest other non-winner's hand >= 0``. The null is
that ``F``'s hand is exchangeable with the other non-winners' hands at the same table:
conditionally on a table's non-winner hands, ``F`` holds each of them with equal chance, so
the game succeeds with probability ``pi_g = (non-winners holding the largest hand) /
(non-winners)`` — exactly, whatever the distribution of hands, ties included (1/3 at a
four-seat table with distinct hands). ``X`` is Poisson-binomial with the ``pi_g``; the
p-value is ``P(X >= observed)``, exact by
:func:`~integrity.domain.stats.log_poisson_binomial_sf`. (Comparing ``F`` with the others'
mean instead gives ``pi_g`` of 1/3 or 2/3 depending on the skew of the table, which costs
power against a feeder who simply holds the most.)

**Family (opportunity).** Every ordered pair with ``>= min_shared_wins`` (default 5)
shared B-wins — a count that does not look at the hands. Benjamini–Hochberg at ``q``
(default 0.01) over those ordered pairs. **False-positive control:** the FDR of the
flagged ordered pairs, under the conditional null above, at ``q``.

**Evidence** (not part of the test): ``F``'s mean hand in ``B``'s wins against ``F``'s
baseline — ``F``'s mean hand in ``F``'s lost games where ``B`` was not at the table — the
mean paired difference, and the flow asymmetry: hand points ``F`` held in ``B``'s wins
against those ``B`` held in ``F``'s wins, with the reverse pair's shared wins.
Flags are ordered by p-value, then by (feeder, beneficiary).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Final

from integrity.domain.data import TableObs
from integrity.domain.stats import DEFAULT_MAX_CELLS, bh_log_qvalues, log_poisson_binomial_sf

__all__ = ["VERSION", "FlowFlag", "PointflowResult", "detect_pointflow"]

VERSION: Final = "pointflow-1"

_LN10: Final = math.log(10.0)


@dataclass(frozen=True, slots=True)
class FlowFlag:
    """An ordered pair where the feeder held heavy hands in the beneficiary's wins.

    In ``heaviest`` of the ``shared_wins`` games the feeder held the heaviest non-winning
    hand (``expected`` of them under the null); ``mean_excess`` is the mean of the feeder's
    hand minus the other non-winners' mean; ``feeder_baseline`` is ``None`` when every lost
    game of the feeder had the beneficiary at the table.
    """

    family: ClassVar[str] = "pointflow"
    near_conclusive: ClassVar[bool] = False

    feeder: str
    beneficiary: str
    shared_wins: int
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
    """One ordered pair's B-won games: the null probabilities and the sums of evidence."""

    probs: list[float] = field(default_factory=list)
    heaviest: int = 0
    excess: float = 0.0
    feeder_points: int = 0


def _lost_games(table: TableObs) -> list[int]:
    winners = set(table.winners)
    return [seat for seat in range(len(table.players)) if seat not in winners]


def detect_pointflow(
    tables: Sequence[TableObs],
    *,
    q: float = 0.01,
    min_shared_wins: int = 5,
    max_cells: int = DEFAULT_MAX_CELLS,
) -> PointflowResult:
    """Flag feeder -> beneficiary pairs (see the module docstring)."""
    if not 0 < q < 1 or min_shared_wins < 1:
        raise ValueError("need 0 < q < 1 and min_shared_wins >= 1")
    shared: dict[tuple[str, str], _Shared] = {}
    lost_points: dict[str, int] = {}
    lost_count: dict[str, int] = {}
    for table in tables:
        losers = _lost_games(table)
        for seat in losers:
            name = table.players[seat]
            lost_points[name] = lost_points.get(name, 0) + table.hands[seat]
            lost_count[name] = lost_count.get(name, 0) + 1
        if len(losers) < 2:
            continue
        hands = [table.hands[seat] for seat in losers]
        total, heaviest, r = sum(hands), max(hands), len(hands)
        pi = hands.count(heaviest) / r
        for winner in table.winners:
            beneficiary = table.players[winner]
            for seat, hand in zip(losers, hands, strict=True):
                acc = shared.setdefault((table.players[seat], beneficiary), _Shared())
                acc.probs.append(pi)
                acc.heaviest += hand == heaviest
                acc.excess += hand - (total - hand) / (r - 1)
                acc.feeder_points += hand

    tested = sorted(pair for pair, acc in shared.items() if len(acc.probs) >= min_shared_wins)
    log_ps = [
        log_poisson_binomial_sf(shared[pair].heaviest, shared[pair].probs, max_cells=max_cells)
        for pair in tested
    ]
    log_qs = bh_log_qvalues(log_ps, m=len(tested))
    threshold = math.log(q)
    flagged = [
        (log_p, log_q, pair)
        for pair, log_p, log_q in zip(tested, log_ps, log_qs, strict=True)
        if log_q <= threshold
    ]

    # Second pass, flagged pairs only: the feeder's lost games with the beneficiary seated.
    wanted = {pair for _, _, pair in flagged}
    with_points: dict[tuple[str, str], int] = dict.fromkeys(wanted, 0)
    with_count: dict[tuple[str, str], int] = dict.fromkeys(wanted, 0)
    if wanted:
        for table in tables:
            for seat in _lost_games(table):
                feeder = table.players[seat]
                for other in table.players:
                    key = (feeder, other)
                    if key in wanted:
                        with_points[key] += table.hands[seat]
                        with_count[key] += 1

    flags = []
    for log_p, log_q, pair in sorted(flagged):
        feeder, beneficiary = pair
        acc = shared[pair]
        back = shared.get((beneficiary, feeder))
        n = len(acc.probs)
        rest = lost_count[feeder] - with_count[pair]
        flags.append(
            FlowFlag(
                feeder=feeder,
                beneficiary=beneficiary,
                shared_wins=n,
                heaviest=acc.heaviest,
                expected=math.fsum(acc.probs),
                mean_excess=acc.excess / n,
                feeder_mean=acc.feeder_points / n,
                feeder_baseline=(
                    (lost_points[feeder] - with_points[pair]) / rest if rest else None
                ),
                flow_to_beneficiary=acc.feeder_points,
                flow_to_feeder=back.feeder_points if back else 0,
                reverse_wins=len(back.probs) if back else 0,
                p=math.exp(log_p),
                q=math.exp(log_q),
                strength=-log_q / _LN10,
            )
        )
    return PointflowResult(flags=tuple(flags), family_size=len(tested))
