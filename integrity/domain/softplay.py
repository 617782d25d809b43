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

The test needs, per tested pair, four counts (:data:`PairChances`: the pair's chances and
punishments, the actor's over all targets): :func:`pair_chances` counts them from the
chances, :func:`softplay_from_counts` tests them. The database audit counts the same in SQL
from the chances stored at ingest (``integrity.sql.softplay``, equal on the same logs:
tests/integrity/test_softplay_sql.py) and calls :func:`softplay_from_counts` too.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar, Final

from integrity.domain.stats import bh_log_qvalues, log_fisher_lower

__all__ = [
    "Chance",
    "PairChances",
    "SoftPlayFlag",
    "SoftPlayResult",
    "detect_softplay",
    "pair_chances",
    "softplay_from_counts",
]

VERSION: Final = "softplay-1"

#: A chance to punish, as ``tournaments.domain.chances`` reads it from a replayed log: the
#: actor's player id, the target's, and whether the actor punished.
Chance = tuple[str, str, bool]

#: What the test needs of one (actor, target) pair: actor, target, the chances against the
#: target and the punishments among them, the actor's chances and punishments against
#: everyone (the target included).
PairChances = tuple[str, str, int, int, int, int]


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


def pair_chances(chances: Iterable[Chance], *, min_chances: int = 5) -> list[PairChances]:
    """The counts of every pair with ``>= min_chances`` chances against the target, in
    (actor, target) order: what the database audit's SQL returns for the same chances."""
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
    return [
        (actor, target, k, pair_punished[actor, target], totals[actor], punishes[actor])
        for (actor, target), k in sorted(pairs.items())
        if k >= min_chances
    ]


def softplay_from_counts(
    pairs: Iterable[PairChances], *, q: float = 0.01, min_chances: int = 5
) -> SoftPlayResult:
    """Test each pair with ``>= min_chances`` chances against the target (module docstring)
    and flag those BH keeps at ``q``, strongest evidence first. Every pair given and kept by
    ``min_chances`` is in the family, so give all of the window's."""
    tested = sorted(pair for pair in pairs if pair[2] >= min_chances)
    log_p = [
        log_fisher_lower(punished, k, actor_punished, actor_chances)
        for _, _, k, punished, actor_chances, actor_punished in tested
    ]
    log_q = bh_log_qvalues(log_p)
    flags = []
    for pair, lp, lq in zip(tested, log_p, log_q, strict=True):
        if lq > math.log(q):
            continue
        actor, target, k, x, actor_chances, actor_punished = pair
        flags.append(
            SoftPlayFlag(
                actor=actor,
                target=target,
                chances=k,
                punished=x,
                chances_others=actor_chances - k,
                punished_others=actor_punished - x,
                p=math.exp(lp),
                q=math.exp(lq),
            )
        )
    flags.sort(key=lambda flag: (flag.q, flag.actor, flag.target))
    return SoftPlayResult(flags=tuple(flags), family_size=len(tested))


def detect_softplay(
    chances: Iterable[Chance], *, q: float = 0.01, min_chances: int = 5
) -> SoftPlayResult:
    """Flag the (actor, target) pairs whose actor spares the target (module docstring),
    strongest evidence first."""
    return softplay_from_counts(
        pair_chances(chances, min_chances=min_chances), q=q, min_chances=min_chances
    )
