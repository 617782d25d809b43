"""Soft play: sparing one opponent the punishments a player deals the others (SPEC §7;
issue 28's behaviour signal from move logs).

Data: the chances of a window's logged games, read from their replayed move logs by
``tournaments.domain.chances``, each with its kind and whether the actor punished:
*punish* (the next player is threatening and the actor holds a legal +2, skip, reverse or
+4), *challenge* (the target's +4 may be challenged) and *swap* (the actor's 7 could hand
the target the better hand).

Statistic: per (actor, target) pair and kind, the actor's punishments on their chances
against the target, against the actor's punishments on their chances of that kind against
everyone else. Colluders spare their partner; an honest player treats every opponent alike,
so the question is the actor against themselves, not against other players' styles — and
each kind against itself, since how often anyone challenges differs from how often they
punish.

Test: Fisher's exact test, one-sided (the target is punished *less* often), stratified by
kind: conditional on the actor's chances and punishments of each kind, the number of each
kind against the target is hypergeometric, and the p-value is the lower tail of their sum
(:func:`~integrity.domain.stats.log_fisher_sum_lower`, exact in log space; with one kind,
Fisher's own). A partner spared on every kind counts on every kind; a kind with few chances
(a +4 or two between them) adds little and dilutes nothing. Pairs with fewer than
``min_chances`` chances against the target of every kind are not tested (their p-value
could hardly reach the level).

False-positive control: weighted Benjamini–Hochberg (Genovese, Roeder & Wasserman 2006) at
``q`` over every tested pair of the window (``integrity.domain.stats.bh_log_qvalues`` on
``p / w``). Pairs that co-seating found queueing together (*queued*: either way round) share
:data:`QUEUED_SHARE` of the family's weight and the others the rest, each side alike: a
partner can be spared week after week only by someone who sits with him, and in a week of
20,000 players the queued are about one in thirteen of the family. The weights (averaging 1)
come from seating alone, which the test's null (an actor treats every opponent alike) leaves
independent of the punishments, so the FDR stays at ``q``; a pair that does not queue
together is still tested, at a tenth of the level. With no queued pair in the family, or
only queued ones, every weight is 1.

The test needs, per tested pair and kind, four counts (:data:`PairChances`: the pair's
chances and punishments, the actor's over all targets): :func:`pair_chances` counts them
from the chances, :func:`softplay_from_counts` tests them. The database audit counts the
same in SQL from the chances stored at ingest (``integrity.sql.softplay``, equal on the
same logs: tests/integrity/test_softplay_sql.py) and calls :func:`softplay_from_counts` too.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import ClassVar, Final

from integrity.domain.stats import (
    bh_log_qvalues,
    log_fisher_lower,
    log_fisher_sum_lower,
    share_weights,
)

__all__ = [
    "KIND_NAMES",
    "QUEUED_SHARE",
    "Chance",
    "KindCounts",
    "PairChances",
    "SoftPlayFlag",
    "SoftPlayResult",
    "detect_softplay",
    "pair_chances",
    "softplay_from_counts",
]

VERSION: Final = "softplay-3"

#: The share of the family's weight the pairs who queue together hold (module docstring).
QUEUED_SHARE: Final = 0.9

#: The kinds of chance by their stored number (``tournaments.domain.chances``).
KIND_NAMES: Final = {0: "punish", 1: "challenge", 2: "swap"}

#: A chance, as ``tournaments.domain.chances`` reads it from a replayed log: the actor's
#: player id, the target's, the kind, and whether the actor punished.
Chance = tuple[str, str, int, bool]

#: What the test needs of one (actor, target) pair and kind: actor, target, kind, the
#: chances against the target and the punishments among them, the actor's chances and
#: punishments of the kind against everyone (the target included).
PairChances = tuple[str, str, int, int, int, int, int]


@dataclass(frozen=True, slots=True)
class KindCounts:
    """One kind of chance of a pair: ``punished`` of ``chances`` against the target,
    ``punished_others`` of ``chances_others`` against everyone else, and the p-value of
    this kind alone (evidence; the pair's test is stratified over its kinds)."""

    kind: str
    chances: int
    punished: int
    chances_others: int
    punished_others: int
    p: float


@dataclass(frozen=True, slots=True)
class SoftPlayFlag:
    """An actor who spares a target: per kind of chance (``kinds``) and in all (``chances``,
    ``punished`` against the target; ``chances_others``, ``punished_others`` against
    everyone else); ``p`` stratified over the kinds, its weighted-BH ``weight`` (whether
    the two queue together: ``queued``) and its ``q``. A benefit signal for the case
    builder (``integrity.domain.cases``)."""

    family: ClassVar[str] = "softplay"
    near_conclusive: ClassVar[bool] = False

    actor: str
    target: str
    chances: int
    punished: int
    chances_others: int
    punished_others: int
    kinds: tuple[KindCounts, ...]
    p: float
    q: float
    queued: bool
    weight: float

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
    """The counts of every pair with ``>= min_chances`` chances against the target of one
    kind, a row per kind it has chances of, in (actor, target, kind) order: what the
    database audit's SQL returns for the same chances."""
    pairs: Counter[tuple[str, str, int]] = Counter()
    pair_punished: Counter[tuple[str, str, int]] = Counter()
    totals: Counter[tuple[str, int]] = Counter()
    punishes: Counter[tuple[str, int]] = Counter()
    for actor, target, kind, punished in chances:
        key = (actor, target, kind)
        pairs[key] += 1
        totals[actor, kind] += 1
        if punished:
            pair_punished[key] += 1
            punishes[actor, kind] += 1
    most: Counter[tuple[str, str]] = Counter()  # the pair's chances of its commonest kind
    for (actor, target, _), n in pairs.items():
        most[actor, target] = max(most[actor, target], n)
    rows: list[PairChances] = []
    for (actor, target, kind), n in sorted(pairs.items()):
        if most[actor, target] >= min_chances:
            hit = pair_punished[actor, target, kind]
            rows.append((actor, target, kind, n, hit, totals[actor, kind], punishes[actor, kind]))
    return rows


def _weights(queued: Sequence[bool]) -> list[float]:
    """Weighted BH's weights (module docstring): the queued pairs share
    :data:`QUEUED_SHARE` of the family's, the others the rest; all 1 when one side is
    empty."""
    if not 0 < sum(queued) < len(queued):
        return [1.0] * len(queued)
    inside, outside = share_weights(queued, QUEUED_SHARE)
    return [inside if flag else outside for flag in queued]


def softplay_from_counts(
    rows: Iterable[PairChances],
    *,
    q: float = 0.01,
    min_chances: int = 5,
    queued: Iterable[tuple[str, str]] = (),
) -> SoftPlayResult:
    """Test each pair with ``>= min_chances`` chances of one kind against the target (module
    docstring) and flag those weighted BH keeps at ``q``, strongest evidence first; the
    ``queued`` pairs (co-seating's discoveries, either order) weigh more. Every pair given
    and kept by ``min_chances`` is in the family, so give all of the window's."""
    together = {frozenset(pair) for pair in queued}
    tested: list[tuple[str, str, tuple[KindCounts, ...], float]] = []
    for (actor, target), group in groupby(sorted(rows), key=lambda row: (row[0], row[1])):
        counted: list[KindCounts] = []
        strata: list[tuple[int, int, int, int]] = []
        for _, _, kind, k, punished, actor_chances, actor_punished in group:
            strata.append((punished, k, actor_punished, actor_chances))
            counted.append(
                KindCounts(
                    KIND_NAMES.get(kind, str(kind)),
                    k,
                    punished,
                    actor_chances - k,
                    actor_punished - punished,
                    math.exp(log_fisher_lower(punished, k, actor_punished, actor_chances)),
                )
            )
        if max(counts.chances for counts in counted) < min_chances:
            continue
        log_p = log_fisher_sum_lower(strata)
        tested.append((actor, target, tuple(counted), log_p))
    sides = [frozenset((actor, target)) in together for actor, target, *_ in tested]
    weights = _weights(sides)
    log_q = bh_log_qvalues([lp - math.log(w) for (*_, lp), w in zip(tested, weights, strict=True)])
    flags = []
    for (actor, target, kinds, lp), lq, side, weight in zip(
        tested, log_q, sides, weights, strict=True
    ):
        if lq > math.log(q):
            continue
        flags.append(
            SoftPlayFlag(
                actor=actor,
                target=target,
                chances=sum(c.chances for c in kinds),
                punished=sum(c.punished for c in kinds),
                chances_others=sum(c.chances_others for c in kinds),
                punished_others=sum(c.punished_others for c in kinds),
                kinds=kinds,
                p=math.exp(lp),
                q=math.exp(lq),
                queued=side,
                weight=weight,
            )
        )
    flags.sort(key=lambda flag: (flag.q, flag.actor, flag.target))
    return SoftPlayResult(flags=tuple(flags), family_size=len(tested))


def detect_softplay(
    chances: Iterable[Chance],
    *,
    q: float = 0.01,
    min_chances: int = 5,
    queued: Iterable[tuple[str, str]] = (),
) -> SoftPlayResult:
    """Flag the (actor, target) pairs whose actor spares the target (module docstring),
    strongest evidence first; ``queued``: the pairs co-seating found queueing together."""
    return softplay_from_counts(
        pair_chances(chances, min_chances=min_chances),
        q=q,
        min_chances=min_chances,
        queued=queued,
    )
