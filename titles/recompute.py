"""Materialise title state from the replay of the ledger (SPEC §6).

Title state is a pure function of a player's approved, non-voided qualifications replayed in
date order (:func:`titles.domain.replay.replay`). Every service that changes the ledger locks
the players' :class:`~titles.models.PlayerTitle` rows first (:func:`titles_lock`: existing
rows in player id order, then missing rows inserted in player id order), changes the ledger,
and calls :func:`titles_recompute` in the same transaction. It replays the players and
writes only what differs from the previous materialisation:

* ``PlayerTitle`` (status as of today in Asia/Shanghai, latest ``valid_until``, Lifetime,
  terms) when any of it changed;
* ``TitleTerm`` rows by term start — created, updated, or marked ``void`` / ``revoked``
  when the replay no longer produces them (their code keeps verifying, as no longer valid);
* ``TitleChange`` history: each replay change (granted, extended, lapsed — including the
  lapse of the last term once its day has come —, lifetime, ignored) that is not yet live in
  the history is added, and each live one the replay no longer produces gets a
  ``retracted`` row. A recompute with no change writes nothing.

**Fingerprint.** ``PlayerTitle.fingerprint`` is a 64-bit hash of the replay output the
player was last materialised from (:func:`fingerprint`: changes, terms, Lifetime; never the
day). A player whose replay hashes the same, whose stored status is today's and none of
whose terms has a state other than today's is unchanged: their terms and history are not
even read. This holds because only this module writes terms and replay history, always
with the fingerprint, and the one other writer, the expiry sweep
(:func:`titles.services.titles_expire`), changes only what the last two checks look at
(``current`` → ``lapsed``, the status, and the lapse in the history).

:func:`titles_recompute_all` replays every player, streaming the qualifications, and gives
players who have approved qualifications but no title row yet (a bulk import) one.

**First materialisation** (PostgreSQL, no title row, term or history yet, no webhook
subscribed): :func:`_materialise` locks the three tables, drops their secondary indexes,
unique constraints and the foreign keys among them, COPYs every row while replaying, and
recreates what it dropped from the definitions PostgreSQL printed (same names, same SQL) —
one transaction, the same rows as the normal path. Titles readers and writers wait for it.

**Partner webhooks** (``webhooks``), in the transaction that writes the history row, one per
row (:data:`WEBHOOK_OF_KIND`): ``granted`` (a new Master term) and ``lifetime`` (Lifetime
conferred, at most once) are ``title.granted``; ``extended`` is ``title.extended``;
``lapsed`` is ``title.lapsed``; ``revoked`` (a sanction) is ``title.revoked``. Retractions,
ignored qualifications and restorations on appeal (``restored``) send nothing: partners
subscribe to no such type. One query per recompute finds the kinds some active subscription
wants (:func:`webhook_kinds`); with none, no payload is built. History rows the services
write themselves (the expiry sweep's lapses, a revocation) go through
:func:`titles_webhooks_emit`.
"""

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from datetime import date, timedelta
from functools import partial
from itertools import groupby, islice
from operator import itemgetter
from typing import Any

from django.db import OperationalError, connection, transaction
from django.db.models import Max, Min, Model, Q, QuerySet
from django.utils import timezone
from psycopg.types.json import set_json_dumps

from accounts.models import Player, User
from core import collector
from titles.domain.codes import term_code
from titles.domain.dates import tour_day
from titles.domain.replay import LAPSED, Term, TitleHistory, replay
from titles.domain.replay import Qualification as Replayed
from titles.models import (
    REPLAY_KINDS,
    ChangeKind,
    PlayerTitle,
    Qualification,
    QualificationStatus,
    TermState,
    TitleChange,
    TitleStatus,
    TitleTerm,
)
from webhooks.models import EventType, Subscription
from webhooks.services import webhook_emit

#: Players per transaction of :func:`titles_recompute_all`.
CHUNK = 5000
#: Qualification rows per fetch from the server-side cursor.
STREAM_CHUNK = 50_000

#: (kind, on, source, valid_until, note): what makes two history entries the same change.
ChangeKey = tuple[str, date, str, date | None, str]
#: A ``PlayerTitle`` as read or locked: (status, fingerprint).
Locked = tuple[str, int | None]
#: What a ``PlayerTitle`` shows: (status, valid_until, lifetime_since, terms).
Shown = tuple[str, date | None, date | None, list[dict[str, Any]]]
Row = tuple[Any, ...]

_NO_HISTORY = replay(())
ONE_DAY = timedelta(days=1)
_SEP = "\0"


def tour_today() -> date:
    """Today in the tour's time zone (Asia/Shanghai)."""
    return tour_day(timezone.now())


def fingerprint(history: TitleHistory) -> int:
    """A 64-bit hash of a replay's output — every change, every term, Lifetime — that is
    the same in every process (``hash()`` is not)."""
    parts = [
        f"{kind}{_SEP}{on.toordinal()}{_SEP}{source}{_SEP}"
        f"{valid_until.toordinal() if valid_until is not None else ''}{_SEP}{reason}"
        for kind, on, source, valid_until, reason in history.changes
    ]
    parts += [
        f"{t.start.toordinal()}{_SEP}{t.valid_until.toordinal()}{_SEP}{_SEP.join(t.sources)}"
        for t in history.terms
    ]
    if history.lifetime_since is not None:
        parts.append(str(history.lifetime_since.toordinal()))
    digest = hashlib.blake2b("\1".join(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


_EMPTY = fingerprint(_NO_HISTORY)


def titles_lock(player_ids: Iterable[int]) -> dict[int, Locked]:
    """Lock the players' ``PlayerTitle`` rows, creating the missing ones; returns their
    status and fingerprint, to pass to :func:`titles_recompute`.

    Call inside a transaction, before touching the players' qualifications: it is the
    first lock every titles write takes. Existing rows are locked first, in player id
    order, then missing rows are inserted and locked in player id order — the same two
    phases as :func:`titles_recompute_all`, so no two writers deadlock. A missing row is
    the materialisation of no qualifications: status ``none``, the empty replay's
    fingerprint.
    """
    ids = tuple(sorted(set(player_ids)))
    locked = _lock_titles(ids)
    missing = tuple(pid for pid in ids if pid not in locked)
    if missing:
        PlayerTitle.objects.bulk_create(
            [PlayerTitle(player_id=pid, fingerprint=_EMPTY) for pid in missing],
            ignore_conflicts=True,
        )
        locked.update(_lock_titles(missing))
    return locked


def _lock_titles(ids: tuple[int, ...]) -> dict[int, Locked]:
    if not ids:
        return {}
    rows = (
        PlayerTitle.objects.select_for_update()
        .filter(player_id__in=ids)
        .order_by("player_id")
        .values_list("player_id", "status", "fingerprint")
    )
    return {pid: (status, digest) for pid, status, digest in _fetch(rows)}


def player_history(player_id: int) -> TitleHistory:
    """Replay one player's approved, non-voided qualifications (no lock, read only)."""
    rows = _fetch(_approved().filter(player_id=player_id))
    return _histories(rows).get(player_id, _NO_HISTORY)


def titles_recompute(
    *,
    titles: dict[int, Locked],
    by: User | None,
    reason: str,
    vanished: str = TermState.VOID,
    today: date | None = None,
) -> None:
    """Replay the players of ``titles`` (as locked by :func:`titles_lock`) and write the
    difference. ``vanished`` is the state given to terms the replay no longer produces:
    ``void``, or ``revoked`` when a sanction caused it."""
    today = today or tour_today()
    where = Q(player_id__in=sorted(titles))
    read = _Read(
        titles=titles,
        qualifications=_fetch(_approved().filter(where)),
        stale=_stale(today, where),
    )
    plan = _plan(read, today)
    _write(plan, today=today, by=by, reason=reason, vanished=vanished, kinds=webhook_kinds())


def titles_recompute_all(
    *, by: User | None = None, reason: str = "recompute", chunk: int = CHUNK
) -> int:
    """Replay every player with qualifications or titles; returns the number replayed.

    Reads come first, without locks: every title row (status, fingerprint) and the players
    with a term whose state is not today's, then every approved qualification in one query
    ordered by player, streamed (a server-side cursor; on PostgreSQL the next chunk is
    fetched while one is replayed, :class:`_Prefetched`). Players are replayed in ranges of
    ``chunk`` player ids, each written in its own transaction: it locks the title rows of
    the players to write and leaves alone those changed since they were read — their
    writer materialised them, from qualifications at least as new as the stream's.
    Idempotent: a second run writes nothing, and reads no terms or history of an
    unchanged player. On an empty materialisation (PostgreSQL) the whole run is one
    transaction instead: :func:`_materialise`.
    """
    today = tour_today()
    # Outside a caller's transaction the ledger is committed: another connection sees it.
    committed = not connection.in_atomic_block
    if _state_empty():
        with transaction.atomic():
            rebuild = _take_empty_state()
            if rebuild is not None:
                return _materialise(
                    rebuild, today=today, by=by, reason=reason, chunk=chunk, committed=committed
                )
    bounds = [
        model.objects.aggregate(low=Min("player_id"), high=Max("player_id"))
        for model in (Qualification, PlayerTitle)
    ]
    lows = [b["low"] for b in bounds if b["low"] is not None]
    if not lows:
        return 0
    last = max(b["high"] for b in bounds if b["high"] is not None)
    ends = list(range(min(lows) + chunk, last + chunk + 1, chunk))
    titles = _fetch(
        PlayerTitle.objects.order_by("player_id").values_list("player_id", "status", "fingerprint")
    )
    stale = _stale(today)
    kinds = webhook_kinds()
    replayed = 0
    with collector.paused(), _Prefetched(_approved(), own=committed) as qualifications:
        reads = (
            _Read(titles={pid: tuple(row) for pid, *row in rows}, qualifications=q, stale=stale)
            for rows, q in zip(
                _by_range(titles, ends), _by_range(qualifications, ends), strict=True
            )
        )
        for read in reads:
            plan = _plan(read, today)
            qualifications.settle()
            with transaction.atomic():
                replayed += _write(
                    plan, today=today, by=by, reason=reason, vanished=TermState.VOID, kinds=kinds
                )
    return replayed


#: The materialisation: what :func:`_materialise` writes from scratch.
_STATE: tuple[type[Model], ...] = (PlayerTitle, TitleTerm, TitleChange)


def _state_empty() -> bool:
    """On PostgreSQL: whether the materialisation is empty (no title row, term or history) and
    no webhook is subscribed — the case :func:`_materialise` writes."""
    if connection.vendor != "postgresql" or webhook_kinds():
        return False
    return not any(model._default_manager.exists() for model in _STATE)


def _take_empty_state() -> list[str] | None:
    """In a savepoint: lock the materialisation's tables until the transaction ends
    (``ACCESS EXCLUSIVE``: every titles writer locks a ``PlayerTitle`` row first, so none
    runs meanwhile), check that they are still empty and drop their secondary indexes and
    constraints (:func:`_drop_secondary`); returns the statements that recreate them.
    ``None``, with nothing locked or dropped, when they are not empty, when another
    transaction holds a lock on one of them (this never waits), or when this transaction
    has pending trigger events on one of them (PostgreSQL then refuses to alter it)."""
    quote = connection.ops.quote_name
    tables = [model._meta.db_table for model in _STATE]
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            names = ", ".join(map(quote, tables))
            cursor.execute(f"LOCK TABLE {names} IN ACCESS EXCLUSIVE MODE NOWAIT")
            if not _state_empty():
                return None
            return _drop_secondary(cursor, tables)
    except OperationalError:
        return None


def _materialise(
    rebuild: list[str], *, today: date, by: User | None, reason: str, chunk: int, committed: bool
) -> int:
    """The first materialisation, on PostgreSQL, with the tables locked, empty and stripped
    by :func:`_take_empty_state`: every player with approved qualifications gets a title
    row, terms and history, COPYed straight into the tables; then ``rebuild`` recreates
    the indexes and constraints. Writes the same rows, in the same order, as :func:`_write`
    does for players without a title row. Returns the number of players materialised.

    Pipelined: a second thread replays a chunk of players and builds its rows
    (:func:`_new_rows`, no query) while this one reads the next chunk and COPYs the one
    before, mostly waiting on PostgreSQL. When the ledger is ``committed`` (the caller is in
    no transaction) a third thread reads it ahead on a connection of its own
    (:class:`_Prefetched`), so that one backend makes the ledger's rows while another takes
    the COPYs."""
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    by_id = by.pk if by is not None else None
    materialised = 0
    with (
        collector.paused(),
        _ledger(committed) as ledger,
        _cursor() as cursor,
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="titles-replay") as worker,
    ):
        players = groupby(ledger, key=itemgetter(0))
        ahead: Future[_NewRows] | None = None
        while batch := [(pid, list(rows)) for pid, rows in islice(players, chunk)]:
            external = _external_ids([pid for pid, _ in batch])
            building = worker.submit(
                _new_rows, batch, external, today=today, now=now, by_id=by_id, reason=reason
            )
            if ahead is not None:
                _copy_new(cursor, ahead.result())
            ahead = building
            materialised += len(batch)
        if ahead is not None:
            _copy_new(cursor, ahead.result())
        for statement in rebuild:
            cursor.execute(statement)
    return materialised


def _ledger(committed: bool) -> AbstractContextManager[Iterable[Row]]:
    """The rows of :func:`_approved` for :func:`_materialise`: read ahead on a connection of
    their own when ``committed``, else the ORM's iterator on this connection (reading ahead
    on the connection that also takes the COPYs measured no gain)."""
    if committed:
        return _Prefetched(_approved(), own=True)
    return nullcontext(_approved().iterator(chunk_size=STREAM_CHUNK))


#: A chunk's rows for :func:`_copy_new`: history, terms, title rows.
_NewRows = tuple[list[Row], list[Row], list[Row]]


def _new_rows(
    batch: list[tuple[int, list[Row]]],
    external: dict[int, str],
    *,
    today: date,
    now: Any,
    by_id: int | None,
    reason: str,
) -> _NewRows:
    """Replay players who have no title row, terms or history yet, from their rows of
    :func:`_approved`, and build their history, term and title rows (no query)."""
    changes: list[Row] = []
    terms: list[Row] = []
    titles: list[Row] = []
    for pid, rows in batch:
        history = _replay(rows)
        for kind, on, source, valid_until, note in _changes(history, today):
            changes.append((pid, kind, on, valid_until, source, note, None, by_id, now, reason))
        shown = []
        for term in history.terms:
            sources = _json_list(term.sources)
            code = term_code(external[pid], term.start)
            terms.append(
                (pid, term.start, term.valid_until, sources, code, _term_state(term, today), now)
            )
            shown.append(_shown_term(term, sources, code))
        last = history.terms[-1].valid_until if history.terms else None
        status = _status(history, today)
        titles.append(
            (
                pid,
                status,
                last,
                history.lifetime_since,
                f"[{', '.join(shown)}]",
                fingerprint(history),
                now,
            )
        )
    return changes, terms, titles


def _copy_new(cursor: Any, rows: _NewRows) -> None:
    """COPY a chunk's history, terms and title rows (PostgreSQL), in that order."""
    changes, terms, titles = rows
    for model, columns, table_rows in (
        (TitleChange, _CHANGE_COLUMNS, changes),
        (TitleTerm, _TERM_COLUMNS, terms),
        (PlayerTitle, [("player_id", "int8"), *_TITLE_COLUMNS], titles),
    ):
        _copy(cursor, connection.ops.quote_name(model._meta.db_table), columns, table_rows)


def _drop_secondary(cursor: Any, tables: list[str]) -> list[str]:
    """Drop the tables' indexes other than primary keys, their unique constraints and the
    foreign keys among them; returns the statements that recreate them as they were (same
    names, same definitions, as PostgreSQL prints them): one sort per index, one query
    validating each foreign key.

    Foreign keys to other tables stay (dropping one would lock the other table, e.g. every
    player, until the transaction ends). Those declared ``INITIALLY DEFERRED`` are made
    immediate meanwhile — each COPY checks its rows as it ends, as PostgreSQL builds no
    index on a table with pending checks — and deferred again by the last statement."""
    cursor.execute(
        "SELECT conrelid::regclass::text, quote_ident(conname), contype, "
        "pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = ANY(%s::regclass[]) "
        "AND (contype IN ('u', 'x') OR contype = 'f' AND confrelid = ANY(%s::regclass[])) "
        "ORDER BY contype = 'f', conrelid, conname",
        [tables, tables],
    )
    constraints = cursor.fetchall()
    cursor.execute(
        "SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) FROM pg_index i "
        "WHERE indrelid = ANY(%s::regclass[]) AND NOT indisprimary AND NOT EXISTS ("
        "SELECT FROM pg_constraint c WHERE c.conindid = i.indexrelid "
        "AND c.conrelid = i.indrelid) ORDER BY 1",
        [tables],
    )
    indexes = cursor.fetchall()
    cursor.execute(
        "SELECT quote_ident(conname) FROM pg_constraint WHERE conrelid = ANY(%s::regclass[]) "
        "AND contype = 'f' AND condeferred AND NOT confrelid = ANY(%s::regclass[]) "
        "ORDER BY 1",
        [tables, tables],
    )
    deferred = ", ".join(name for (name,) in cursor.fetchall())
    recreate = [definition for _, definition in indexes]
    for table, name, kind, definition in constraints:
        cursor.execute(f"ALTER TABLE {table} DROP CONSTRAINT {name}")
        if kind != "f":
            recreate.append(f"ALTER TABLE {table} ADD CONSTRAINT {name} {definition}")
            continue
        recreate.append(f"ALTER TABLE {table} ADD CONSTRAINT {name} {definition} NOT VALID")
        recreate.append(f"ALTER TABLE {table} VALIDATE CONSTRAINT {name}")
    for name, _ in indexes:
        cursor.execute(f"DROP INDEX {name}")
    if deferred:
        cursor.execute(f"SET CONSTRAINTS {deferred} IMMEDIATE")
        recreate.append(f"SET CONSTRAINTS {deferred} DEFERRED")
    return recreate


# --- reading and replaying -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Read:
    """What a replay of some players starts from: their title rows as read (or locked),
    their approved qualifications (rows of :func:`_approved`), players with stale terms."""

    titles: dict[int, Locked]
    qualifications: list[Row]
    stale: set[int]


@dataclass(frozen=True, slots=True)
class _Plan:
    """A replay of some players: ``replays`` holds (player, history, status, fingerprint)
    of those whose materialisation may differ, in player id order."""

    titles: dict[int, Locked]
    replays: list[tuple[int, TitleHistory, str, int]]


def _fetch(query: QuerySet[Any, Any]) -> list[Row]:
    """All rows of a ``values_list`` query as the driver returns them (no per-row ORM)."""
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows: list[Row] = cursor.fetchall()
        return rows


def _by_range(rows: Iterable[Row], ends: list[int]) -> Iterator[list[Row]]:
    """The rows (ordered by the player id they start with) below each of ``ends`` in turn."""
    pending = iter(rows)
    row = next(pending, None)
    for end in ends:
        taken = []
        while row is not None and row[0] < end:
            taken.append(row)
            row = next(pending, None)
        yield taken


class _Prefetched:
    """The rows of a ``values_list`` query (:func:`_approved`), streamed in chunks of
    :data:`STREAM_CHUNK` from a server-side cursor.

    On PostgreSQL a helper thread fetches the next chunk while the caller replays the one
    before (PostgreSQL reads while Python replays), rows as the driver returns them (these
    columns need no ORM converter). With ``own`` — for rows that are committed: the caller
    is in no transaction — the helper reads on a connection of its own, in a transaction of
    its own, closed at the end (on the caller's connection in autocommit the cursor would be
    held, and PostgreSQL makes and stores the whole result of a held cursor before the
    first row goes out). Otherwise it is the same cursor on the caller's connection, so the
    same transaction and snapshot, uncommitted rows included; :meth:`settle` then waits for
    a fetch in flight, and the caller settles before it writes, so that nothing else runs
    on the connection meanwhile. Elsewhere than on PostgreSQL the ORM's iterator, with
    nothing ahead."""

    def __init__(self, query: QuerySet[Any, Any], *, own: bool) -> None:
        self._query = query
        self._cursor: Any = None
        self._own = own
        self._fetcher: ThreadPoolExecutor | None = None
        self._ahead: Future[list[Row]] | None = None

    def __enter__(self) -> "_Prefetched":
        if connection.vendor != "postgresql":
            return self
        self._fetcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="titles-fetch")
        if not self._own:
            self._cursor = connection.chunked_cursor()
            return self
        try:
            self._cursor = self._fetcher.submit(self._open).result()
        except BaseException:
            self._fetcher.submit(self._close).result()
            self._fetcher.shutdown(wait=True)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fetcher is None:
            return
        if self._own:
            self._fetcher.submit(self._close).result()
            self._fetcher.shutdown(wait=True)
        else:
            self._fetcher.shutdown(wait=True)
            self._cursor.close()

    @staticmethod
    def _open() -> Any:
        """On the helper thread: its connection, out of autocommit, and a cursor there."""
        connection.set_autocommit(False)
        return connection.chunked_cursor()

    def _close(self) -> None:
        """On the helper thread: the cursor, then the connection, transaction and all."""
        try:
            if self._cursor is not None:
                self._cursor.close()
        finally:
            connection.close()

    def _execute(self) -> None:
        self._cursor.execute(*self._query.query.sql_with_params())

    def _fetch(self) -> list[Row]:
        rows: list[Row] = self._cursor.cursor.fetchmany(STREAM_CHUNK)
        return rows

    def _execute_and_fetch(self) -> list[Row]:
        self._execute()
        return self._fetch()

    def __iter__(self) -> Iterator[Row]:
        if self._fetcher is None:
            yield from self._query.iterator(chunk_size=STREAM_CHUNK)
            return
        if self._own:
            self._ahead = self._fetcher.submit(self._execute_and_fetch)
        else:
            self._execute()
            self._ahead = self._fetcher.submit(self._fetch)
        while rows := self._ahead.result():
            self._ahead = self._fetcher.submit(self._fetch)
            yield from rows

    def settle(self) -> None:
        """Wait until no fetch is in flight."""
        if self._ahead is not None:
            futures_wait([self._ahead])


def _approved() -> QuerySet[Any, Any]:
    """Approved qualifications by player; in any order within a player (the replay orders
    them), which spares the database a sort on the date and the source."""
    return (
        Qualification.objects.filter(status=QualificationStatus.APPROVED)
        .order_by("player_id")
        .values_list("player_id", "source", "on", "confers", "requires_valid_master")
    )


def _stale(today: date, where: Q | None = None) -> set[int]:
    """Players with a term whose state is not today's: ended but ``current`` (the expiry
    sweep has not reached it) or ``lapsed`` but valid today."""
    rows = TitleTerm.objects.filter(
        Q(state=TermState.CURRENT, valid_until__lt=today)
        | Q(state=TermState.LAPSED, valid_until__gte=today)
    )
    if where is not None:
        rows = rows.filter(where)
    return {pid for (pid,) in _fetch(rows.values_list("player_id"))}


def _histories(rows: list[Row]) -> dict[int, TitleHistory]:
    return {player_id: _replay(group) for player_id, group in groupby(rows, key=itemgetter(0))}


def _replay(rows: Iterable[Row]) -> TitleHistory:
    """Replay one player's rows of :func:`_approved`. The rows skip the domain's argument
    checks (:func:`_make`): the ledger's constraints hold what they check — a date, a
    non-empty source, ``confers`` master or lifetime."""
    return replay(map(_make, rows))


#: A ``Qualification`` built straight from a row's fields after the player id, as
#: ``tuple.__new__``: ``_approved`` selects exactly those four fields, in their order.
_new_qualification = partial(tuple.__new__, Replayed)


def _make(row: Row) -> Replayed:
    return _new_qualification(row[1:])


def _plan(read: _Read, today: date) -> _Plan:
    """Replay the players read (no database). A player whose fingerprint and status match
    and whose terms' states are today's is unchanged (module docstring)."""
    histories = _histories(read.qualifications)
    replays = []
    for pid in sorted(read.titles.keys() | histories.keys()):
        history = histories.get(pid, _NO_HISTORY)
        status, digest = _status(history, today), fingerprint(history)
        if read.titles.get(pid) != (status, digest) or pid in read.stale:
            replays.append((pid, history, status, digest))
    return _Plan(titles=read.titles, replays=replays)


def _shown(ids: tuple[int, ...]) -> dict[int, Shown]:
    rows = PlayerTitle.objects.filter(player_id__in=ids).values_list(
        "player_id", "status", "valid_until", "lifetime_since", "terms"
    )
    return {pid: tuple(shown) for pid, *shown in rows}


def _external_ids(ids: list[int]) -> dict[int, str]:
    """The players' external ids (for term codes). On PostgreSQL as ``id = ANY(array)``: an
    IN list of thousands of parameters costs more to build and parse than to run."""
    if not ids:
        return {}
    if connection.vendor != "postgresql":
        return dict(_fetch(Player.objects.filter(pk__in=ids).values_list("pk", "external_id")))
    table = connection.ops.quote_name(Player._meta.db_table)
    pk = connection.ops.quote_name(Player._meta.pk.column)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {pk}, external_id FROM {table} WHERE {pk} = ANY(%s)",  # noqa: S608
            [ids],
        )
        return dict(cursor.fetchall())


def _terms_of(ids: tuple[int, ...]) -> dict[int, dict[date, Row]]:
    """(id, valid_until, sources, code, state) of each term, by player and start."""
    terms: dict[int, dict[date, Row]] = defaultdict(dict)
    rows = TitleTerm.objects.filter(player_id__in=ids).values_list(
        "player_id", "start", "id", "valid_until", "sources", "code", "state"
    )
    for pid, start, *term in rows:
        terms[pid][start] = tuple(term)
    return terms


def _live_changes_of(ids: tuple[int, ...]) -> dict[int, dict[ChangeKey, int]]:
    """The history entries of replay kinds that no later entry retracted."""
    live: dict[int, dict[ChangeKey, int]] = defaultdict(dict)
    rows = TitleChange.objects.filter(
        player_id__in=ids, kind__in=REPLAY_KINDS, retraction__isnull=True
    ).values_list("id", "player_id", "kind", "on", "source", "valid_until", "note")
    for change_id, pid, kind, on, source, valid_until, note in _fetch(rows):
        live[pid][(kind, on, source, valid_until, note)] = change_id
    return live


# --- the desired state ----------------------------------------------------------------------


def _status(history: TitleHistory, today: date) -> str:
    status = history.status_on(today)
    if status == TitleStatus.NONE and history.terms and history.terms[-1].valid_until < today:
        return TitleStatus.LAPSED.value
    return status


def _changes(history: TitleHistory, today: date) -> list[ChangeKey]:
    """The replay's changes, and the lapse of the last term once its day has come (earlier
    lapses are in the replay's changes)."""
    keys: list[ChangeKey] = list(history.changes)  # a Change is that tuple
    last = history.terms[-1] if history.terms else None
    if last is not None and last.valid_until < today:
        lapse = (LAPSED, last.valid_until + ONE_DAY, last.sources[-1], last.valid_until, "")
        keys.append(lapse)
        if len(keys) > 1 and keys[-2][1] > lapse[1]:
            keys.sort(key=itemgetter(1))  # stable: by day, then replay order
    return keys


def _term_state(term: Term, today: date) -> str:
    return TermState.CURRENT if term.valid_until >= today else TermState.LAPSED


_quote = json.encoder.encode_basestring_ascii


def _json_list(items: Iterable[str]) -> str:
    """JSON text of a list of strings (as ``json.dumps`` writes it, a few times faster)."""
    return f"[{', '.join(map(_quote, items))}]"


def _shown_term(term: Term, sources: str, code: str) -> str:
    """JSON text of a term as ``PlayerTitle.terms`` lists it; ``sources`` is JSON text."""
    return (
        f'{{"start": "{term.start.isoformat()}", '
        f'"valid_until": "{term.valid_until.isoformat()}", '
        f'"sources": {sources}, "code": {_quote(code)}}}'
    )


# --- writing the difference -----------------------------------------------------------------


def _write(
    plan: _Plan,
    *,
    today: date,
    by: User | None,
    reason: str,
    vanished: str,
    kinds: frozenset[str],
) -> int:
    """Write what differs between ``plan`` and the materialisation, and emit the webhooks of
    the history rows added whose kind is in ``kinds``; returns the number of players
    materialised.

    The title rows of the planned players that have one are locked (a no-op for rows
    :func:`titles_lock` locked); one that changed since it was read was materialised by
    its writer and is left alone. The others are compared with their terms and live
    history. A player with approved qualifications but no title row yet (a bulk import)
    has neither terms nor history: they get a row, and all of it, inserted; if another
    writer created the row meanwhile, that writer materialised the player and it is left
    alone.
    """
    locked = _lock_titles(tuple(pid for pid, *_ in plan.replays if pid in plan.titles))
    replays = [
        replayed
        for replayed in plan.replays
        if replayed[0] not in plan.titles or locked.get(replayed[0]) == plan.titles[replayed[0]]
    ]
    known = {pid: locked[pid] for pid, *_ in replays if pid in locked}
    ids = tuple(known)
    shown, old_terms, live = {}, {}, {}
    if ids:
        shown, old_terms, live = _shown(ids), _terms_of(ids), _live_changes_of(ids)
    external = _external_ids([pid for pid, history, _, _ in replays if history.terms])
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    by_id = by.pk if by is not None else None
    title_rows: list[Row] = []
    digest_rows: list[Row] = []
    new_titles: list[Row] = []
    new_terms: list[Row] = []
    term_rows: list[Row] = []
    new_changes: list[Row] = []
    newcomers: dict[int, tuple[list[Row], list[Row]]] = {}
    for pid, history, status, digest in replays:
        terms_out, changes_out = new_terms, new_changes
        if pid not in known:
            terms_out, changes_out = newcomers[pid] = ([], [])
        previous = old_terms.pop(pid, {})
        shown_terms = []
        for term in history.terms:
            sources = _json_list(term.sources)
            state = _term_state(term, today)
            row = previous.pop(term.start, None)
            if row is None:
                code = term_code(external[pid], term.start)
                terms_out.append((pid, term.start, term.valid_until, sources, code, state, now))
            else:
                term_id, valid_until, old_sources, code, old_state = row
                if (valid_until, old_sources, old_state) != (
                    term.valid_until,
                    list(term.sources),
                    state,
                ):
                    term_rows.append((term_id, term.valid_until, sources, state, now))
            shown_terms.append(_shown_term(term, sources, code))
        for term_id, valid_until, old_sources, _, old_state in previous.values():
            if old_state not in (TermState.VOID, TermState.REVOKED):
                term_rows.append((term_id, valid_until, _json_list(old_sources), vanished, now))

        last = history.terms[-1] if history.terms else None
        wanted = (
            status,
            last.valid_until if last is not None else None,
            history.lifetime_since,
            f"[{', '.join(shown_terms)}]",
        )
        if pid not in known:
            new_titles.append((pid, *wanted, digest, now))
        elif shown[pid] != (*wanted[:3], json.loads(wanted[3])):
            title_rows.append((pid, *wanted, digest, now))
        elif known[pid][1] != digest:
            digest_rows.append((pid, digest))

        want = _changes(history, today)
        old_changes = live.pop(pid, {})
        if old_changes:
            keep = set(want)
            retracted = ChangeKind.RETRACTED.value
            for key, change_id in sorted(old_changes.items(), key=itemgetter(1)):
                if key not in keep:
                    kind, on, source, valid_until, note = key
                    row = (pid, retracted, on, valid_until, source, note, change_id)
                    changes_out.append((*row, by_id, now, reason))
        changes_out.extend(
            (pid, kind, on, valid_until, source, note, None, by_id, now, reason)
            for kind, on, source, valid_until, note in want
            if (kind, on, source, valid_until, note) not in old_changes
        )

    with _cursor() as cursor:
        for pid in _insert_titles(cursor, new_titles):
            new_terms.extend(newcomers[pid][0])
            new_changes.extend(newcomers[pid][1])
        _update(cursor, PlayerTitle, "player_id", _TITLE_COLUMNS, title_rows)
        _update(cursor, PlayerTitle, "player_id", _FINGERPRINT_COLUMNS, digest_rows)
        _update(cursor, TitleTerm, "id", _TERM_UPDATE_COLUMNS, term_rows)
        _insert(cursor, TitleTerm, _TERM_COLUMNS, new_terms)
        if not any(row[1] in kinds for row in new_changes):
            _insert(cursor, TitleChange, _CHANGE_COLUMNS, new_changes)
            return len(plan.titles) + len(newcomers)
        change_ids = _insert(cursor, TitleChange, _CHANGE_COLUMNS, new_changes, ids=True)
    _emit(
        [
            (change_id, pid, kind, on, valid_until, source)
            for change_id, (pid, kind, on, valid_until, source, *_) in zip(
                change_ids, new_changes, strict=True
            )
        ],
        kinds,
    )
    return len(plan.titles) + len(newcomers)


# Bulk writes in SQL, through _cursor(). PostgreSQL: binary COPY — straight into the table
# for new rows, into a temporary table for one set-based UPDATE or INSERT … ON CONFLICT;
# elsewhere (SQLite): prepared statements row by row. Columns are (name, PostgreSQL type);
# JSON values are JSON text.

_FINGERPRINT_COLUMNS = [("fingerprint", "int8")]
_TITLE_COLUMNS = [
    ("status", "text"),
    ("valid_until", "date"),
    ("lifetime_since", "date"),
    ("terms", "jsonb"),
    *_FINGERPRINT_COLUMNS,
    ("updated_at", "timestamptz"),
]
_TERM_UPDATE_COLUMNS = [
    ("valid_until", "date"),
    ("sources", "jsonb"),
    ("state", "text"),
    ("updated_at", "timestamptz"),
]
_TERM_COLUMNS = [
    ("player_id", "int8"),
    ("start", "date"),
    ("valid_until", "date"),
    ("sources", "jsonb"),
    ("code", "text"),
    ("state", "text"),
    ("updated_at", "timestamptz"),
]
_CHANGE_COLUMNS = [
    ("player_id", "int8"),
    ("kind", "text"),
    ("on", "date"),
    ("valid_until", "date"),
    ("source", "text"),
    ("note", "text"),
    ("retracts_id", "int8"),
    ("by_id", "int8"),
    ("at", "timestamptz"),
    ("reason", "text"),
]


@contextmanager
def _cursor() -> Iterator[Any]:
    """A cursor for the bulk writes: psycopg's own on PostgreSQL (for COPY), else Django's."""
    with connection.cursor() as cursor:
        yield cursor.cursor if connection.vendor == "postgresql" else cursor


def _copy(cursor: Any, table: str, columns: list[tuple[str, str]], rows: list[Row]) -> None:
    """Binary COPY of ``rows`` into ``table`` (PostgreSQL); JSON values are JSON text."""
    names = ", ".join(connection.ops.quote_name(name) for name, _ in columns)
    set_json_dumps(str, cursor)  # the values are JSON text already
    with cursor.copy(f"COPY {table} ({names}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types([kind for _, kind in columns])
        write = copy.write_row
        for row in rows:
            write(row)


def _stage(cursor: Any, columns: list[tuple[str, str]], rows: list[Row]) -> str:
    """COPY ``rows`` into a new temporary table (PostgreSQL); returns its name. The caller
    drops it; it is dropped at commit anyway."""
    quote = connection.ops.quote_name
    cursor.execute(
        "CREATE TEMP TABLE titles_stage ("
        + ", ".join(f"{quote(name)} {kind}" for name, kind in columns)
        + ") ON COMMIT DROP"
    )
    _copy(cursor, "titles_stage", columns, rows)
    return "titles_stage"


def _insert_titles(cursor: Any, rows: list[Row]) -> list[int]:
    """Insert new ``PlayerTitle`` rows unless they exist; returns the players inserted."""
    if not rows:
        return []
    columns = [("player_id", "int8"), *_TITLE_COLUMNS]
    quote = connection.ops.quote_name
    table = quote(PlayerTitle._meta.db_table)
    names = ", ".join(quote(name) for name, _ in columns)
    insert = f"INSERT INTO {table} ({names}) "  # noqa: S608
    returning = " ON CONFLICT (player_id) DO NOTHING RETURNING player_id"
    if connection.vendor == "postgresql":
        stage = _stage(cursor, columns, rows)
        cursor.execute(f"{insert}SELECT {names} FROM {stage}{returning}")  # noqa: S608
        inserted = sorted(pid for (pid,) in cursor.fetchall())
        cursor.execute(f"DROP TABLE {stage}")
        return inserted
    inserted = []
    marks = ", ".join(["%s"] * len(columns))
    for row in rows:
        cursor.execute(f"{insert}VALUES ({marks}){returning}", row)
        inserted.extend(pid for (pid,) in cursor.fetchall())
    return inserted


def _update(
    cursor: Any, model: type[Model], key: str, columns: list[tuple[str, str]], rows: list[Row]
) -> None:
    """``rows`` are ``(key, *values)`` in the order of ``columns``."""
    if not rows:
        return
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    if connection.vendor == "postgresql":
        stage = _stage(cursor, [(key, "int8"), *columns], rows)
        assign = ", ".join(f"{quote(name)} = s.{quote(name)}" for name, _ in columns)
        cursor.execute(
            f"UPDATE {table} AS t SET {assign} FROM {stage} AS s "  # noqa: S608
            f"WHERE t.{quote(key)} = s.{quote(key)}"
        )
        cursor.execute(f"DROP TABLE {stage}")
        return
    assign = ", ".join(f"{quote(name)} = %s" for name, _ in columns)
    cursor.executemany(
        f"UPDATE {table} SET {assign} WHERE {quote(key)} = %s",  # noqa: S608
        [(*row[1:], row[0]) for row in rows],
    )


def _insert(
    cursor: Any,
    model: type[Model],
    columns: list[tuple[str, str]],
    rows: list[Row],
    *,
    ids: bool = False,
) -> list[int]:
    """Insert ``rows``; with ``ids``, returns their new ids, in order and ascending (taken
    from the sequence first on PostgreSQL), else nothing."""
    if not rows:
        return []
    table = connection.ops.quote_name(model._meta.db_table)
    if connection.vendor == "postgresql":
        if not ids:
            _copy(cursor, table, columns, rows)
            return []
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [model._meta.db_table, len(rows)],
        )
        new = sorted(new_id for (new_id,) in cursor.fetchall())
        _copy(
            cursor,
            table,
            [("id", "int8"), *columns],
            [(new_id, *row) for new_id, row in zip(new, rows, strict=True)],
        )
        return new
    names = ", ".join(connection.ops.quote_name(name) for name, _ in columns)
    marks = ", ".join(["%s"] * len(columns))
    insert = f"INSERT INTO {table} ({names}) VALUES ({marks})"  # noqa: S608
    if not ids:
        cursor.executemany(insert, rows)
        return []
    new = []
    for row in rows:
        cursor.execute(insert, row)
        new.append(cursor.lastrowid)
    return new


# --- partner webhooks -----------------------------------------------------------------------

#: The webhook event type each history kind is sent as; the other kinds send none.
WEBHOOK_OF_KIND: dict[str, str] = {
    ChangeKind.GRANTED: EventType.TITLE_GRANTED,
    ChangeKind.LIFETIME: EventType.TITLE_GRANTED,
    ChangeKind.EXTENDED: EventType.TITLE_EXTENDED,
    ChangeKind.LAPSED: EventType.TITLE_LAPSED,
    ChangeKind.REVOKED: EventType.TITLE_REVOKED,
}
_TERM_KINDS = (ChangeKind.GRANTED, ChangeKind.EXTENDED, ChangeKind.LAPSED)

#: A history row to announce: (id, player id, kind, on, valid_until, source).
Announced = tuple[int, int, str, date, date | None, str]


def webhook_kinds() -> frozenset[str]:
    """The history kinds whose webhook some active subscription wants (one query)."""
    wanted = list(Subscription.objects.filter(active=True).values_list("events", flat=True))
    return frozenset(
        kind for kind, event in WEBHOOK_OF_KIND.items() if any(event in w for w in wanted)
    )


def titles_webhooks_emit(changes: Iterable[TitleChange]) -> int:
    """Emit the webhooks of history rows a service wrote itself (saved, so with an id), in
    its transaction; returns how many rows were announced. Call it for a ``revoked`` row
    before the recompute that follows: its payload shows the titles the sanction takes."""
    rows = [(c.pk, c.player_id, c.kind, c.on, c.valid_until, c.source) for c in changes]
    return _emit(rows, webhook_kinds()) if rows else 0


def _emit(changes: list[Announced], kinds: frozenset[str]) -> int:
    """One ``webhook_emit`` per change of ``kinds``, with public data only. The payload:
    ``change_id``, ``on``, ``player`` (``external_id``, ``name``), ``title`` (``master``,
    ``lifetime``; for a revocation the status it took), ``valid_until`` (the term's last
    day; for a revocation the latest term's) and ``sources`` (the term's qualifications
    up to this change; Lifetime: its qualification; revocation: its case)."""
    changes = [change for change in changes if change[2] in kinds]
    if not changes:
        return 0
    pids = sorted({change[1] for change in changes})
    players = {
        pid: {"external_id": external_id, "name": name}
        for pid, external_id, name in Player.objects.filter(pk__in=pids).values_list(
            "pk", "external_id", "name"
        )
    }
    upto: dict[tuple[int, str], list[str]] = {}
    term_pids = sorted({pid for _, pid, kind, *_ in changes if kind in _TERM_KINDS})
    if term_pids:
        terms = TitleTerm.objects.filter(
            player_id__in=term_pids, state__in=(TermState.CURRENT, TermState.LAPSED)
        ).values_list("player_id", "sources")
        for pid, sources in terms:
            for index, source in enumerate(sources):
                upto[(pid, source)] = sources[: index + 1]
    held: dict[int, tuple[str, date | None]] = {}
    revoked = sorted({pid for _, pid, kind, *_ in changes if kind == ChangeKind.REVOKED})
    if revoked:
        rows = PlayerTitle.objects.filter(player_id__in=revoked)
        held = {
            pid: (status, until)
            for pid, status, until in rows.values_list("player_id", "status", "valid_until")
        }
    for change_id, pid, kind, on, valid_until, source in changes:
        title, sources = TitleStatus.MASTER.value, upto.get((pid, source), [source])
        if kind == ChangeKind.LIFETIME:
            title = TitleStatus.LIFETIME.value
        elif kind == ChangeKind.REVOKED:
            title, valid_until = held.get(pid, (TitleStatus.NONE.value, None))
            sources = [source]
        webhook_emit(
            event_type=WEBHOOK_OF_KIND[kind],
            payload={
                "change_id": change_id,
                "on": on.isoformat(),
                "player": players[pid],
                "title": title,
                "valid_until": valid_until.isoformat() if valid_until is not None else None,
                "sources": sources,
            },
        )
    return len(changes)
