"""What a game record is checked against (SPEC §3 event windows and hours, §4 events, §9):
its event, loaded once per batch with its season's ruleset and, for a closed-entry event,
its entrants and, for a seated event, its seated tables (``RecordRules``), and the event's
own check (``check_event``).

* An unknown, cancelled or finalised event refuses the record (corrections of a finalised
  event go through their own path); a game arriving late but timed inside its window is
  normal and accepted.
* Both times must lie inside the event window (inclusive) and, when the event has daily
  hours (weekly qualifiers: 10:00-23:59), inside them on one local day in the season's time
  zone, so a game cannot span the nightly close.
* A seated event (``Event.Format.SEATED``: live finals, championships) is ranked by the
  placements the organiser enters per table (``services.seated``), not by game scores. It
  accepts only the record of a game played at one of its seated tables: the record's
  players, in any seat order, are exactly the players of one table of one of its rounds
  (SPEC §9 gives a record no table field). Such a game is stored (integrity audits read it)
  but leaves the event's standings alone; any other record is refused naming the event.
* A season whose card table or singles scoring is broken refuses every record of its events
  (``EventRules.setup_error``).
"""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, time
from zoneinfo import ZoneInfo

from tournaments.domain.cards import CardTable
from tournaments.domain.rules import Ruleset
from tournaments.domain.scoring import SCORINGS
from tournaments.models import Entry, Event, EventStatus, TableSeat


class RecordError(ValueError):
    """A record refused: ``field`` is the path inside the record, ``reason`` says why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


@dataclass(frozen=True, slots=True)
class EventRules:
    """What validation needs of an event and its season, loaded once per batch."""

    pk: int
    code: str
    status: str
    starts_at: datetime
    ends_at: datetime
    daily_opens: time | None
    daily_closes: time | None
    tz: ZoneInfo
    open_entry: bool
    seated: bool  # ranked by table placements; records only from its seated tables
    table: CardTable | None
    points: dict[str, int]
    singles_scoring: str
    play: Ruleset | None  # the rules of play a move log is replayed under
    setup_error: str | None  # a broken season ruleset: every record of the event is refused


def _rules_of(event: Event) -> EventRules:
    season = event.season
    setup_error = None
    table: CardTable | None = None
    try:
        table = CardTable.from_dict(season.card_table)
    except ValueError as exc:
        setup_error = f"the card table of season {season.year} is invalid: {exc}"
    if season.singles_scoring not in SCORINGS or SCORINGS[season.singles_scoring].needs_teams:
        setup_error = f"season {season.year} names no singles scoring {season.singles_scoring!r}"
    play: Ruleset | None = None
    try:
        play = event.play_rules()
    except ValueError as exc:
        setup_error = f"the rules of play of event {event.code} are invalid: {exc}"
    return EventRules(
        pk=event.pk,
        code=event.code,
        status=event.status,
        starts_at=event.starts_at,
        ends_at=event.ends_at,
        daily_opens=event.daily_opens,
        daily_closes=event.daily_closes,
        tz=ZoneInfo(season.time_zone),
        open_entry=event.open_entry,
        seated=event.format == Event.Format.SEATED,
        table=table,
        points=dict(table.points) if table is not None else {},
        singles_scoring=season.singles_scoring,
        play=play,
        setup_error=setup_error,
    )


class RecordRules:
    """The events, card tables and entrants records are checked against, cached by code.

    One instance serves one batch (the API) or one file (the importer); the status an event
    had when loaded is checked again under lock when the games are written."""

    def __init__(self) -> None:
        self._events: dict[str, EventRules | None] = {}
        self._entrants: dict[int, frozenset[str]] = {}
        self._tables: dict[int, frozenset[frozenset[str]]] = {}
        self._detached = False

    def load(self, codes: Iterable[str]) -> None:
        """Cache the events of these codes, the entrants of those with closed entry and the
        seated tables of the seated ones."""
        missing = {code for code in codes if code not in self._events}
        for code in [code for code in missing if "\x00" in code]:
            # Names no event, and PostgreSQL cannot even be asked: text cannot hold NUL.
            self._events[code] = None
            missing.discard(code)
        if not missing:
            return
        for event in Event.objects.select_related("season").filter(code__in=missing):
            self._events[event.code] = _rules_of(event)
            missing.discard(event.code)
        for code in missing:
            self._events[code] = None
        for rules in self._events.values():
            if rules is not None and not rules.open_entry:
                self.entrants(rules.pk)
            if rules is not None and rules.seated:
                self.tables(rules.pk)

    def detached(self) -> "RecordRules":
        """A copy that never queries: records of loaded events can be checked in another
        thread (the importer's pipeline); a code not loaded is a programming error."""
        copy = RecordRules()
        copy._events = dict(self._events)
        copy._entrants = dict(self._entrants)
        copy._tables = dict(self._tables)
        copy._detached = True
        return copy

    def event(self, code: str) -> EventRules | None:
        if code not in self._events:
            self._must_query(f"event {code!r} was")
            self.load([code])
        return self._events[code]

    def entrants(self, event_pk: int) -> frozenset[str]:
        if event_pk not in self._entrants:
            self._must_query(f"the entrants of event {event_pk} were")
            self._entrants[event_pk] = frozenset(
                Entry.objects.filter(event_id=event_pk).values_list(
                    "player__external_id", flat=True
                )
            )
        return self._entrants[event_pk]

    def tables(self, event_pk: int) -> frozenset[frozenset[str]]:
        """The player sets (external ids) of the seated event's tables, over all its rounds."""
        if event_pk not in self._tables:
            self._must_query(f"the seated tables of event {event_pk} were")
            players: dict[int, set[str]] = {}
            for table_id, key in TableSeat.objects.filter(
                table__round__event_id=event_pk
            ).values_list("table_id", "player__external_id"):
                players.setdefault(table_id, set()).add(key)
            self._tables[event_pk] = frozenset(frozenset(keys) for keys in players.values())
        return self._tables[event_pk]

    def _must_query(self, what: str) -> None:
        if self._detached:
            raise RuntimeError(f"{what} not loaded before the rules were detached")


def check_event(event: EventRules, started: datetime, ended: datetime) -> None:
    """Refuse a game of a cancelled or finalised event, or timed outside its window."""
    if event.status == EventStatus.CANCELLED:
        raise RecordError("event", f"event {event.code} is cancelled")
    if event.status == EventStatus.FINALISED:
        raise RecordError(
            "event", f"event {event.code} is finalised; corrections go through their own path"
        )
    for field, moment in (("started_at", started), ("ended_at", ended)):
        if not event.starts_at <= moment <= event.ends_at:
            window = (
                f"{event.starts_at.astimezone(event.tz).isoformat()} – "
                f"{event.ends_at.astimezone(event.tz).isoformat()}"
            )
            raise RecordError(field, f"outside the window of event {event.code} ({window})")
    if event.daily_opens is None and event.daily_closes is None:
        return
    opens = event.daily_opens or time.min
    closes = event.daily_closes or time.max
    local_start = started.astimezone(event.tz)
    local_end = ended.astimezone(event.tz)
    for field, local in (("started_at", local_start), ("ended_at", local_end)):
        if not opens <= local.time() <= closes:
            raise RecordError(
                field,
                f"outside the daily hours of event {event.code} "
                f"({opens:%H:%M}–{closes:%H:%M} {event.tz.key})",
            )
    if local_start.date() != local_end.date():
        raise RecordError("ended_at", f"the game runs past the daily close of event {event.code}")
