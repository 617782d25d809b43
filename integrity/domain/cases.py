"""Cases: flags on related players grouped for a reviewer (SPEC §7: flags on related players
group into cases; a reviewer decides; statistics never sanction by themselves).

**Data.** Flags of the detector families, each with its players, its ``strength``
(``-log10 q`` for the statistical detectors; :data:`~integrity.domain.sessions.LINK_STRENGTH`
for a session cluster) and whether it is a near-conclusive event — keyed by the caller's
flag reference:

* behaviour: ``coseating`` (who sits together), ``pointflow`` (hands held in a partner's
  wins, tested conditionally on the tables, so independent of how often they met),
  ``softplay`` (a partner spared the punishments dealt to everyone else, from move logs),
  ``boosting`` (one account's performance over time), ``together`` (a player's hands
  with the partner at the table against their other games), ``fed`` (the hands of the
  accounts queued with one account in its wins), ``kept`` (the cards two partners kept at
  their shared tables against their strengths);
* links: ``sessions`` (devices and addresses).

**Rule: evidence that someone benefited, not a count of families.** Players are related
when a flag names them together; union-find over the flags' player sets gives the clusters
of related players. A cluster opens a case only when it holds evidence that someone
benefited: a behaviour signal of benefit (``pointflow``, ``softplay``, ``together``, ``fed``,
``kept``), a
near-conclusive event (two seats of one game on one *device*), or a strong ``boosting``
flag (strength >= :data:`STRONG_BOOSTING`), which stands alone. Co-seating says only that
players queue together, and a shared address (a household, even at one table) only that they live
together: friends without any benefit are not a case. Their flags, and every other flag
outside a case, stay in the review queue as leads, ranked by strength (then by reference).

**Score / threshold.** The case score is the sum of the strengths of its flags of evidence
(:data:`EVIDENCE_FAMILIES`: the benefit families and boosting; each capped at
:data:`MAX_STRENGTH`) plus :data:`NEAR_CONCLUSIVE_SCORE` per near-conclusive event; cases are
ranked by score (descending), then by their sorted players. Co-seating and the session links
relate the players and weigh nothing: friends who sit together at nearly every table have
co-seating q-values far below any benefit flag's, so counting them would rank a case by how
often its players queue together. The score orders the reviewer's work; it decides nothing.
**False-positive control:** each flag was already controlled by its detector (BH at q); a
case additionally needs a flag of benefit, which co-seating and shared addresses, the flags
friends raise, never are.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Protocol

__all__ = [
    "EVIDENCE_FAMILIES",
    "FAMILIES",
    "MAX_STRENGTH",
    "NEAR_CONCLUSIVE_SCORE",
    "STRONG_BOOSTING",
    "VERSION",
    "CaseProposal",
    "Flag",
    "Triage",
    "propose_cases",
]

VERSION: Final = "cases-4"

FAMILIES: Final = (
    "boosting",
    "coseating",
    "fed",
    "kept",
    "pointflow",
    "sessions",
    "softplay",
    "together",
)

#: The behaviour families whose flag is itself evidence that someone benefited.
BENEFIT_FAMILIES: Final = frozenset({"fed", "kept", "pointflow", "softplay", "together"})

#: The families whose flags weigh in a case's score: the benefit families and boosting.
EVIDENCE_FAMILIES: Final = BENEFIT_FAMILIES | {"boosting"}

#: A boosting flag this strong (q <= 0.01) opens a case on its own: ``boost-4`` tests a
#: block of better games only where the account's sessions change hands, so at the audit's
#: default q every boosting discovery stands alone (a stricter q would leave the weaker ones
#: in the review queue).
STRONG_BOOSTING: Final = 2.0

#: A flag's contribution to a case score is capped here (q-values below 1e-300 all count alike).
MAX_STRENGTH: Final = 300.0

#: Added to a case score for each near-conclusive event (as much as a discovery at q = 1e-10).
NEAR_CONCLUSIVE_SCORE: Final = 10.0


class Flag(Protocol):
    """What the case builder reads from a detector's flag."""

    @property
    def family(self) -> str: ...

    @property
    def players(self) -> tuple[str, ...]: ...

    @property
    def strength(self) -> float: ...

    @property
    def near_conclusive(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class CaseProposal:
    """A cluster of related players for a reviewer, with the flags that put it there."""

    players: tuple[str, ...]
    families: tuple[str, ...]
    flags: tuple[str, ...]
    score: float
    reason: str


@dataclass(frozen=True, slots=True)
class Triage:
    """The proposed cases (ranked) and the flags left for review on their own (ranked)."""

    cases: tuple[CaseProposal, ...]
    review: tuple[str, ...]
    version: str = VERSION


def _find(parent: dict[str, str], x: str) -> str:
    root = parent.setdefault(x, x)
    while parent[root] != root:
        root = parent[root]
    while parent[x] != root:
        parent[x], x = root, parent[x]
    return root


def propose_cases(flags: Mapping[str, Flag]) -> Triage:
    """Group flags on related players into cases (see the module docstring)."""
    for ref, flag in flags.items():
        if flag.family not in FAMILIES:
            raise ValueError(f"flag {ref}: unknown family {flag.family!r}")
        if not flag.players:
            raise ValueError(f"flag {ref}: no players")
    parent: dict[str, str] = {}
    for flag in flags.values():
        first = _find(parent, flag.players[0])
        for player in flag.players[1:]:
            other = _find(parent, player)
            if other != first:
                first, other = min(first, other), max(first, other)
                parent[other] = first

    groups: defaultdict[str, list[str]] = defaultdict(list)
    for ref in sorted(flags):
        groups[_find(parent, flags[ref].players[0])].append(ref)
    members: defaultdict[str, set[str]] = defaultdict(set)
    for player in parent:
        members[_find(parent, player)].add(player)

    cases = []
    review = []
    for root, refs in groups.items():
        families = tuple(sorted({flags[ref].family for ref in refs}))
        near = sum(1 for ref in refs if flags[ref].near_conclusive)
        benefit = sorted({flags[ref].family for ref in refs} & BENEFIT_FAMILIES)
        strong = sum(
            1
            for ref in refs
            if flags[ref].family == "boosting" and flags[ref].strength >= STRONG_BOOSTING
        )
        if not (benefit or near or strong):
            review.extend(refs)
            continue
        reasons = []
        if benefit:
            reasons.append(f"benefit: {', '.join(benefit)}")
        if near:
            reasons.append(f"{near} near-conclusive same-table link(s)")
        if strong:
            reasons.append(f"{strong} strong boosting flag(s)")
        shown = {*benefit, *(["sessions"] if near else []), *(["boosting"] if strong else [])}
        others = [family for family in families if family not in shown]
        if others:
            reasons.append(f"with {', '.join(others)}")
        score = sum(
            min(flags[ref].strength, MAX_STRENGTH)
            for ref in refs
            if flags[ref].family in EVIDENCE_FAMILIES
        )
        cases.append(
            CaseProposal(
                players=tuple(sorted(members[root])),
                families=families,
                flags=tuple(refs),
                score=score + NEAR_CONCLUSIVE_SCORE * near,
                reason="; ".join(reasons),
            )
        )
    cases.sort(key=lambda c: (-c.score, c.players))
    review.sort(key=lambda ref: (-min(flags[ref].strength, MAX_STRENGTH), ref))
    return Triage(cases=tuple(cases), review=tuple(review))
