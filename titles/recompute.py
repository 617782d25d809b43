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

:func:`titles_recompute_all` replays every player in ranges of player ids (one query of
approved qualifications per range, ordered by player) through the same code, and gives
players who have approved qualifications but no title row yet (a bulk import) one.
"""

import gc
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, timedelta
from itertools import groupby
from operator import itemgetter
from typing import Any

from django.db import connection, transaction
from django.db.models import Max, Min, Model, Q
from django.utils import timezone

from accounts.models import Player, User
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

CHUNK = 5000

#: (kind, on, source, valid_until, note): what makes two history entries the same change.
ChangeKey = tuple[str, date, str, date | None, str]
#: A materialised ``PlayerTitle``: (status, valid_until, lifetime_since, terms).
Current = tuple[str, date | None, date | None, list[dict[str, Any]]]

_NO_HISTORY = replay(())
ONE_DAY = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class _Players:
    """The players a recompute covers: a list of ids, or the id range ``[low, high)``."""

    ids: tuple[int, ...] = ()
    low: int = 0
    high: int = 0

    def q(self, field: str = "player_id") -> Q:
        if self.ids:
            return Q(**{f"{field}__in": self.ids})
        return Q(**{f"{field}__gte": self.low, f"{field}__lt": self.high})


_CURRENT = ("status", "valid_until", "lifetime_since", "terms")


def tour_today() -> date:
    """Today in the tour's time zone (Asia/Shanghai)."""
    return tour_day(timezone.now())


def titles_lock(player_ids: Iterable[int]) -> dict[int, Current]:
    """Lock the players' ``PlayerTitle`` rows, creating the missing ones; returns their
    current materialisation, to pass to :func:`titles_recompute`.

    Call inside a transaction, before touching the players' qualifications: it is the
    first lock every titles write takes. Existing rows are locked first, in player id
    order, then missing rows are inserted and locked in player id order — the same two
    phases as :func:`titles_recompute_all`, so no two writers deadlock.
    """
    ids = sorted(set(player_ids))
    locked = _lock_titles(_Players(ids=tuple(ids)))
    missing = [pid for pid in ids if pid not in locked]
    if missing:
        PlayerTitle.objects.bulk_create(
            [PlayerTitle(player_id=pid) for pid in missing], ignore_conflicts=True
        )
        locked.update(_lock_titles(_Players(ids=tuple(missing))))
    return locked


def _lock_titles(players: _Players) -> dict[int, Current]:
    rows = (
        PlayerTitle.objects.select_for_update()
        .filter(players.q())
        .order_by("player_id")
        .values_list("player_id", *_CURRENT)
    )
    return {pid: tuple(current) for pid, *current in rows}


def player_history(player_id: int) -> TitleHistory:
    """Replay one player's approved, non-voided qualifications (no lock, read only)."""
    return _histories(_Players(ids=(player_id,))).get(player_id, _NO_HISTORY)


def titles_recompute(
    *,
    titles: dict[int, Current],
    by: User | None,
    reason: str,
    vanished: str = TermState.VOID,
    today: date | None = None,
) -> None:
    """Replay the players of ``titles`` (as locked by :func:`titles_lock`) and write the
    difference. ``vanished`` is the state given to terms the replay no longer produces:
    ``void``, or ``revoked`` when a sanction caused it."""
    _materialise(
        players=_Players(ids=tuple(sorted(titles))),
        current=titles,
        today=today or tour_today(),
        by=by,
        reason=reason,
        vanished=vanished,
    )


def titles_recompute_all(
    *, by: User | None = None, reason: str = "recompute", chunk: int = CHUNK
) -> int:
    """Replay every player with qualifications or titles; returns the number replayed.

    Players are taken in ranges of player ids, each in its own transaction: lock its title
    rows, load its approved qualifications with one query ordered by player, replay, write
    the differences in bulk. Idempotent: a second run writes nothing.
    """
    today = tour_today()
    bounds = [
        model.objects.aggregate(low=Min("player_id"), high=Max("player_id"))
        for model in (Qualification, PlayerTitle)
    ]
    lows = [b["low"] for b in bounds if b["low"] is not None]
    if not lows:
        return 0
    last = max(b["high"] for b in bounds if b["high"] is not None)
    replayed = 0
    with _gc_paused():
        for low in range(min(lows), last + 1, chunk):
            players = _Players(low=low, high=low + chunk)
            with transaction.atomic():
                replayed += _materialise(
                    players=players,
                    current=_lock_titles(players),
                    today=today,
                    by=by,
                    reason=reason,
                    vanished=TermState.VOID,
                )
    return replayed


@contextmanager
def _gc_paused() -> Iterator[None]:
    """The replay allocates millions of small acyclic objects: pause the cyclic garbage
    collector meanwhile (it would otherwise rescan them again and again)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# --- loading and replaying -----------------------------------------------------------------


def _histories(players: _Players) -> dict[int, TitleHistory]:
    rows = (
        Qualification.objects.filter(players.q(), status=QualificationStatus.APPROVED)
        .order_by("player_id", "on", "source")
        .values_list("player_id", "source", "on", "confers", "requires_valid_master")
    )
    return {
        player_id: replay(
            Replayed(source=source, on=on, confers=confers, requires_valid_master=requires)
            for _, source, on, confers, requires in group
        )
        for player_id, group in groupby(rows, key=itemgetter(0))
    }


def _terms_of(players: _Players) -> dict[int, dict[date, tuple[Any, ...]]]:
    """(id, valid_until, sources, code, state) of each term, by player and start."""
    terms: dict[int, dict[date, tuple[Any, ...]]] = defaultdict(dict)
    rows = TitleTerm.objects.filter(players.q()).values_list(
        "player_id", "start", "id", "valid_until", "sources", "code", "state"
    )
    for pid, start, *term in rows:
        terms[pid][start] = tuple(term)
    return terms


def _live_changes_of(players: _Players) -> dict[int, dict[ChangeKey, int]]:
    """The history entries of replay kinds that no later entry retracted."""
    live: dict[int, dict[ChangeKey, int]] = defaultdict(dict)
    rows = TitleChange.objects.filter(
        players.q(), kind__in=REPLAY_KINDS, retraction__isnull=True
    ).values_list("id", "player_id", "kind", "on", "source", "valid_until", "note")
    for change_id, pid, kind, on, source, valid_until, note in rows:
        live[pid][(kind, on, source, valid_until, note)] = change_id
    return live


# --- the desired state ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Desired:
    status: str
    valid_until: date | None
    lifetime_since: date | None
    terms: tuple[Term, ...]
    changes: tuple[ChangeKey, ...]


def _desired(history: TitleHistory, today: date) -> _Desired:
    last = history.terms[-1] if history.terms else None
    keys = [(c.kind, c.on, c.source, c.valid_until, c.reason) for c in history.changes]
    status = history.status_on(today)
    if status == TitleStatus.NONE and last is not None and last.valid_until < today:
        status = TitleStatus.LAPSED.value
    if last is not None and last.valid_until < today:
        # The lapse of the last term once its day has come (earlier lapses are in changes).
        lapse = (LAPSED, last.valid_until + ONE_DAY, last.sources[-1], last.valid_until, "")
        keys.append(lapse)
        if len(keys) > 1 and keys[-2][1] > lapse[1]:
            keys.sort(key=itemgetter(1))  # stable: by day, then replay order
    return _Desired(
        status=status,
        valid_until=last.valid_until if last is not None else None,
        lifetime_since=history.lifetime_since,
        terms=history.terms,
        changes=tuple(keys),
    )


def _term_state(term: Term, today: date) -> str:
    return TermState.CURRENT if term.valid_until >= today else TermState.LAPSED


# --- writing the difference -----------------------------------------------------------------


def _materialise(
    *,
    players: _Players,
    current: dict[int, Current],
    today: date,
    by: User | None,
    reason: str,
    vanished: str,
) -> int:
    """Replay ``players`` and write what differs from their materialisation; returns the
    number of players materialised.

    ``current`` holds the locked ``PlayerTitle`` rows. A player of an id range with
    approved qualifications but no row yet (a bulk import) gets one inserted; if another
    writer created it meanwhile, that writer materialised it and it is left alone.
    """
    histories = _histories(players)
    old_terms = _terms_of(players)
    live = _live_changes_of(players)
    external: dict[int, str] = {}
    if any(history.terms for history in histories.values()):
        external = dict(Player.objects.filter(players.q("pk")).values_list("pk", "external_id"))
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    title_rows: list[tuple[Any, ...]] = []
    new_titles: list[tuple[Any, ...]] = []
    new_terms: list[tuple[Any, ...]] = []
    term_rows: list[tuple[Any, ...]] = []
    new_changes: list[tuple[Any, ...]] = []
    newcomers: dict[int, tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]] = {}
    for pid in sorted(current.keys() | histories.keys()):
        want = _desired(histories.get(pid, _NO_HISTORY), today)
        terms_out, changes_out = new_terms, new_changes
        if pid not in current:
            terms_out, changes_out = newcomers[pid] = ([], [])
        previous = old_terms.pop(pid, {})
        terms_json = []
        for term in want.terms:
            sources = list(term.sources)
            state = _term_state(term, today)
            row = previous.pop(term.start, None)
            if row is None:
                code = term_code(external[pid], term.start)
                terms_out.append((pid, term.start, term.valid_until, sources, code, state, now))
            else:
                term_id, valid_until, old_sources, code, old_state = row
                if (valid_until, old_sources, old_state) != (term.valid_until, sources, state):
                    term_rows.append((term_id, term.valid_until, sources, state, now))
            terms_json.append(
                {
                    "start": term.start.isoformat(),
                    "valid_until": term.valid_until.isoformat(),
                    "sources": sources,
                    "code": code,
                }
            )
        for term_id, valid_until, old_sources, _, old_state in previous.values():
            if old_state not in (TermState.VOID, TermState.REVOKED):
                term_rows.append((term_id, valid_until, old_sources, vanished, now))

        wanted = (want.status, want.valid_until, want.lifetime_since, terms_json)
        if pid not in current:
            new_titles.append((pid, *wanted, now))
        elif current[pid] != wanted:
            title_rows.append((pid, *wanted, now))

        old_changes = live.pop(pid, {})
        keep = set(want.changes)
        for key, change_id in sorted(old_changes.items(), key=itemgetter(1)):
            if key not in keep:
                kind, on, source, valid_until, note = key
                changes_out.append(
                    (pid, ChangeKind.RETRACTED.value, on, valid_until, source, note, change_id)
                )
        for kind, on, source, valid_until, note in want.changes:
            if (kind, on, source, valid_until, note) not in old_changes:
                changes_out.append((pid, kind, on, valid_until, source, note, None))

    for pid in _insert_titles(new_titles):
        terms_out, changes_out = newcomers[pid]
        new_terms.extend(terms_out)
        new_changes.extend(changes_out)

    by_id = by.pk if by is not None else None
    _update(PlayerTitle, "player_id", _TITLE_COLUMNS, title_rows)
    _update(TitleTerm, "id", _TERM_UPDATE_COLUMNS, term_rows)
    _insert(TitleTerm, _TERM_COLUMNS, new_terms)
    _insert(TitleChange, _CHANGE_COLUMNS, [(*row, by_id, now, reason) for row in new_changes])
    return len(current) + len(new_titles)


# Bulk writes in SQL. PostgreSQL: binary COPY — straight into the table for new rows, into a
# temporary table for one set-based UPDATE or INSERT … ON CONFLICT; elsewhere (SQLite):
# prepared statements row by row. Columns are (name, PostgreSQL type); JSON values are
# Python objects.

_TITLE_COLUMNS = [
    ("status", "text"),
    ("valid_until", "date"),
    ("lifetime_since", "date"),
    ("terms", "jsonb"),
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


def _as_text(columns: list[tuple[str, str]], rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Rows with their JSON values dumped to text (for prepared statements)."""
    json_at = {i for i, (_, kind) in enumerate(columns) if kind == "jsonb"}
    return [tuple(json.dumps(v) if i in json_at else v for i, v in enumerate(row)) for row in rows]


def _copy(
    cursor: Any, table: str, columns: list[tuple[str, str]], rows: list[tuple[Any, ...]]
) -> None:
    """Binary COPY of ``rows`` into ``table`` (PostgreSQL)."""
    names = ", ".join(connection.ops.quote_name(name) for name, _ in columns)
    with cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types([kind for _, kind in columns])
        for row in rows:
            copy.write_row(row)


def _stage(cursor: Any, columns: list[tuple[str, str]], rows: list[tuple[Any, ...]]) -> str:
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


def _insert_titles(rows: list[tuple[Any, ...]]) -> list[int]:
    """Insert new ``PlayerTitle`` rows unless they exist; returns the players inserted."""
    if not rows:
        return []
    columns = [("player_id", "int8"), *_TITLE_COLUMNS]
    quote = connection.ops.quote_name
    table = quote(PlayerTitle._meta.db_table)
    names = ", ".join(quote(name) for name, _ in columns)
    insert = f"INSERT INTO {table} ({names}) "  # noqa: S608
    returning = " ON CONFLICT (player_id) DO NOTHING RETURNING player_id"
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            stage = _stage(cursor, columns, rows)
            cursor.execute(f"{insert}SELECT {names} FROM {stage}{returning}")  # noqa: S608
            inserted = sorted(pid for (pid,) in cursor.fetchall())
            cursor.execute(f"DROP TABLE {stage}")
            return inserted
        inserted = []
        marks = ", ".join(["%s"] * len(columns))
        for row in _as_text(columns, rows):
            cursor.execute(f"{insert}VALUES ({marks}){returning}", row)
            inserted.extend(pid for (pid,) in cursor.fetchall())
        return inserted


def _update(
    model: type[Model], key: str, columns: list[tuple[str, str]], rows: list[tuple[Any, ...]]
) -> None:
    """``rows`` are ``(key, *values)`` in the order of ``columns``."""
    if not rows:
        return
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    with connection.cursor() as cursor:
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
            [(*row[1:], row[0]) for row in _as_text([(key, "int8"), *columns], rows)],
        )


def _insert(
    model: type[Model], columns: list[tuple[str, str]], rows: list[tuple[Any, ...]]
) -> None:
    if not rows:
        return
    table = connection.ops.quote_name(model._meta.db_table)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            _copy(cursor, table, columns, rows)
            return
        names = ", ".join(connection.ops.quote_name(name) for name, _ in columns)
        marks = ", ".join(["%s"] * len(columns))
        cursor.executemany(
            f"INSERT INTO {table} ({names}) VALUES ({marks})",  # noqa: S608
            _as_text(columns, rows),
        )
