"""Validation of one game record v1 (SPEC §9) against its event and season (SPEC §3).

``check_record`` turns a decoded record into a `CheckedGame` (hands parsed, hand points and
game scores computed) or raises `RecordError` naming the field path (``"seats[2].hand[1]"``)
and the reason. It raises on the first problem found, in this order: the shape of the record,
its event, the times against the event's window, each seat in order, the deal as a whole,
``ended_by``, the teams, the seated table, the entrants, the move log.

Decisions (the record format is fixed by SPEC §9; these close what it leaves open):

* **Strict shape.** Every object of the record (the record, a seat, its player block and its
  session) is rejected when it holds a field the format does not name. Required: ``id``,
  ``event``, ``mode``, ``started_at``, ``ended_at``, ``ended_by``, ``seats``; per seat
  ``player`` and ``hand``. Optional (absent and ``null`` mean the same): ``log``, a seat's
  ``team`` (required as 0 or 1 in doubles, must be null in singles), its ``session`` and
  each of the session's ``ip``, ``device``, ``client``.
* **Times** are ISO 8601 with a UTC offset; a naive time is rejected. ``ended_at`` may equal
  ``started_at``. The event's window, daily hours and status are checked by
  ``ingest_rules.check_event``.
* **Events.** An unknown, cancelled or finalised event rejects the record
  (``ingest_rules``). A closed-entry event (``open_entry`` false) accepts only games whose
  every player holds an `Entry`.
* **Cards** are checked against the season's card table: each hand's codes, then the deal
  as a whole (``validate_deal``: no card more often than the deck holds it). A stored hand
  (codes joined by spaces) longer than 400 characters is rejected.
* **Seated events** take only the games of their seated tables (``ingest_rules``).
* **Teams** (doubles): both teams play, and teammates never sit in adjacent seats, the seat
  order circular (``tournaments.domain.teams``, SPEC §4 "Team events").
* **ended_by** ``out`` needs at least one seat with an empty hand (a co-winner tie is
  possible when two hands are empty); ``time`` accepts any hands.
* **Move log** (optional): it must replay under the event's rules of play
  (``Event.play_rules``, ``tournaments.domain.movelog.replay``) to exactly the record's seats,
  hands and ending; else the record is rejected at ``log`` with the replay's verdict
  ("move 17: seat 2 plays G5 on R3"). The same replay reads the game's chances
  (``tournaments.domain.chances``: its observer, no second pass), kept in compact form as
  ``CheckedGame.chances`` and stored on the actors' seats (``game_copy``).
* **Scores**: singles by the season's ``singles_scoring``, doubles by ``tour_doubles``.
* **Storable text**: ids, names and session fields within their column sizes; no NUL
  character anywhere (PostgreSQL text and jsonb cannot hold it) and no lone surrogate.
"""

import hashlib
import ipaddress
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any, cast

import orjson
from django.conf import settings
from django.utils import timezone

from accounts.provinces import PROVINCE_SET
from core.domain.text import ident_problem, name_clean
from tournaments.domain.cards import CardError, CardTable, validate_deal
from tournaments.domain.chances import ChanceCount, SeatChance, chance_counts, chance_observer
from tournaments.domain.movelog import replay
from tournaments.domain.scoring import SCORINGS, tour_doubles
from tournaments.domain.teams import adjacent_teammates
from tournaments.services.ingest_rules import EventRules, RecordError, RecordRules, check_event

RECORD_FIELDS = frozenset(
    {"id", "event", "mode", "started_at", "ended_at", "ended_by", "seats", "log"}
)
REQUIRED_FIELDS = ("id", "event", "mode", "started_at", "ended_at", "ended_by", "seats")
SEAT_FIELDS = frozenset({"player", "team", "hand", "session"})
PLAYER_FIELDS = frozenset({"id", "name", "province"})
SESSION_FIELDS = frozenset({"ip", "device", "client"})
MAX_ID = 64
MAX_NAME = 64
MAX_DEVICE = 64
MAX_CLIENT = 32
MAX_HAND_TEXT = 400  # Seat.hand
MAX_LOG_DEPTH = 64  # nesting of the optional move log
MIN_SEATS, MAX_SEATS = 2, 10
MODES = ("singles", "doubles")
ENDINGS = ("out", "time")


@dataclass(slots=True)
class CheckedSeat:
    player_key: str
    name: str
    province: str
    team: int | None
    hand: str
    hand_points: int
    score: int
    ip: str | None
    device: str
    client: str


@dataclass(slots=True)
class CheckedGame:
    record_id: str
    digest: str
    event: EventRules
    mode: str
    started_at: datetime
    ended_at: datetime
    ended_by: str
    seats: tuple[CheckedSeat, ...]
    log: Any
    #: The chances read from the log as it replayed, (actor seat, target seat, kind,
    #: chances, punished) (``tournaments.domain.chances.chance_counts``); none without a log.
    chances: tuple[ChanceCount, ...] = ()


def _show(value: object, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def record_digest(record: object) -> str:
    """SHA-256 of the canonical JSON of a record: ``json.dumps(record, sort_keys=True,
    separators=(",", ":"), ensure_ascii=False)`` encoded as UTF-8.

    orjson writes those same bytes ten times faster for every value without a float
    (``tests/tournaments/test_digest.py``); floats it spells its own way ("1e-7" for
    "1e-07"), which is harmless: a record with a float is refused (no field of SPEC §9 is
    fractional), so no stored digest was made from one. An integer beyond 64 bits, a lone
    surrogate or nesting deeper than orjson's limit goes to the standard library."""
    try:
        return hashlib.sha256(orjson.dumps(record, option=orjson.OPT_SORT_KEYS)).hexdigest()
    except orjson.JSONEncodeError:
        return hashlib.sha256(_CANONICAL.encode(record).encode()).hexdigest()


def record_id_of(record: object) -> str:
    """The record's id, or raise RecordError (used before full validation, for dedupe)."""
    if not isinstance(record, dict):
        raise RecordError("record", "a game record must be a JSON object")
    return _record_id(record)


def _record_id(record: dict[str, Any]) -> str:
    if "id" not in record:
        raise RecordError("id", "required")
    record_id = _text(record["id"], "id", MAX_ID)
    problem = ident_problem(record_id)
    if problem is not None:
        raise RecordError("id", problem)
    return record_id


def _moment(record: dict[str, Any], field: str) -> datetime:
    value = record[field]
    if not isinstance(value, str):
        raise RecordError(field, "must be an ISO 8601 date-time string with a UTC offset")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise RecordError(field, f"not an ISO 8601 date-time: {_show(value)}") from None
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise RecordError(field, f"has no UTC offset (naive date-time {_show(value)})")
    return moment


def _text(value: object, field: str, limit: int, *, blank: bool = False) -> str:
    if not isinstance(value, str):
        raise RecordError(field, "must be a string")
    if not blank and not value.strip():
        raise RecordError(field, "must not be blank")
    if len(value) > limit:
        raise RecordError(field, f"longer than {limit} characters")
    if "\x00" in value:
        raise RecordError(field, "holds a NUL character")
    return value


def _log_problem(log: object) -> str | None:
    """Why the move log cannot be stored, or None: a NUL in any string (key or value), or
    nesting deeper than MAX_LOG_DEPTH. Walked without recursion, so no log is too deep to
    check (a RecursionError would be a server error). Asked only of a log that does not
    replay: one that replays holds only the keys of SPEC §9, card codes and numbers."""
    stack: list[tuple[object, int]] = [(log, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            if "\x00" in value:
                return "holds a NUL character (\\u0000), which cannot be stored"
        elif isinstance(value, list | dict):
            if depth >= MAX_LOG_DEPTH:
                return f"nested deeper than {MAX_LOG_DEPTH} levels"
            items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)
    return None


@lru_cache(maxsize=65536)
def _normal_ip(value: str) -> str:
    return str(ipaddress.ip_address(value))


def _ip(value: object, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or "%" in value:
        raise RecordError(field, f"not an IPv4 or IPv6 address: {_show(value)}")
    try:
        return _normal_ip(value)
    except ValueError:
        raise RecordError(field, f"not an IPv4 or IPv6 address: {_show(value)}") from None


def _unknown(obj: dict[str, Any], allowed: frozenset[str], path: str) -> None:
    extra = obj.keys() - allowed
    if extra:
        name = sorted(map(str, extra))[0]
        raise RecordError(f"{path}{name}", "unknown field")


def _object(value: object, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RecordError(field, "must be an object")
    return value


def _card_error(exc: CardError, hands: list[list[Any]], copies: dict[str, int]) -> RecordError:
    """Name the hand position of a CardError from ``validate_deal``."""
    if exc.seat is not None:
        hand = hands[exc.seat]
        position = next((i for i, code in enumerate(hand) if code == exc.code), None)
        field = f"seats[{exc.seat}].hand" + ("" if position is None else f"[{position}]")
        return RecordError(field, exc.reason)
    if isinstance(exc.code, str):  # a card dealt more often than the deck holds it: name the extra
        seen = 0
        for seat, hand in enumerate(hands):
            for position, code in enumerate(hand):
                if code == exc.code:
                    seen += 1
                    if seen > copies.get(exc.code, 0):
                        return RecordError(f"seats[{seat}].hand[{position}]", exc.reason)
    return RecordError("seats", exc.reason)


def _plain(value: object, limit: int) -> bool:
    """The fast path of `_text`: a non-blank str of at most ``limit`` characters, no NUL."""
    return (
        type(value) is str
        and 0 < len(value) <= limit
        and not value.isspace()
        and "\x00" not in value
    )


def _optional_text(value: object, field: str, limit: int) -> str:
    if value is None:
        return ""
    if type(value) is str and len(value) <= limit and "\x00" not in value:
        return value
    return _text(value, field, limit, blank=True)


_Row = tuple[str, str, str, int | None, str, int, str | None, str, str]


def _seat(i: int, seat: object, singles: bool, points_of: dict[str, int]) -> _Row:
    """Check one seat; return (player key, name, province, team, hand text, hand points, ip,
    device, client). Field paths are built only on the way to an error."""
    if type(seat) is not dict or not SEAT_FIELDS.issuperset(seat):
        _unknown(_object(seat, f"seats[{i}]"), SEAT_FIELDS, f"seats[{i}].")
    seat = cast(dict[str, Any], seat)  # a dict of known fields: checked above
    if "player" not in seat:
        raise RecordError(f"seats[{i}].player", "required")
    player = seat["player"]
    if type(player) is not dict or len(player) != 3 or not PLAYER_FIELDS.issuperset(player):
        player = _object(player, f"seats[{i}].player")
        _unknown(player, PLAYER_FIELDS, f"seats[{i}].player.")
        for field in ("id", "name", "province"):
            if field not in player:
                raise RecordError(f"seats[{i}].player.{field}", "required")
    key, name, province = player["id"], player["name"], player["province"]
    if not _plain(key, MAX_ID):
        _text(key, f"seats[{i}].player.id", MAX_ID)
    problem = ident_problem(key)
    if problem is not None:
        raise RecordError(f"seats[{i}].player.id", problem)
    if not _plain(name, MAX_NAME):
        _text(name, f"seats[{i}].player.name", MAX_NAME)
    name, problem = name_clean(name)
    if problem is not None:
        raise RecordError(f"seats[{i}].player.name", problem)
    if type(province) is not str or province not in PROVINCE_SET:
        raise RecordError(f"seats[{i}].player.province", f"unknown province {_show(province)}")
    team = seat.get("team")
    if singles:
        if team is not None:
            raise RecordError(f"seats[{i}].team", "must be null in a singles game")
    elif type(team) is not int or team not in (0, 1):
        raise RecordError(f"seats[{i}].team", f"must be 0 or 1 in doubles, got {_show(team)}")
    if "hand" not in seat:
        raise RecordError(f"seats[{i}].hand", "required")
    hand = seat["hand"]
    if type(hand) is not list:
        raise RecordError(f"seats[{i}].hand", "must be a list of card codes")
    try:
        points = sum(map(points_of.__getitem__, hand))
    except (KeyError, TypeError):
        for position, card in enumerate(hand):  # name the first unknown card
            try:
                points_of[card]
            except (KeyError, TypeError):
                raise RecordError(
                    f"seats[{i}].hand[{position}]", f"unknown card {_show(card)}"
                ) from None
        raise
    hand_text = " ".join(hand)
    if len(hand_text) > MAX_HAND_TEXT:
        raise RecordError(f"seats[{i}].hand", f"longer than {MAX_HAND_TEXT} characters")
    ip, device, client = None, "", ""
    session = seat.get("session")
    if session is not None:
        path = f"seats[{i}].session"
        if type(session) is not dict or not SESSION_FIELDS.issuperset(session):
            _unknown(_object(session, path), SESSION_FIELDS, f"{path}.")
        ip = _ip(session.get("ip"), f"{path}.ip")
        device = _optional_text(session.get("device"), f"{path}.device", MAX_DEVICE)
        client = _optional_text(session.get("client"), f"{path}.client", MAX_CLIENT)
    return (key, name, province, team, hand_text, points, ip, device, client)


@dataclass(slots=True)
class _Shape:
    """The record's top-level fields, checked."""

    record_id: str
    code: str
    mode: str
    started: datetime
    ended: datetime
    ended_by: str
    seats: list[Any]


def _shape(record: object) -> _Shape:
    """Check the record's own fields (not its seats' contents): present, known and typed."""
    if not isinstance(record, dict):
        raise RecordError("record", "a game record must be a JSON object")
    record_id = _record_id(record)
    if not RECORD_FIELDS.issuperset(record):
        _unknown(record, RECORD_FIELDS, "")
    for key in REQUIRED_FIELDS:
        if key not in record:
            raise RecordError(key, "required")
    code = _text(record["event"], "event", MAX_ID)
    mode = record["mode"]
    if mode not in MODES:
        raise RecordError("mode", f"must be 'singles' or 'doubles', got {_show(mode)}")
    started = _moment(record, "started_at")
    ended = _moment(record, "ended_at")
    if ended < started:
        raise RecordError("ended_at", "is before started_at")
    ended_by = record["ended_by"]
    if ended_by not in ENDINGS:
        raise RecordError("ended_by", f"must be 'out' or 'time', got {_show(ended_by)}")
    seats = record["seats"]
    if not isinstance(seats, list):
        raise RecordError("seats", "must be a list of seats")
    if not MIN_SEATS <= len(seats) <= MAX_SEATS:
        raise RecordError("seats", f"a game has {MIN_SEATS} to {MAX_SEATS} seats, got {len(seats)}")
    return _Shape(record_id, code, mode, started, ended, ended_by, seats)


def _event_of(shape: _Shape, rules: RecordRules) -> EventRules:
    """The record's event, open and with a usable ruleset, the game inside its hours."""
    event = rules.event(shape.code)
    if event is None:
        raise RecordError("event", f"unknown event {_show(shape.code)}")
    if event.table is None or event.setup_error is not None:
        raise RecordError("event", event.setup_error or "the season has no card table")
    check_event(event, shape.started, shape.ended)
    return event


def _seats(shape: _Shape, event: EventRules) -> list[_Row]:
    """Check each seat in order; a player sits at most once."""
    singles = shape.mode == "singles"
    seen: dict[str, int] = {}
    checked: list[_Row] = []
    for i, seat in enumerate(shape.seats):
        row = _seat(i, seat, singles, event.points)
        key = row[0]
        if key in seen:
            raise RecordError(
                f"seats[{i}].player.id", f"player {key} already sits in seats[{seen[key]}]"
            )
        seen[key] = i
        checked.append(row)
    return checked


def _teams(rows: list[_Row]) -> None:
    """Both teams play, and teammates sit apart (SPEC §4 "Team events")."""
    teams = [cast(int, row[3]) for row in rows]
    if len(set(teams)) < 2:
        raise RecordError("seats", "a doubles game needs players of both teams (0 and 1)")
    pair = adjacent_teammates(teams)
    if pair is not None:
        left, right = pair
        raise RecordError(
            f"seats[{right}].team",
            f"seats {left} and {right} are both team {teams[left]}: teammates sit apart",
        )


def _deal(shape: _Shape, event: EventRules, rows: list[_Row], rules: RecordRules) -> None:
    """Check the game as a whole: the deal, ``ended_by``, the teams, the seated table and
    the entrants."""
    hands: list[list[Any]] = [seat["hand"] for seat in shape.seats]
    table = cast(CardTable, event.table)
    try:
        validate_deal(hands, table)
    except CardError as exc:
        raise _card_error(exc, hands, dict(table.copies)) from None
    if shape.ended_by == "out":
        empty = sum(1 for hand in hands if not hand)
        if empty == 0:
            raise RecordError("ended_by", "'out' but no seat has an empty hand")
        if empty > 1:
            raise RecordError(
                "ended_by", f"'out' has one player out, but {empty} seats have an empty hand"
            )
    if shape.mode == "doubles":
        _teams(rows)
    if event.seated and frozenset(row[0] for row in rows) not in rules.tables(event.pk):
        raise RecordError(
            "seats",
            f"event {shape.code} is a seated event: a record must be the game of one of its "
            "seated tables, and no table seats these players",
        )
    if not event.open_entry:
        entrants = rules.entrants(event.pk)
        for i, row in enumerate(rows):
            if row[0] not in entrants:
                raise RecordError(
                    f"seats[{i}].player.id",
                    f"player {row[0]} has no entry in event {shape.code} (entry is closed)",
                )


def _plausible(shape: _Shape) -> None:
    """Refuse a game that cannot have been played: one that starts later than now (plus
    ``TOUR_INGEST_CLOCK_SKEW`` seconds), lasts no time or longer than the game limit plus
    ``TOUR_GAME_TIME_TOLERANCE``. (An ``out`` game has exactly one empty hand, in doubles
    too: ``_deal``.)"""
    latest = timezone.now() + timedelta(seconds=settings.TOUR_INGEST_CLOCK_SKEW)
    if shape.started > latest:
        raise RecordError("started_at", f"is in the future ({shape.started.isoformat()})")
    seconds = (shape.ended - shape.started).total_seconds()
    if seconds <= 0:
        raise RecordError("ended_at", "the game lasts no time (ended_at equals started_at)")
    limit = settings.TOUR_GAME_TIME_LIMIT + settings.TOUR_GAME_TIME_TOLERANCE
    if seconds > limit:
        raise RecordError(
            "ended_at",
            f"the game lasts {seconds:.0f} s, over the {settings.TOUR_GAME_TIME_LIMIT} s game "
            f"limit (tolerance {settings.TOUR_GAME_TIME_TOLERANCE} s)",
        )


def check_record(record: object, rules: RecordRules, *, digest: str) -> CheckedGame:
    """Validate and score one record; raise RecordError on the first problem (see module)."""
    shape = _shape(record)
    event = _event_of(shape, rules)
    rows = _seats(shape, event)
    _plausible(shape)
    _deal(shape, event, rows, rules)
    log = cast(dict[str, Any], record).get("log")
    chances: tuple[ChanceCount, ...] = ()
    if log is not None and event.play is not None:
        found: list[SeatChance] = []
        verdict = replay(cast(dict[str, Any], record), event.play, chance_observer(found))
        if not verdict.ok:
            raise RecordError("log", _log_problem(log) or str(verdict))
        if found:
            chances = chance_counts(found)
    hand_points = [row[5] for row in rows]
    if shape.mode == "singles":
        scores = SCORINGS[event.singles_scoring].apply(hand_points, None)
    else:
        scores = tour_doubles(hand_points, [cast(int, row[3]) for row in rows])
    return CheckedGame(
        record_id=shape.record_id,
        digest=digest,
        event=event,
        mode=shape.mode,
        started_at=shape.started,
        ended_at=shape.ended,
        ended_by=shape.ended_by,
        seats=tuple(
            CheckedSeat(key, name, province, team, hand_text, points, score, ip, device, client)
            for (key, name, province, team, hand_text, points, ip, device, client), score in zip(
                rows, scores, strict=True
            )
        ),
        log=log,
        chances=chances,
    )
