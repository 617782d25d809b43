"""Game ingest of one batch (SPEC §3 play and scoring, §4 live leaderboards, §9 game record
v1): the service behind ``POST /api/games/``, and each batch of ``manage.py import_games``.

``games_ingest`` takes a batch of decoded records and reports, per record, one outcome:

* **ingested**: validated (``ingest_validation.check_record``), scored with the season's
  ruleset and written: the game, its seats, its players, and the standings of its event;
* **duplicate**: a game with this id is stored already with the same digest (SHA-256 of the
  canonical record), or the record appeared earlier in the same batch: nothing changes;
* **conflict**: the id is stored (or appeared earlier in the batch) with a *different*
  record: nothing changes, the conflict names the id;
* **rejected**: invalid (index, field path, reason): nothing of it is written.

Decisions:

* **A mixed batch is partly applied**, like Elasticsearch ``_bulk``: the good records land,
  the others are reported; ``errors`` is true when anything conflicted or was rejected
  (duplicates are harmless and not errors). Only a malformed batch is refused as a whole
  (the API's business, see ``tournaments.api.games``).
* **One transaction per batch**: events are locked first (by id; their status is checked
  again under the lock, so no game lands in an event finalised meanwhile), then games are
  inserted, then the players of the inserted games are created or updated, then their seats,
  then ``standings_apply_games`` folds the new scores into the leaderboards (not those of a
  seated event's table games: placements rank a seated event, ``ingest_rules``). Every writer takes
  the locks in this order. The standings of the games actually inserted, and only those,
  are updated in the same transaction.
* **Idempotency by the unique record id**, not check-then-act: games are inserted with
  ``ON CONFLICT (record_id) DO NOTHING`` (`game_copy`). A record not inserted because its
  id exists is a duplicate or a conflict by digest.
* **Players** unknown so far are created from the record's player block, and changed ones
  updated and logged (``ingest.players``).
* **A suspended player's games are rejected** (SPEC §7 sanctions): a game that started on or
  after the tour day a suspension in force took effect is rejected at the seat, naming the
  suspension's ground. Games played before it still land (late arrival is normal). The
  caller supplies the suspensions in force (``suspensions``), asked once per batch:
  ``flows.ingest`` reads integrity's unreversed sanctions, so a suspension reversed on
  appeal stops refusing at once.
"""

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any, cast

from django.db import transaction
from django.utils import timezone

from accounts.models import User
from core.domain.clock import tour_day
from tournaments.models import Event, Game
from tournaments.services import game_copy
from tournaments.services.ingest.players import players_upsert
from tournaments.services.ingest_rules import EventRules, RecordError, RecordRules, check_event
from tournaments.services.ingest_validation import (
    CheckedGame,
    check_record,
    record_digest,
    record_id_of,
)
from tournaments.services.standings import standings_apply_games

logger = logging.getLogger(__name__)

CHUNK = 10_000  # ids per IN (...) query


@dataclass(frozen=True, slots=True)
class Rejection:
    index: int
    id: str | None
    field: str
    reason: str


@dataclass(frozen=True, slots=True)
class Conflict:
    index: int
    id: str
    reason: str


@dataclass
class IngestReport:
    """What became of each record of a batch; ``index`` is the record's position (the API)
    or its line number (a file)."""

    ingested: int = 0
    duplicates: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)

    @property
    def errors(self) -> bool:
        return bool(self.conflicts or self.rejected)


@dataclass
class Outcomes:
    """Outcomes collected while a batch is processed, sorted by index at the end."""

    ingested: int = 0
    duplicates: list[tuple[int, str]] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)

    def add(self, other: "Outcomes") -> None:
        self.ingested += other.ingested
        self.duplicates += other.duplicates
        self.conflicts += other.conflicts
        self.rejected += other.rejected

    def report(self) -> IngestReport:
        return IngestReport(
            ingested=self.ingested,
            duplicates=[record_id for _, record_id in sorted(self.duplicates)],
            conflicts=sorted(self.conflicts, key=lambda c: c.index),
            rejected=sorted(self.rejected, key=lambda r: r.index),
        )


@dataclass(frozen=True, slots=True)
class Head:
    """A record whose id and digest are read, waiting for validation."""

    index: int
    record: dict[str, Any]
    record_id: str
    digest: str


@dataclass(frozen=True, slots=True)
class _Pending:
    index: int
    game: CheckedGame


@dataclass(frozen=True, slots=True)
class Suspension:
    """A player barred from play from the tour day ``since`` on; ``ground`` says why (e.g.
    the integrity case), quoted in the rejection."""

    since: date
    ground: str


#: The suspensions in force now, by player key; asked once per batch.
Suspensions = Callable[[], Mapping[str, Suspension]]


def chunks(items: Sequence[Any]) -> Iterable[Sequence[Any]]:
    """``items``, CHUNK at a time (one ``IN (...)`` query each)."""
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]


def _stored_digests(record_ids: Sequence[str]) -> dict[str, str]:
    stored: dict[str, str] = {}
    for chunk in chunks(sorted(set(record_ids))):
        stored.update(Game.objects.filter(record_id__in=chunk).values_list("record_id", "digest"))
    return stored


def _encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def heads_read(records: Sequence[object], indexes: Sequence[int], out: Outcomes) -> list[Head]:
    """Read each record's id and digest; a record without a readable id is rejected."""
    heads: list[Head] = []
    for index, record in zip(indexes, records, strict=True):
        try:
            record_id = record_id_of(record)
        except RecordError as exc:
            out.rejected.append(Rejection(index, None, exc.field, exc.reason))
            continue
        try:
            # Before any query: text that is not valid Unicode (a lone surrogate) cannot be
            # sent to the database, not even as the id or event code to look up.
            digest = record_digest(record)
        except (UnicodeEncodeError, RecursionError) as exc:
            shown = record_id if _encodable(record_id) else None
            reason = (
                "holds text that is not valid Unicode"
                if isinstance(exc, UnicodeEncodeError)
                else "is nested too deeply"
            )
            out.rejected.append(Rejection(index, shown, "record", reason))
            continue
        heads.append(Head(index, cast(dict[str, Any], record), record_id, digest))
    return heads


def unstored(heads: Sequence[Head], rules: RecordRules, out: Outcomes) -> list[Head]:
    """The records whose ids are not stored yet (the others are duplicates or conflicts);
    load the rules they are checked against."""
    stored = _stored_digests([head.record_id for head in heads])
    fresh: list[Head] = []
    for head in heads:
        known = stored.get(head.record_id)
        if known is None:
            fresh.append(head)
        elif known == head.digest:
            out.duplicates.append((head.index, head.record_id))
        else:
            reason = f"id {head.record_id} is already stored with a different record"
            out.conflicts.append(Conflict(head.index, head.record_id, reason))
    rules.load({h.record["event"] for h in fresh if isinstance(h.record.get("event"), str)})
    return fresh


Validated = tuple[list[_Pending], Outcomes]


def validated(heads: Sequence[Head], rules: RecordRules) -> Validated:
    """Check and score each record; a repeated id is a duplicate or a conflict of the first
    valid record with that id. No query once ``unstored`` loaded the rules."""
    out = Outcomes()
    first: dict[str, tuple[int, str]] = {}
    pending: list[_Pending] = []
    for head in heads:
        index, record_id, digest = head.index, head.record_id, head.digest
        earlier = first.get(record_id)
        if earlier is not None:
            if earlier[1] == digest:
                out.duplicates.append((index, record_id))
            else:
                reason = (
                    f"id {record_id} appears earlier in this batch (index {earlier[0]}) "
                    "with a different record"
                )
                out.conflicts.append(Conflict(index, record_id, reason))
            continue
        try:
            game = check_record(head.record, rules, digest=digest)
        except RecordError as exc:
            out.rejected.append(Rejection(index, record_id, exc.field, exc.reason))
            continue
        first[record_id] = (index, digest)
        pending.append(_Pending(index, game))
    return pending, out


def _check(
    records: Sequence[object],
    indexes: Sequence[int],
    rules: RecordRules,
    out: Outcomes,
    suspensions: Suspensions,
) -> list[_Pending]:
    """Validate a batch: known ids become duplicates or conflicts, the rest are checked."""
    heads = unstored(heads_read(records, indexes, out), rules, out)
    pending, checked = validated(heads, rules)
    out.add(checked)
    return not_suspended(pending, out, suspensions)


def not_suspended(
    pending: list[_Pending], out: Outcomes, suspensions: Suspensions
) -> list[_Pending]:
    """The games none of whose players was suspended when it started (module docstring)."""
    suspended = suspensions()
    if not suspended:
        return pending
    kept = []
    for item in pending:
        day = tour_day(item.game.started_at)
        barred = [
            (i, seat.player_key, suspended[seat.player_key])
            for i, seat in enumerate(item.game.seats)
            if seat.player_key in suspended and day >= suspended[seat.player_key].since
        ]
        if barred:
            i, key, suspension = barred[0]
            reason = (
                f"player {key} is suspended since {suspension.since.isoformat()} "
                f"({suspension.ground})"
            )
            out.rejected.append(
                Rejection(item.index, item.game.record_id, f"seats[{i}].player.id", reason)
            )
            continue
        kept.append(item)
    return kept


def _open_events(pending: Sequence[_Pending], out: Outcomes) -> list[_Pending]:
    """Lock the batch's events (by id) and check each game again against the locked row:
    its status (finalised or cancelled meanwhile) and its window (moved meanwhile). A game
    whose event row is unchanged since validation passed this very check already."""
    event_pks = sorted({item.game.event.pk for item in pending})
    locked = {
        row[0]: row[1:]
        for row in Event.objects.select_for_update(no_key=True)
        .filter(pk__in=event_pks)
        .order_by("pk")
        .values_list("pk", "status", "starts_at", "ends_at", "daily_opens", "daily_closes")
    }
    current: dict[int, EventRules | None] = {}  # None: unchanged, so nothing to check again
    gone: set[int] = set()
    for item in pending:
        loaded = item.game.event
        if loaded.pk in current or loaded.pk in gone:
            continue
        row = locked.get(loaded.pk)
        if row is None:
            gone.add(loaded.pk)
        elif row == (
            loaded.status,
            loaded.starts_at,
            loaded.ends_at,
            loaded.daily_opens,
            loaded.daily_closes,
        ):
            current[loaded.pk] = None
        else:
            current[loaded.pk] = replace(
                loaded,
                status=row[0],
                starts_at=row[1],
                ends_at=row[2],
                daily_opens=row[3],
                daily_closes=row[4],
            )
    kept = []
    for item in pending:
        event = item.game.event
        try:
            if event.pk in gone:
                raise RecordError("event", f"unknown event {event.code!r}")
            rules = current[event.pk]
            if rules is not None:
                check_event(rules, item.game.started_at, item.game.ended_at)
        except RecordError as exc:
            out.rejected.append(Rejection(item.index, item.game.record_id, exc.field, exc.reason))
            continue
        kept.append(item)
    return kept


def write(pending: Sequence[_Pending], by: User | None, out: Outcomes) -> None:
    if not pending:
        return
    now = timezone.now()
    with transaction.atomic():
        pending = _open_events(pending, out)
        games = [item.game for item in pending]
        inserted = game_copy.games_copy(games=games, now=now)
        lost = [item for item in pending if item.game.record_id not in inserted]
        if lost:  # another writer stored these ids first
            stored = _stored_digests([item.game.record_id for item in lost])
            for item in lost:
                record_id = item.game.record_id
                if stored.get(record_id) == item.game.digest:
                    out.duplicates.append((item.index, record_id))
                else:
                    reason = f"id {record_id} is already stored with a different record"
                    out.conflicts.append(Conflict(item.index, record_id, reason))
        new = [
            (inserted[item.game.record_id], item.game)
            for item in pending
            if item.game.record_id in inserted
        ]
        if not new:
            return
        players = players_upsert([game for _, game in new], by, now)
        game_copy.seats_copy(games=new, players=players)
        # A seated event is ranked by its table placements: its games leave the standings.
        standings_apply_games(game_ids=[pk for pk, game in new if not game.event.seated])
        out.ingested += len(new)


def _ingest(
    records: Sequence[object],
    indexes: Sequence[int],
    by: User | None,
    rules: RecordRules,
    suspensions: Suspensions,
) -> IngestReport:
    out = Outcomes()
    pending = _check(records, indexes, rules, out, suspensions)
    write(pending, by, out)
    return out.report()


def games_ingest(
    *,
    records: Sequence[object],
    by: User | None = None,
    source: str = "api",
    indexes: Sequence[int] | None = None,
    suspensions: Suspensions,
) -> IngestReport:
    """Validate, score and store a batch of game records v1; report each record's outcome.

    ``indexes`` are the positions reported for the records (default 0, 1, …). Good records
    of a mixed batch are stored; see the module docstring for the outcomes and guarantees.
    ``suspensions`` gives the suspensions in force (``flows.ingest`` supplies integrity's).
    """
    positions = range(len(records)) if indexes is None else indexes
    report = _ingest(records, positions, by, RecordRules(), suspensions)
    logger.info(
        "games ingest from %s: %d records, %d ingested, %d duplicates, %d conflicts, %d rejected",
        source,
        len(records),
        report.ingested,
        len(report.duplicates),
        len(report.conflicts),
        len(report.rejected),
    )
    return report
