"""Reads for reviewers (SPEC §7): cases ranked by score and the evidence behind one case.

The evidence of a case is read from the games of its players inside the windows of the
audits that flagged it (all their games when no flag is attached any more), voided games
included: a sanction voids the games it judged, and the appeal is decided on them:

* **together vs apart** — for every pair of the case: games together, games of each apart,
  and the co-seating model's expectation when a co-seating flag gives one;
* **flow matrix** — for every ordered pair (feeder, beneficiary): the beneficiary's wins
  with the feeder at the table, the feeder's hand points in them and how often the feeder
  held the heaviest losing hand;
* **shared identifiers** — devices and IP addresses used by two or more of its players;
* **linked games** — the games where two or more of its players sat together, each seat with
  its hand, score, IP and device (the most recent :data:`LINKED_GAMES_LIMIT`).

The reviewer's case console (``web.views.cases``) also reads the queue with its filters
(:func:`case_queue`: state, detector family, event), the events a case was flagged in, the
linked games' cards and whether they carry a move log, the events a sanction may void per
player, and one linked game with its seats.

IP addresses and devices are personal data: these reads serve reviewers only.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from itertools import combinations, permutations
from typing import Any

from django.db.models import (
    BooleanField,
    Exists,
    ExpressionWrapper,
    Max,
    Min,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
)

from integrity.models import AuditRun, Case, CaseEvent, CasePlayer, Flag
from tournaments.models import Event, Game, Seat

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


def _seats(
    player_ids: list[int],
    window: tuple[datetime | None, datetime | None],
    *,
    voided: bool = False,
) -> Any:
    """The players' seats in the window; voided ones too with ``voided`` (a sanction voids
    the games it judged: they stay the case's evidence for the appeal)."""
    seats = Seat.objects.filter(player_id__in=player_ids)
    if not voided:
        seats = seats.filter(voided=False)
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
    rows = list(
        _seats(ids, window, voided=True).values_list("game_id", "player_id", "ip", "device")
    )
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


# --- the reviewer's case console (web.views.cases) --------------------------------------------

#: The queue's states: ``pending`` (open, taken or not: the default), ``open`` (no reviewer
#: has taken it), ``taken``, ``decided`` (dismissed, sanctioned or reversed), ``all``.
QUEUE_STATES = ("pending", "open", "taken", "decided", "all")


def case_queue(
    *, state: str = "pending", family: str | None = None, event: str | None = None
) -> QuerySet[Case]:
    """Cases ranked by score (highest first), then by id, in ``state`` (:data:`QUEUE_STATES`),
    with a flag of detector ``family`` (a name of ``Case.families``) and a flag from the audit
    of ``event`` (a code) when given; with their players, who took them and who decided."""
    cases = case_list().select_related("assigned_to", "decided_by")
    if state in ("pending", "open", "taken"):
        cases = cases.filter(status=Case.Status.OPEN)
    if state == "open":
        cases = cases.filter(assigned_to__isnull=True)
    elif state == "taken":
        cases = cases.filter(assigned_to__isnull=False)
    elif state == "decided":
        cases = cases.exclude(status=Case.Status.OPEN)
    if family:
        cases = cases.filter(families__contains=[family])
    if event:
        flagged = Case.flags.through.objects.filter(flag__run__event__code=event)
        cases = cases.filter(pk__in=flagged.values("case_id"))
    return cases


def case_queue_events() -> QuerySet[Event]:
    """The events whose audits flagged a case (the queue's event filter), latest first."""
    audited = AuditRun.objects.filter(flags__cases__isnull=False, event__isnull=False)
    return Event.objects.filter(pk__in=audited.values("event_id")).order_by("-starts_at", "code")


def case_event_codes(case_ids: list[int]) -> dict[int, list[str]]:
    """The codes of the events whose audits flagged each case, sorted (one query)."""
    rows = (
        Case.flags.through.objects.filter(case_id__in=case_ids, flag__run__event__isnull=False)
        .values_list("case_id", "flag__run__event__code")
        .distinct()
    )
    codes: dict[int, set[str]] = defaultdict(set)
    for case_id, code in rows:
        codes[case_id].add(code)
    return {case_id: sorted(found) for case_id, found in codes.items()}


@dataclass(frozen=True)
class LinkedGame:
    """A linked game's record beyond what :func:`case_evidence` reads: its event, whether it
    carries a move log, and each seat's cards left (by seat number)."""

    record_id: str
    event: str
    has_log: bool
    hands: dict[int, str]


def linked_games(record_ids: list[str]) -> dict[str, LinkedGame]:
    """:class:`LinkedGame` of each record id (two queries; the logs themselves are not read)."""
    games = (
        Game.objects.filter(record_id__in=record_ids)
        .annotate(has_log=ExpressionWrapper(Q(log__isnull=False), output_field=BooleanField()))
        .values_list("pk", "record_id", "event__code", "has_log")
    )
    found = {pk: (record_id, code, has_log) for pk, record_id, code, has_log in games}
    hands: dict[int, dict[int, str]] = defaultdict(dict)
    seats = Seat.objects.filter(game_id__in=list(found)).values_list("game_id", "seat", "hand")
    for game_id, seat, hand in seats:
        hands[game_id][seat] = hand
    return {
        record_id: LinkedGame(record_id, code, has_log, hands[pk])
        for pk, (record_id, code, has_log) in found.items()
    }


def case_player_events(
    *, case: Case, window: tuple[datetime | None, datetime | None]
) -> dict[int, list[Event]]:
    """Per player of the case (by player id), the events where they have games not voided
    inside the case's window (all their games when it has none), earliest first: what a
    sanction may void."""
    ids = list(CasePlayer.objects.filter(case=case).values_list("player_id", flat=True))
    pairs = _seats(ids, window).values_list("player_id", "event_id").distinct()
    chosen: dict[int, set[int]] = defaultdict(set)
    for player_id, event_id in pairs:
        chosen[player_id].add(event_id)
    events = Event.objects.in_bulk({pk for found in chosen.values() for pk in found})
    return {
        player_id: sorted((events[pk] for pk in found), key=lambda e: (e.starts_at, e.code))
        for player_id, found in chosen.items()
    }


def case_game(*, case: Case, record_id: str) -> Game | None:
    """A game where a player of the case sat (with its seats and players), else None."""
    players = CasePlayer.objects.filter(case=case).values("player_id")
    seated = Seat.objects.filter(game_id=OuterRef("pk"), player_id__in=players)
    return (
        Game.objects.filter(Exists(seated), record_id=record_id)
        .select_related("event")
        .prefetch_related(Prefetch("seats", queryset=Seat.objects.select_related("player")))
        .first()
    )
