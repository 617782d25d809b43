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


def _pairs(
    ids: list[int], key_of: dict[int, str], games_of: dict[int, set[int]], flags: list[Flag]
) -> list[dict[str, Any]]:
    """Together vs apart, for every pair of the case."""
    expected = {
        tuple(flag.player_keys): flag.evidence.get("expected")
        for flag in flags
        if flag.detector == Flag.Detector.COSEATING
    }
    pairs = []
    for a, b in combinations(ids, 2):
        together = len(games_of[a] & games_of[b])
        ka, kb = sorted((key_of[a], key_of[b]))
        ga, gb = (games_of[a], games_of[b]) if key_of[a] == ka else (games_of[b], games_of[a])
        pairs.append(
            {
                "players": [ka, kb],
                "together": together,
                "apart": [len(ga) - together, len(gb) - together],
                "expected": expected.get((ka, kb)),
            }
        )
    return pairs


def _identifiers(rows: list[tuple[Any, ...]], key_of: dict[int, str]) -> list[dict[str, Any]]:
    """The devices and addresses two or more of the case's players used."""
    used: dict[tuple[str, str], set[str]] = defaultdict(set)
    for _, player_id, ip, device in rows:
        if ip:
            used["ip", ip].add(key_of[player_id])
        if device:
            used["device", device].add(key_of[player_id])
    return [
        {"kind": kind, "identifier": value, "players": sorted(who)}
        for (kind, value), who in sorted(used.items())
        if len(who) > 1
    ]


#: A linked game's seat: game id, record id, ended at, seat, player id, player, hand points,
#: score, ip, device.
_SEAT_COLUMNS = (
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


def _linked(ids: list[int], games_of: dict[int, set[int]]) -> dict[int, list[tuple[Any, ...]]]:
    """The seats of the games with two or more of the case's players, by game."""
    linked = sorted({game for a, b in combinations(ids, 2) for game in games_of[a] & games_of[b]})
    table: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    seats = Seat.objects.filter(game_id__in=linked).order_by("game_id", "seat")
    for row in seats.values_list(*_SEAT_COLUMNS):
        table[row[0]].append(row)
    return table


def _flows(table: dict[int, list[tuple[Any, ...]]], keys: set[str]) -> list[dict[str, Any]]:
    """The flow matrix over the linked games, for every ordered pair of the case."""
    flow: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for seats in table.values():
        best = max(seat[7] for seat in seats)
        losers = [seat for seat in seats if seat[7] != best]
        heaviest = max((seat[6] for seat in losers), default=None)
        for winner in (seat[5] for seat in seats if seat[7] == best):
            if winner not in keys:
                continue
            for seat in losers:
                if seat[5] in keys:
                    cell = flow[seat[5], winner]
                    cell[0] += 1
                    cell[1] += seat[6]
                    cell[2] += seat[6] == heaviest
    return [
        {
            "feeder": feeder,
            "beneficiary": beneficiary,
            "wins": flow[feeder, beneficiary][0],
            "points": flow[feeder, beneficiary][1],
            "heaviest": flow[feeder, beneficiary][2],
        }
        for feeder, beneficiary in permutations(sorted(keys), 2)
    ]


def _games(table: dict[int, list[tuple[Any, ...]]]) -> list[dict[str, Any]]:
    """The most recent linked games, each seat with its hand, score, IP and device."""
    recent = sorted(table.values(), key=lambda seats: (seats[0][2], seats[0][0]), reverse=True)
    return [
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
    window = (bounds["start"], bounds["end"])
    key_of = {cp.player_id: cp.player.external_id for cp in players}
    ids = sorted(key_of)
    rows = list(_seats(ids, window).values_list("game_id", "player_id", "ip", "device"))
    games_of: dict[int, set[int]] = defaultdict(set)
    for game_id, player_id, _, _ in rows:
        games_of[player_id].add(game_id)
    table = _linked(ids, games_of)
    return CaseEvidence(
        case=case,
        players=players,
        flags=flags,
        events=list(case.events.select_related("by").order_by("at", "id")),
        window=window,
        pairs=_pairs(ids, key_of, games_of, flags),
        flows=_flows(table, set(key_of.values())),
        identifiers=_identifiers(rows, key_of),
        games=_games(table),
    )
