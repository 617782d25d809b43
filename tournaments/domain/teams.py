"""Team seating (SPEC §4 "Team events", 组队竞赛规则): teammates are never in adjacent
seats. The seat order is circular (the last seat sits next to the first), so at a table of
four teammates sit opposite each other: seats 0 and 2, 1 and 3.

Pure and stdlib-only; ``tournaments.services.ingest_validation`` refuses a doubles record
this rule finds a pair in.
"""

from collections.abc import Sequence

__all__ = ["adjacent_teammates"]


def adjacent_teammates(teams: Sequence[int]) -> tuple[int, int] | None:
    """The first pair of neighbouring seats ``(i, i + 1)`` (``(n - 1, 0)`` last) whose
    players are of one team, or None when teammates all sit apart."""
    n = len(teams)
    if n < 2:
        return None
    pairs = [(i, i + 1) for i in range(n - 1)]
    if n > 2:  # two seats are neighbours once, not twice
        pairs.append((n - 1, 0))
    for left, right in pairs:
        if teams[left] == teams[right]:
            return left, right
    return None
