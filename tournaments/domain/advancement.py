"""Advancement by quotas from a ranked leaderboard (SPEC §2, "The tour"; §4 finalising).

The rule: an event sends on the union of its national list (the national top X) and its
provincial lists (the top Y of each province). Where the lists overlap the spare places
are **not** passed down: a player on both lists takes one place and nobody below either
cut-off moves up. On the tour, for example, a 周预赛 weekly qualifier sends the top 100
of each province (X = 0, Y = 100) and a 周赛 weekly final sends the national top 100 and
the top 10 of each province to the monthly final (X = 100, Y = 10). All quotas are
per-season settings, never constants here; a quota of 0 means that list is empty.

Only ranked rows advance: a row whose rank is None (too few games, SPEC §4) never does.
The functions accept any object with the attributes ``player`` (external id),
``province``, ``rank`` and ``province_rank`` (`RankedRow`), so they work on
`tournaments.domain.leaderboard.Ranked` and on the database layer's rows alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "Basis",
    "Quota",
    "RankedRow",
    "StandingRow",
    "Verdict",
    "advance",
    "basis_for",
    "explain",
]


class RankedRow(Protocol):
    """A leaderboard row: external player id, province and ranks (None when unranked)."""

    @property
    def player(self) -> str: ...

    @property
    def province(self) -> str: ...

    @property
    def rank(self) -> int | None: ...

    @property
    def province_rank(self) -> int | None: ...


class StandingRow(RankedRow, Protocol):
    """A leaderboard row that also carries its game count (what `explain` needs)."""

    @property
    def games(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Quota:
    """How many advance: the national top ``national`` and each province's top ``per_province``."""

    national: int
    per_province: int

    def __post_init__(self) -> None:
        for name in ("national", "per_province"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"quota {name} must be an integer >= 0, got {value!r}")


def _national_part(rank: int, quota: Quota) -> str:
    sign = "≤" if rank <= quota.national else ">"
    return f"national rank {rank} {sign} {quota.national}"


def _province_part(province_rank: int, quota: Quota) -> str:
    sign = "≤" if province_rank <= quota.per_province else ">"
    return f"province rank {province_rank} {sign} {quota.per_province}"


@dataclass(frozen=True, slots=True)
class Basis:
    """Why a player advances: which list(s) they are on, with the ranks and the quota."""

    player: str
    national_rank: int
    province_rank: int
    by_national: bool
    by_province: bool
    quota: Quota

    @property
    def reason(self) -> str:
        """E.g. "national rank 37 ≤ 100; province rank 2 ≤ 10".

        Each list that exists under the quota (quota > 0) is shown with its comparison,
        the one that was missed included: "national rank 120 > 100; province rank 3 ≤ 10".
        """
        parts = []
        if self.quota.national > 0:
            parts.append(_national_part(self.national_rank, self.quota))
        if self.quota.per_province > 0:
            parts.append(_province_part(self.province_rank, self.quota))
        return "; ".join(parts)


def basis_for(row: RankedRow, quota: Quota) -> Basis | None:
    """The basis on which ``row`` advances under ``quota``, or None when it does not."""
    if row.rank is None:
        return None
    if row.province_rank is None:
        raise ValueError(f"{row.player} has national rank {row.rank} but no province rank")
    by_national = row.rank <= quota.national
    by_province = row.province_rank <= quota.per_province
    if not (by_national or by_province):
        return None
    return Basis(
        player=row.player,
        national_rank=row.rank,
        province_rank=row.province_rank,
        by_national=by_national,
        by_province=by_province,
        quota=quota,
    )


def advance(ranked: Iterable[RankedRow], quota: Quota) -> dict[str, Basis]:
    """Who advances: the union of the national top X and each province's top Y.

    Returns the bases keyed by external player id, in national rank order. A player on
    both lists appears once and takes one place; places are never passed down, so the
    result can hold fewer than X + 34·Y players. Unranked rows never advance. Raises
    ValueError when a player appears twice.
    """
    chosen: list[Basis] = []
    seen: set[str] = set()
    for row in ranked:
        if row.player in seen:
            raise ValueError(f"player {row.player} appears more than once")
        seen.add(row.player)
        basis = basis_for(row, quota)
        if basis is not None:
            chosen.append(basis)
    chosen.sort(key=lambda basis: basis.national_rank)
    return {basis.player: basis for basis in chosen}


@dataclass(frozen=True, slots=True)
class Verdict:
    """The answer to "why am I in / out": ``advances``, a human ``reason``, the basis if in."""

    player: str
    advances: bool
    reason: str
    basis: Basis | None

    def __str__(self) -> str:
        return self.reason


def explain(row: StandingRow, quota: Quota, *, minimum_games: int) -> Verdict:
    """Explain one row's advancement under ``quota``.

    A service calls it with the player's leaderboard row (any object with player,
    province, rank, province_rank and games) and the season's settings. Reasons:

    * in: the basis, e.g. "national rank 37 ≤ 100; province rank 2 ≤ 10";
    * out, unranked: "unranked: 14 games, 15 needed" (or "unranked: not ranked despite
      20 games (15 needed)" when the row has enough games but no rank, e.g. a sanction);
    * out, ranked: "below both cut-offs: national rank 150 > 100, province rank 12 > 10",
      or "below the cut-off: ..." when the quota has only one list, or "no places: the
      quota is 0 national and 0 per province".
    """
    basis = basis_for(row, quota)
    if basis is not None:
        return Verdict(player=row.player, advances=True, reason=basis.reason, basis=basis)
    return Verdict(
        player=row.player,
        advances=False,
        reason=_out_reason(row, quota, minimum_games),
        basis=None,
    )


def _out_reason(row: StandingRow, quota: Quota, minimum_games: int) -> str:
    if row.rank is None:
        if row.games < minimum_games:
            return f"unranked: {row.games} games, {minimum_games} needed"
        return f"unranked: not ranked despite {row.games} games ({minimum_games} needed)"
    if row.province_rank is None:  # pragma: no cover - basis_for raised already
        raise ValueError(f"{row.player} has national rank {row.rank} but no province rank")
    parts = []
    if quota.national > 0:
        parts.append(_national_part(row.rank, quota))
    if quota.per_province > 0:
        parts.append(_province_part(row.province_rank, quota))
    if not parts:
        return "no places: the quota is 0 national and 0 per province"
    label = "below both cut-offs" if len(parts) == 2 else "below the cut-off"
    return f"{label}: {', '.join(parts)}"
