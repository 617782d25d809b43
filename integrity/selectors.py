"""Reads for reviewers (SPEC §7): cases ranked by score and the evidence behind one case.

The evidence of a case is read from the games of its players inside the windows of the
audits that flagged it (all their games when no flag is attached any more):

* **together vs apart** — for every pair of the case: games together, games of each apart,
  and the co-seating model's expectation when a co-seating flag gives one;
* **flow matrix** — for every ordered pair (feeder, beneficiary): the beneficiary's wins
  with the feeder at the table, the feeder's hand points in them and how often the feeder
  held the heaviest losing hand;
* **shared identifiers** — devices and IP addresses used by two or more of its players;
* **linked games** — the games where two or more of its players sat together, each seat with
  its hand, score, IP and device (the most recent :data:`LINKED_GAMES_LIMIT`).

IP addresses and devices are personal data: these reads serve reviewers only.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from itertools import combinations, permutations
from typing import Any

from django.db.models import Max, Min, Prefetch, QuerySet

from integrity.models import AuditRun, Case, CaseEvent, CasePlayer, Flag
from tournaments.models import Seat

LINKED_GAMES_LIMIT = 200


def case_list(*, status: str | None = None) -> QuerySet[Case]:
    """Cases ranked by score (highest first), then by id."""
    cases = Case.objects.order_by("-score", "id").prefetch_related(
        Prefetch("caseplayer_set", queryset=CasePlayer.objects.select_related("player"))
    )
    if status:
        cases = cases.filter(status=status)
    return cases


def audit_run_list() -> QuerySet[AuditRun]:
    return AuditRun.objects.select_related("event").order_by("-started_at", "-id")


@dataclass
class CaseEvidence:
    case: Case
    players: list[CasePlayer]
    flags: list[Flag]
    events: list[CaseEvent]
    window: tuple[datetime | None, datetime | None]
    pairs: list[dict[str, Any]] = field(default_factory=list)
    flows: list[dict[str, Any]] = field(default_factory=list)
    identifiers: list[dict[str, Any]] = field(default_factory=list)
    games: list[dict[str, Any]] = field(default_factory=list)


def _seats(player_ids: list[int], window: tuple[datetime | None, datetime | None]) -> Any:
    seats = Seat.objects.filter(player_id__in=player_ids, voided=False)
    start, end = window
    if start is not None and end is not None:
        seats = seats.filter(ended_at__gte=start, ended_at__lte=end)
    return seats


def case_evidence(*, case: Case) -> CaseEvidence:
    """The case with its players, flags, log and the evidence tables (module docstring)."""
    players = list(
        CasePlayer.objects.filter(case=case)
        .select_related("player")
        .order_by("player__external_id")
    )
    flags = list(
        case.flags.select_related("run").prefetch_related("players").order_by("-score", "id")
    )
    bounds = AuditRun.objects.filter(flags__cases=case).aggregate(
        start=Min("window_start"), end=Max("window_end")
    )
    evidence = CaseEvidence(
        case=case,
        players=players,
        flags=flags,
        events=list(case.events.select_related("by").order_by("at", "id")),
        window=(bounds["start"], bounds["end"]),
    )
    key_of = {cp.player_id: cp.player.external_id for cp in players}
    ids = sorted(key_of)
    rows = list(_seats(ids, evidence.window).values_list("game_id", "player_id", "ip", "device"))
    games_of: dict[int, set[int]] = defaultdict(set)
    for game_id, player_id, _, _ in rows:
        games_of[player_id].add(game_id)

    # Together vs apart.
    expected = {
        tuple(flag.player_keys): flag.evidence.get("expected")
        for flag in flags
        if flag.detector == Flag.Detector.COSEATING
    }
    for a, b in combinations(ids, 2):
        together = len(games_of[a] & games_of[b])
        ka, kb = sorted((key_of[a], key_of[b]))
        ga, gb = (games_of[a], games_of[b]) if key_of[a] == ka else (games_of[b], games_of[a])
        evidence.pairs.append(
            {
                "players": [ka, kb],
                "together": together,
                "apart": [len(ga) - together, len(gb) - together],
                "expected": expected.get((ka, kb)),
            }
        )

    # Shared identifiers.
    used: dict[tuple[str, str], set[str]] = defaultdict(set)
    for _, player_id, ip, device in rows:
        if ip:
            used["ip", ip].add(key_of[player_id])
        if device:
            used["device", device].add(key_of[player_id])
    evidence.identifiers = [
        {"kind": kind, "identifier": value, "players": sorted(who)}
        for (kind, value), who in sorted(used.items())
        if len(who) > 1
    ]

    # Games with two or more of the case's players, and the flow between them.
    linked = sorted({game for a, b in combinations(ids, 2) for game in games_of[a] & games_of[b]})
    table: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    for start in range(0, len(linked), 900):
        for row in (
            Seat.objects.filter(game_id__in=linked[start : start + 900])
            .order_by("game_id", "seat")
            .values_list(
                "game_id",
                "game__record_id",
                "ended_at",
                "seat",
                "player_id",
                "player__external_id",
                "hand_points",
                "score",
                "ip",
                "device",
            )
        ):
            table[row[0]].append(row)
    flow: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    case_keys = set(key_of.values())
    for seats in table.values():
        best = max(seat[7] for seat in seats)
        losers = [seat for seat in seats if seat[7] != best]
        heaviest = max((seat[6] for seat in losers), default=None)
        for winner in (seat[5] for seat in seats if seat[7] == best):
            if winner not in case_keys:
                continue
            for seat in losers:
                if seat[5] in case_keys:
                    cell = flow[seat[5], winner]
                    cell[0] += 1
                    cell[1] += seat[6]
                    cell[2] += seat[6] == heaviest
    evidence.flows = [
        {
            "feeder": feeder,
            "beneficiary": beneficiary,
            "wins": flow[feeder, beneficiary][0],
            "points": flow[feeder, beneficiary][1],
            "heaviest": flow[feeder, beneficiary][2],
        }
        for feeder, beneficiary in permutations(sorted(key_of.values()), 2)
    ]
    recent = sorted(table.values(), key=lambda seats: (seats[0][2], seats[0][0]), reverse=True)
    evidence.games = [
        {
            "game": seats[0][1],
            "ended_at": seats[0][2],
            "seats": [
                {
                    "seat": seat[3],
                    "player": seat[5],
                    "hand_points": seat[6],
                    "score": seat[7],
                    "ip": seat[8],
                    "device": seat[9],
                }
                for seat in seats
            ],
        }
        for seats in recent[:LINKED_GAMES_LIMIT]
    ]
    return evidence
