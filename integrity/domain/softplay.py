"""Soft play: sparing one opponent the punishments a player deals the others (SPEC §7;
issue 28's behaviour signal from move logs).

Data: the chances to punish of a window's logged games, read from their replayed move logs
by ``tournaments.domain.chances`` (a turn on which the actor decides freely while the next
player is threatening and the actor holds a legal +2, skip, reverse or +4), each with
whether the actor punished.

Statistic: per (actor, target) pair, the actor's punishments on their chances against the
target, against the actor's punishments on their chances against everyone else. Colluders
spare their partner; an honest player treats every opponent alike, so the question is the
actor against themselves, not against other players' styles.

Test: Fisher's exact test, one-sided (the target is punished *less* often): conditional on
the actor's chances and punishments, the number against the target is hypergeometric, and
the p-value is its lower tail, exact in log space. Pairs with fewer than ``min_chances``
chances against the target are not tested (their p-value could not reach the level).

False-positive control: Benjamini–Hochberg at ``q`` over every tested pair of the window
(``integrity.domain.stats.bh_log_qvalues``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar, Final

from integrity.domain.stats import bh_log_qvalues

__all__ = [
    "Chance",
    "SoftPlayFlag",
    "SoftPlayResult",
    "detect_softplay",
    "log_fisher_lower",
]

VERSION: Final = "softplay-1"

#: A chance to punish, as ``tournaments.domain.chances`` reads it from a replayed log: the
#: actor's player id, the target's, and whether the actor punished.
Chance = tuple[str, str, bool]


@dataclass(frozen=True, slots=True)
class SoftPlayFlag:
    """An actor who spares a target: ``punished`` of ``chances`` against the target, against
    ``punished_others`` of ``chances_others`` against everyone else; ``p`` and its ``q``.
    A benefit signal for the case builder (``integrity.domain.cases``)."""

    family: ClassVar[str] = "softplay"
    near_conclusive: ClassVar[bool] = False

    actor: str
    target: str
    chances: int
    punished: int
    chances_others: int
    punished_others: int
    p: float
    q: float

    @property
    def players(self) -> tuple[str, str]:
        return (self.actor, self.target)

    @property
    def strength(self) -> float:
        """``-log10 q`` (the case score's unit)."""
        return -math.log10(self.q) if self.q > 0 else math.inf


@dataclass(frozen=True, slots=True)
class SoftPlayResult:
    flags: tuple[SoftPlayFlag, ...]
    family_size: int
    version: str = VERSION


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def log_fisher_lower(x: int, k: int, punished: int, total: int) -> float:
    """``log P(X <= x)`` for ``X`` hypergeometric: ``k`` chances drawn from ``total`` of
    which ``punished`` were punishments."""
    low = max(0, k - (total - punished))
    high = min(x, punished, k)
    if high < low:
        return -math.inf
    denominator = _log_comb(total, k)
    terms = [
        _log_comb(punished, i) + _log_comb(total - punished, k - i) - denominator
        for i in range(low, high + 1)
    ]
    peak = max(terms)
    return min(0.0, peak + math.log(sum(math.exp(term - peak) for term in terms)))


def detect_softplay(
    chances: Iterable[Chance], *, q: float = 0.01, min_chances: int = 5
) -> SoftPlayResult:
    """Flag the (actor, target) pairs whose actor spares the target (module docstring),
    strongest evidence first."""
    pairs: Counter[tuple[str, str]] = Counter()
    pair_punished: Counter[tuple[str, str]] = Counter()
    totals: Counter[str] = Counter()
    punishes: Counter[str] = Counter()
    for actor, target, punished in chances:
        key = (actor, target)
        pairs[key] += 1
        totals[actor] += 1
        if punished:
            pair_punished[key] += 1
            punishes[actor] += 1
    tested: list[tuple[tuple[str, str], float]] = []
    for key, k in sorted(pairs.items()):
        if k < min_chances:
            continue
        actor = key[0]
        log_p = log_fisher_lower(pair_punished[key], k, punishes[actor], totals[actor])
        tested.append((key, log_p))
    log_q = bh_log_qvalues([log_p for _, log_p in tested])
    flags = []
    for ((actor, target), log_p), lq in zip(tested, log_q, strict=True):
        if lq > math.log(q):
            continue
        k, x = pairs[(actor, target)], pair_punished[(actor, target)]
        flags.append(
            SoftPlayFlag(
                actor=actor,
                target=target,
                chances=k,
                punished=x,
                chances_others=totals[actor] - k,
                punished_others=punishes[actor] - x,
                p=math.exp(log_p),
                q=math.exp(lq),
            )
        )
    flags.sort(key=lambda flag: (flag.q, flag.actor, flag.target))
    return SoftPlayResult(flags=tuple(flags), family_size=len(tested))
