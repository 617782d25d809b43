"""Game ingest: one service behind ``POST /api/games/`` and ``manage.py import_games``
(SPEC §3 play and scoring, §4 live leaderboards, §9 game record v1).

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
  then ``standings_apply_games`` folds the new scores into the leaderboards. Every writer takes
  the locks in this order. The standings of the games actually inserted, and only those,
  are updated in the same transaction.
* **Idempotency by the unique record id**, not check-then-act: PostgreSQL inserts with
  ``ON CONFLICT (record_id) DO NOTHING`` (`game_copy`); SQLite transactions are IMMEDIATE
  (one writer at a time), so there the ids are checked inside the write transaction.
  A record not inserted because its id exists is a duplicate or a conflict by digest.
* **Players** unknown so far are created from the record's player block. A changed name or
  province is updated and logged (``PlayerChange``, reason ``"ingest <record id>"``), from
  the block of the player's latest game in the batch, unless the player has a stored game
  that ended later (a late game carries an old block and must not undo a newer one).
* **A suspended player's games are rejected** (SPEC §7 sanctions): a game that started on or
  after the day an unreversed suspension took effect (``integrity.Sanction``, Asia/Shanghai)
  is rejected at the seat, naming the case. Games played before it still land (late
  arrival is normal), and a suspension reversed on appeal stops refusing at once.
"""

import json
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any, cast

from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone

from accounts.models import Player, PlayerChange, User
from core import collector
from tournaments.models import Event, Game, Seat
from tournaments.services import game_copy
from tournaments.services.ingest_validation import (
    CheckedGame,
    EventRules,
    RecordError,
    RecordRules,
    check_event,
    check_record,
    record_digest,
    record_id_of,
)
from tournaments.services.standings import standings_apply_games

logger = logging.getLogger(__name__)

CHUNK = 10_000  # ids per IN (...) query, unless the database allows fewer parameters
IMPORT_BATCH = 5000


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
class _Outcomes:
    """Outcomes collected while a batch is processed, sorted by index at the end."""

    ingested: int = 0
    duplicates: list[tuple[int, str]] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)

    def add(self, other: "_Outcomes") -> None:
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
class _Head:
    """A record whose id and digest are read, waiting for validation."""

    index: int
    record: dict[str, Any]
    record_id: str
    digest: str


@dataclass(frozen=True, slots=True)
class _Pending:
    index: int
    game: CheckedGame


def _chunks(items: Sequence[Any]) -> Iterable[Sequence[Any]]:
    size = min(CHUNK, connection.features.max_query_params or CHUNK)
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _stored_digests(record_ids: Sequence[str]) -> dict[str, str]:
    stored: dict[str, str] = {}
    for chunk in _chunks(sorted(set(record_ids))):
        stored.update(Game.objects.filter(record_id__in=chunk).values_list("record_id", "digest"))
    return stored


def _encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _heads(records: Sequence[object], indexes: Sequence[int], out: _Outcomes) -> list[_Head]:
    """Read each record's id and digest; a record without a readable id is rejected."""
    heads: list[_Head] = []
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
        heads.append(_Head(index, cast(dict[str, Any], record), record_id, digest))
    return heads


def _unstored(heads: Sequence[_Head], rules: RecordRules, out: _Outcomes) -> list[_Head]:
    """The records whose ids are not stored yet (the others are duplicates or conflicts);
    load the rules they are checked against."""
    stored = _stored_digests([head.record_id for head in heads])
    fresh: list[_Head] = []
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


_Validated = tuple[list[_Pending], _Outcomes]


def _validate(heads: Sequence[_Head], rules: RecordRules) -> _Validated:
    """Check and score each record; a repeated id is a duplicate or a conflict of the first
    valid record with that id. No query once ``_unstored`` loaded the rules."""
    out = _Outcomes()
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
    records: Sequence[object], indexes: Sequence[int], rules: RecordRules, out: _Outcomes
) -> list[_Pending]:
    """Validate a batch: known ids become duplicates or conflicts, the rest are checked."""
    heads = _unstored(_heads(records, indexes, out), rules, out)
    pending, checked = _validate(heads, rules)
    out.add(checked)
    return _not_suspended(pending, out)


def _not_suspended(pending: list[_Pending], out: _Outcomes) -> list[_Pending]:
    """The games none of whose players was suspended when it started (module docstring)."""
    from integrity.models import Sanction

    # Every suspension in force (a few at most, against thousands of players in a batch).
    suspended: dict[str, tuple[date, int]] = {}
    for key, since, case in (
        Sanction.objects.filter(suspend=True, reversed_at__isnull=True)
        .order_by("effective_on", "pk")
        .values_list("player__external_id", "effective_on", "case_id")
    ):
        suspended.setdefault(key, (since, case))
    if not suspended:
        return pending
    kept = []
    for item in pending:
        day = timezone.localdate(item.game.started_at, timezone.get_default_timezone())
        barred = [
            (i, seat.player_key, suspended[seat.player_key])
            for i, seat in enumerate(item.game.seats)
            if seat.player_key in suspended and day >= suspended[seat.player_key][0]
        ]
        if barred:
            i, key, (since, case) = barred[0]
            reason = f"player {key} is suspended since {since.isoformat()} (integrity case {case})"
            out.rejected.append(
                Rejection(item.index, item.game.record_id, f"seats[{i}].player.id", reason)
            )
            continue
        kept.append(item)
    return kept


def _open_events(pending: Sequence[_Pending], out: _Outcomes) -> list[_Pending]:
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


def _games_bulk_create(games: Sequence[CheckedGame], now: datetime) -> dict[str, int]:
    """SQLite: the write lock is held (IMMEDIATE), so ids absent now stay absent."""
    taken = _stored_digests([game.record_id for game in games])
    rows = [
        Game(
            record_id=game.record_id,
            digest=game.digest,
            event_id=game.event.pk,
            mode=game.mode,
            started_at=game.started_at,
            ended_at=game.ended_at,
            ended_by=game.ended_by,
            seat_count=len(game.seats),
            log=game.log,
            ingested_at=now,
        )
        for game in games
        if game.record_id not in taken
    ]
    Game.objects.bulk_create(rows, batch_size=500)
    return {row.record_id: row.pk for row in rows}


def _seats_bulk_create(games: Sequence[tuple[int, CheckedGame]], players: dict[str, int]) -> None:
    Seat.objects.bulk_create(
        [
            Seat(
                game_id=game_pk,
                seat=position,
                player_id=players[seat.player_key],
                team=seat.team,
                hand=seat.hand,
                hand_points=seat.hand_points,
                score=seat.score,
                event_id=game.event.pk,
                ended_at=game.ended_at,
                ip=seat.ip,
                device=seat.device,
                client=seat.client,
            )
            for game_pk, game in games
            for position, seat in enumerate(game.seats)
        ],
        batch_size=500,
    )


def _players_by_key(keys: Sequence[str]) -> dict[str, tuple[int, str, str]]:
    found: dict[str, tuple[int, str, str]] = {}
    for chunk in _chunks(keys):
        for pk, key, name, province in Player.objects.filter(external_id__in=chunk).values_list(
            "pk", "external_id", "name", "province"
        ):
            found[key] = (pk, name, province)
    return found


def _players_upsert(games: Sequence[CheckedGame], by: User | None, now: datetime) -> dict[str, int]:
    """Create unknown players, update changed ones; return key -> player pk."""
    latest: dict[str, tuple[datetime, str, str, str]] = {}
    for game in games:
        for seat in game.seats:
            seen = latest.get(seat.player_key)
            if seen is None or game.ended_at >= seen[0]:
                latest[seat.player_key] = (game.ended_at, seat.name, seat.province, game.record_id)
    keys = sorted(latest)
    known = _players_by_key(keys)
    missing = [key for key in keys if key not in known]
    if missing:
        Player.objects.bulk_create(
            [
                Player(
                    external_id=key,
                    name=latest[key][1],
                    province=latest[key][2],
                    created_at=now,
                    updated_at=now,
                )
                for key in missing
            ],
            ignore_conflicts=True,
        )
        known.update(_players_by_key(missing))
    changed = [key for key in keys if known[key][1:] != latest[key][1:3]]
    if changed:
        _players_update(changed, latest, known, by, now)
    return {key: pk for key, (pk, _, _) in known.items()}


def _players_update(
    keys: Sequence[str],
    latest: dict[str, tuple[datetime, str, str, str]],
    known: dict[str, tuple[int, str, str]],
    by: User | None,
    now: datetime,
) -> None:
    pks = sorted(known[key][0] for key in keys)
    last_game = dict(
        Seat.objects.filter(player_id__in=pks)
        .values("player_id")
        .annotate(last=Max("ended_at"))
        .values_list("player_id", "last")
    )
    changes: list[PlayerChange] = []
    for player in Player.objects.select_for_update().filter(pk__in=pks).order_by("pk"):
        ended_at, name, province, record_id = latest[player.external_id]
        stored_last = last_game.get(player.pk)
        if stored_last is not None and ended_at < stored_last:
            continue  # an older game's block: the stored one is newer
        fields = []
        for attr, new in (("name", name), ("province", province)):
            old = getattr(player, attr)
            if old != new:
                changes.append(
                    PlayerChange(
                        player=player,
                        field=attr,
                        old=old,
                        new=new,
                        at=now,
                        by=by,
                        reason=f"ingest {record_id}",
                    )
                )
                setattr(player, attr, new)
                fields.append(attr)
        if fields:
            player.updated_at = now
            player.save(update_fields=[*fields, "updated_at"])
        known[player.external_id] = (player.pk, player.name, player.province)
    PlayerChange.objects.bulk_create(changes)


def _write(pending: Sequence[_Pending], by: User | None, out: _Outcomes) -> None:
    if not pending:
        return
    now = timezone.now()
    with transaction.atomic():
        pending = _open_events(pending, out)
        games = [item.game for item in pending]
        if connection.vendor == "postgresql":
            inserted = game_copy.games_copy(games=games, now=now)
        else:
            inserted = _games_bulk_create(games, now)
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
        players = _players_upsert([game for _, game in new], by, now)
        if connection.vendor == "postgresql":
            game_copy.seats_copy(games=new, players=players)
        else:
            _seats_bulk_create(new, players)
        standings_apply_games(game_ids=[game_pk for game_pk, _ in new])
        out.ingested += len(new)


def _ingest(
    records: Sequence[object],
    indexes: Sequence[int],
    by: User | None,
    rules: RecordRules,
) -> IngestReport:
    out = _Outcomes()
    pending = _check(records, indexes, rules, out)
    _write(pending, by, out)
    return out.report()


def games_ingest(
    *,
    records: Sequence[object],
    by: User | None = None,
    source: str = "api",
    indexes: Sequence[int] | None = None,
) -> IngestReport:
    """Validate, score and store a batch of game records v1; report each record's outcome.

    ``indexes`` are the positions reported for the records (default 0, 1, …). Good records
    of a mixed batch are stored; see the module docstring for the outcomes and guarantees.
    """
    positions = range(len(records)) if indexes is None else indexes
    report = _ingest(records, positions, by, RecordRules())
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


@dataclass
class ImportSummary:
    lines: int = 0
    ingested: int = 0
    duplicates: int = 0
    conflicts: int = 0
    rejected: int = 0


@dataclass
class _Batch:
    """A batch of lines, decoded: the records with their line numbers, and the lines that
    are not JSON (rejects)."""

    records: list[object] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    unreadable: list[dict[str, Any]] = field(default_factory=list)


def _not_json_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _line_batches(
    lines: Iterable[str | bytes], size: int, summary: ImportSummary
) -> Iterator[list[tuple[int, str | bytes]]]:
    """The non-blank lines with their numbers, ``size`` at a time."""
    batch: list[tuple[int, str | bytes]] = []
    for number, line in enumerate(lines, start=1):
        summary.lines = number
        if not line.strip():
            continue
        batch.append((number, line))
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _decoded(lines: Sequence[tuple[int, str | bytes]]) -> _Batch:
    batch = _Batch()
    for number, line in lines:
        try:
            batch.records.append(json.loads(line, parse_constant=_not_json_constant))
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            reason = f"not JSON: {exc}"
            batch.unreadable.append(
                {"line": number, "id": None, "field": "record", "reason": reason}
            )
            continue
        batch.numbers.append(number)
    return batch


def _prepared(lines: Sequence[tuple[int, str | bytes]]) -> tuple[_Batch, list[_Head], _Outcomes]:
    """Decode a batch and read its ids and digests (no query)."""
    batch = _decoded(lines)
    out = _Outcomes()
    return batch, _heads(batch.records, batch.numbers, out), out


def _rejects(batch: _Batch, report: IngestReport) -> list[dict[str, Any]]:
    rows = (
        batch.unreadable
        + [
            {"line": c.index, "id": c.id, "field": "id", "reason": c.reason}
            for c in report.conflicts
        ]
        + [
            {"line": r.index, "id": r.id, "field": r.field, "reason": r.reason}
            for r in report.rejected
        ]
    )
    return sorted(rows, key=lambda row: row["line"])


def games_import(
    *,
    lines: Iterable[str | bytes],
    by: User | None = None,
    batch_size: int = IMPORT_BATCH,
    on_rejects: Callable[[list[dict[str, Any]]], None],
    on_batch: Callable[[ImportSummary], None] | None = None,
) -> ImportSummary:
    """Ingest JSON Lines (one record per line) in batches through `games_ingest`'s path.

    A line that is not JSON is a reject with its line number (blank lines are skipped);
    rejects and conflicts go to ``on_rejects`` as ``{"line", "id", "field", "reason"}``, in
    line order. Each batch is its own transaction, so a rerun changes nothing.

    Batches are pipelined: while one batch is written (this thread then mostly waits on
    the database), a second thread decodes the batch after next and validates and scores
    the next one, whose ids were looked up and rules loaded first, so that thread never
    queries. An id stored by the batch ahead after the lookup is caught by the write, as
    with a concurrent writer, and reported as a duplicate or a conflict all the same.
    """
    summary = ImportSummary()
    rules = RecordRules()

    def finish(batch: _Batch, out: _Outcomes, checking: Future[_Validated]) -> None:
        pending, checked = checking.result()
        out.add(checked)
        _write(_not_suspended(pending, out), by, out)
        report = out.report()
        summary.ingested += report.ingested
        summary.duplicates += len(report.duplicates)
        summary.conflicts += len(report.conflicts)
        summary.rejected += len(report.rejected) + len(batch.unreadable)
        rejects = _rejects(batch, report)
        if rejects:
            on_rejects(rejects)
        if on_batch is not None:
            on_batch(summary)

    with (
        collector.paused(collect_after=True),
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-validate") as worker,
    ):
        batches = _line_batches(lines, batch_size, summary)
        first = next(batches, None)
        preparing = worker.submit(_prepared, first) if first is not None else None
        ahead: tuple[_Batch, _Outcomes, Future[_Validated]] | None = None
        while preparing is not None:
            batch, heads, out = preparing.result()
            following = next(batches, None)
            preparing = worker.submit(_prepared, following) if following is not None else None
            unstored = _unstored(heads, rules, out)
            checking = worker.submit(_validate, unstored, rules.detached())
            if ahead is not None:
                finish(*ahead)
            ahead = (batch, out, checking)
        if ahead is not None:
            finish(*ahead)
    return summary
