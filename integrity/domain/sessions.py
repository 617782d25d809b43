"""Shared sessions: several accounts behind one device or one address (多开, multi-accounting)
(SPEC §7: each seat's session carries an IP address and a device fingerprint).

**Data.** One :class:`~integrity.domain.data.SessionObs` per seat in the audit window.

**Statistic.** None: a graph. Accounts and identifiers (device fingerprints, IP addresses;
``""`` means unknown and is ignored) form a bipartite graph; an identifier's *degree* is the
number of distinct accounts seen on it.

**Threshold.** An identifier whose degree exceeds ``max_degree`` (default 8) is shared
infrastructure — carrier-grade NAT, a campus or an internet café — and is dropped. The
remaining identifiers link accounts; union-find gives the clusters (two or more accounts).

**Near-conclusive links.** Two seats of one game on the same device, or on the same IP
address, is flagged on its own as a :class:`SameTableLink`: random matchmaking almost never
seats two accounts of one household at one table unless they queued together. Devices
always count; an IP only when its degree is within the cap (``<= max_degree``, the same
identifiers the clusters keep), so a NAT address shared by strangers never makes a link.

**False-positive control.** The degree cap (shared infrastructure out) and human review:
clusters are leads, not findings, and a link names the game to check. Output is sorted and
does not depend on the order of the sessions.

**In SQL.** The database audit groups the graph and the same-game sharing in PostgreSQL
(:mod:`integrity.sql.sessions`) and hands them to :func:`sessions_from_graph`, with the same
result as :func:`detect_sessions` (tests/integrity/test_audit_sql.py).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import ClassVar, Final, Literal

from integrity.domain.data import SessionObs

__all__ = [
    "DEFAULT_MAX_DEGREE",
    "LINK_STRENGTH",
    "VERSION",
    "IdentifierKind",
    "SameTableLink",
    "SessionCluster",
    "SessionsResult",
    "detect_sessions",
    "sessions_from_graph",
]

VERSION: Final = "sessions-1"

#: Distinct accounts above which a device or an IP address counts as shared infrastructure.
DEFAULT_MAX_DEGREE: Final = 8

#: The weight a cluster carries when cases are scored: that of one discovery at q = 0.01.
LINK_STRENGTH: Final = 2.0

IdentifierKind = Literal["device", "ip"]


@dataclass(frozen=True, slots=True)
class SessionCluster:
    """Accounts linked by devices or IP addresses within the degree cap (sorted)."""

    family: ClassVar[str] = "sessions"
    near_conclusive: ClassVar[bool] = False
    strength: ClassVar[float] = LINK_STRENGTH

    players: tuple[str, ...]
    devices: tuple[str, ...]
    ips: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SameTableLink:
    """Two seats of one game on one device or one IP address. On one device it is
    near-conclusive (one hand plays both seats); on one address it is a household's or a
    venue's as often as a farm's, so it relates the players but proves nothing by itself."""

    family: ClassVar[str] = "sessions"
    strength: ClassVar[float] = 0.0

    game_id: str
    players: tuple[str, str]
    kind: IdentifierKind
    identifier: str

    @property
    def near_conclusive(self) -> bool:
        return self.kind == "device"


@dataclass(frozen=True, slots=True)
class SessionsResult:
    clusters: tuple[SessionCluster, ...]
    links: tuple[SameTableLink, ...]
    dropped_devices: tuple[str, ...]
    dropped_ips: tuple[str, ...]
    version: str = VERSION


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        parent = self.parent
        root = parent.setdefault(x, x)
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            # Smaller name as root: the forest's shape does not matter, only determinism.
            if rb < ra:
                ra, rb = rb, ra
            self.parent[rb] = ra


def detect_sessions(
    sessions: Iterable[SessionObs], *, max_degree: int = DEFAULT_MAX_DEGREE
) -> SessionsResult:
    """Cluster accounts by shared identifiers and flag same-table sharing (module docstring)."""
    accounts: dict[IdentifierKind, defaultdict[str, set[str]]] = {
        "device": defaultdict(set),
        "ip": defaultdict(set),
    }
    # The first account seen per (game, identifier); a second one makes it shared.
    first_account: dict[tuple[str, IdentifierKind, str], str] = {}
    shared: defaultdict[tuple[str, IdentifierKind, str], set[str]] = defaultdict(set)
    for obs in sessions:
        pairs: tuple[tuple[IdentifierKind, str], ...] = (("device", obs.device), ("ip", obs.ip))
        for kind, value in pairs:
            if value:
                accounts[kind][value].add(obs.player)
                key = (obs.game_id, kind, value)
                seen = first_account.setdefault(key, obs.player)
                if seen != obs.player:
                    shared[key].update((seen, obs.player))
    return sessions_from_graph(
        accounts, ((*key, players) for key, players in shared.items()), max_degree=max_degree
    )


def sessions_from_graph(
    accounts: Mapping[IdentifierKind, Mapping[str, Collection[str]]],
    shared: Iterable[tuple[str, IdentifierKind, str, Collection[str]]],
    *,
    max_degree: int = DEFAULT_MAX_DEGREE,
) -> SessionsResult:
    """The detector over the graph itself. ``accounts`` gives, for each kind (``device``
    and ``ip``), each identifier's distinct accounts — identifiers of one account may be
    left out: they link nothing and are never dropped; ``shared`` every ``(game id, kind,
    identifier, accounts)`` where two or more accounts of one game used one identifier.
    :func:`detect_sessions` builds both from the sessions; the database audit counts them
    in SQL."""
    if max_degree < 1:
        raise ValueError("max_degree must be >= 1")
    kept = {
        kind: {value for value, users in ids.items() if len(users) <= max_degree}
        for kind, ids in accounts.items()
    }
    forest = _UnionFind()
    for kind, ids in accounts.items():
        for value in kept[kind]:
            first, *rest = sorted(ids[value])
            for other in rest:
                forest.union(first, other)

    members: defaultdict[str, list[str]] = defaultdict(list)
    for player in forest.parent:
        members[forest.find(player)].append(player)
    linking: defaultdict[tuple[str, IdentifierKind], list[str]] = defaultdict(list)
    for kind, ids in accounts.items():
        for value in kept[kind]:
            if len(ids[value]) > 1:
                linking[forest.find(next(iter(ids[value]))), kind].append(value)
    clusters = [
        SessionCluster(
            players=tuple(sorted(group)),
            devices=tuple(sorted(linking[root, "device"])),
            ips=tuple(sorted(linking[root, "ip"])),
        )
        for root, group in members.items()
        if len(group) > 1
    ]
    clusters.sort(key=lambda c: c.players)

    links = {
        SameTableLink(game_id, (a, b), kind, value)
        for game_id, kind, value, players in shared
        if kind == "device" or value in kept["ip"]
        for a, b in combinations(sorted(set(players)), 2)
    }
    return SessionsResult(
        clusters=tuple(clusters),
        links=tuple(sorted(links, key=lambda x: (x.game_id, x.players, x.kind, x.identifier))),
        dropped_devices=tuple(sorted(set(accounts["device"]) - kept["device"])),
        dropped_ips=tuple(sorted(set(accounts["ip"]) - kept["ip"])),
    )
