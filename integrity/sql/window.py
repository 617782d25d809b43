"""The audit window in PostgreSQL (SPEC §7): which seats an audit reads, the transaction its
statements run in, and the plain seat loads.

* **The window's seats** — non-voided singles seats that ended in the window, of the event
  audited or, for a window audit, of the events whose window overlaps it (so the per-event
  index is used): :func:`audit_rows` as a query, :func:`window_sql` as a condition for the
  raw statements of this package. Doubles games are left out: a doubles team queues
  together by definition.
* **The audit transaction** — :func:`audit_transaction`: at most
  ``INTEGRITY_AUDIT_PARALLEL_WORKERS`` parallel workers a statement, and the settings the
  statements change with ``SET LOCAL`` restored at the end.
* **Streaming** — :func:`streamed`: rows as the driver returns them, without the ORM's
  per-row converters.
* **Loads** — :func:`audit_rows` (every seat row, what the pure detectors of
  :mod:`integrity.domain.audit` read), :func:`seats_of` (the seats of the players boosting
  can test, each with its table's players, for
  :func:`~integrity.domain.audit.seat_residuals`) and :func:`tables_of` (the tables of the
  players point flow can test, as table rows).
"""

from collections.abc import Collection, Generator, Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.db import connection, transaction
from django.db.models import BigIntegerField, Func, IntegerField

from core.domain.clock import TOUR_TZ
from integrity.domain.audit import PlayerSeat, SeatRow, TableRow
from tournaments.models import Event, Game, Seat

_T = TypeVar("_T")

#: Memory for the sorts of the seats by game and of the pairs (six per four-seat game), and
#: for the window's summary: in memory up to ~1M games.
WORK_MEMORY = "256MB"


class _HourBucket(Func):
    """:func:`integrity.domain.data.hour_bucket` in PostgreSQL: whole hours since
    1970-01-01 00:00 on the tour's clock."""

    template = (
        f"floor(extract(epoch from (%(expressions)s AT TIME ZONE '{TOUR_TZ.key}')) / 3600)::bigint"
    )
    output_field = BigIntegerField()


class _CardCount(Func):
    """The number of cards of a stored hand (its codes joined by spaces; ``''`` when
    empty)."""

    template = "cardinality(string_to_array(%(expressions)s, ' '))"
    output_field = IntegerField()


def audit_rows(
    *, window_start: datetime, window_end: datetime, event: Event | None = None
) -> Generator[SeatRow, None, None]:
    """The window's seats (module docstring) as seat rows, in (ended_at, game, seat) order,
    streamed (:func:`streamed`). The hour bucket is computed by PostgreSQL (parsing a
    timestamp per row in Python costs more than the rest of the row)."""
    seats = Seat.objects.filter(
        ended_at__gte=window_start,
        ended_at__lte=window_end,
        voided=False,
        game__mode=Game.Mode.SINGLES,
    )
    if event is not None:
        seats = seats.filter(event=event)
    else:
        overlapping = Event.objects.filter(starts_at__lte=window_end, ends_at__gte=window_start)
        seats = seats.filter(event__in=overlapping)
    seats = seats.order_by("ended_at", "game_id", "seat")
    rows = seats.annotate(hour=_HourBucket("ended_at"), cards=_CardCount("hand")).values_list(
        "game__record_id",
        "hour",
        "player__external_id",
        "hand_points",
        "score",
        "ip",
        "device",
        "cards",
    )
    return streamed(*rows.query.sql_with_params())


def streamed(
    sql: str, params: Sequence[Any] | Mapping[str, Any]
) -> Generator[tuple[Any, ...], None, None]:
    """The rows of a query as the driver returns them (the seat columns need none of the
    ORM's per-row converters), streamed in chunks of ``INTEGRITY_CHUNK_SIZE`` rows:
    PostgreSQL sends them as it produces them, without waiting to be asked for each chunk,
    from a plan that may use parallel workers (a server-side cursor never gets one, and
    outside a transaction it is held: the whole result is made and stored before the first
    row goes out). The connection serves nothing else until the last row is read. A stream
    left early is cancelled, which aborts the transaction it runs in: so it runs in one of
    its own (a savepoint in a caller's)."""
    with transaction.atomic(), connection.cursor() as cursor:
        yield from cursor.cursor.stream(sql, params, size=settings.INTEGRITY_CHUNK_SIZE)


def fetched(cursor: Any) -> Iterator[tuple[Any, ...]]:
    """The rows of an executed (server-side) cursor, fetched ``INTEGRITY_CHUNK_SIZE`` at a
    time."""
    while rows := cursor.fetchmany(settings.INTEGRITY_CHUNK_SIZE):
        yield from rows


def finished(value: _T) -> Future[_T]:
    """``value`` as a finished future (for a count that waits on one)."""
    future: Future[_T] = Future()
    future.set_result(value)
    return future


# --- the window's seats as a condition -------------------------------------------------------

#: The seats :func:`audit_rows` selects, as a condition on the ``tournaments_seat`` rows named
#: ``{s}`` (``{voided}``: ``NOT {s}.voided``; ``{events}``: :data:`_EVENT` or
#: :data:`_OVERLAPPING`).
_WINDOW_SEATS = """
    {s}.ended_at >= %(start)s AND {s}.ended_at <= %(end)s AND {voided}
    AND {s}.event_id IN ({events})
    AND NOT EXISTS (
        SELECT 1 FROM tournaments_game d WHERE d.id = {s}.game_id AND d.mode <> 'singles'
    )
"""
_EVENT = "%(event)s"
_OVERLAPPING = (
    "SELECT id FROM tournaments_event WHERE starts_at <= %(end)s AND ends_at >= %(start)s"
)


def window_sql(
    window_start: datetime,
    window_end: datetime,
    event: Event | None,
    seat: str = "s",
    *,
    voided: bool = False,
) -> tuple[str, dict[str, Any]]:
    """:data:`_WINDOW_SEATS` for an event audit or a window audit, on the seats named
    ``seat``, and its values; with ``voided``, the window's voided seats instead."""
    values = {
        "event": event.pk if event is not None else None,
        "start": window_start,
        "end": window_end,
    }
    events = _EVENT if event is not None else _OVERLAPPING
    kept = f"{seat}.voided" if voided else f"NOT {seat}.voided"
    return _WINDOW_SEATS.format(s=seat, voided=kept, events=events), values


# --- the audit transaction -------------------------------------------------------------------

#: Settings the statements of this package change with ``SET LOCAL``; their values are
#: restored at the end (:func:`audit_transaction`).
_SETTINGS = (
    "jit",
    "default_statistics_target",
    "work_mem",
    "enable_hashagg",
    "enable_indexscan",
    "max_parallel_workers_per_gather",
)
_SAVE_SQL = "SELECT " + ", ".join(f"current_setting('{name}')" for name in _SETTINGS)
_RESTORE_SQL = "SELECT " + ", ".join("set_config(%s, %s, true)" for _ in _SETTINGS)


@contextmanager
def audit_transaction() -> Iterator[None]:
    """A transaction (a savepoint in a caller's) for the audit's PostgreSQL work: its
    statements get at most ``INTEGRITY_AUDIT_PARALLEL_WORKERS`` parallel workers each, and
    :data:`_SETTINGS` are restored at the end, so ``SET LOCAL`` within leaves a caller's
    enclosing transaction its own values (on an error the rollback undoes them)."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(_SAVE_SQL)
            saved = cursor.fetchone()
            cursor.execute(
                "SELECT set_config('max_parallel_workers_per_gather', %s, true)",
                [str(settings.INTEGRITY_AUDIT_PARALLEL_WORKERS)],
            )
        yield
        with connection.cursor() as cursor:
            cursor.execute(
                _RESTORE_SQL, [item for pair in zip(_SETTINGS, saved, strict=True) for item in pair]
            )


# --- the loads of the players and tables the detectors can test ------------------------------

#: The table rows (:data:`~integrity.domain.audit.TableRow`: :func:`audit_rows`' columns
#: without ip and device, which the pair tests never read) of the window's games with any of
#: ``%(players)s`` at the table, in (ended_at, game, seat) order. The window's condition is
#: on the players' seats ``c`` only: a game's seats repeat its event and end, and its mode
#: is the game's (so the table's seats ``s`` need only be kept, not voided).
_TABLES_OF_SQL = """
    SELECT g.record_id,
           floor(extract(epoch from (s.ended_at AT TIME ZONE %(tz)s)) / 3600)::bigint,
           x.external_id, s.hand_points, s.score,
           cardinality(string_to_array(s.hand, ' '))
    FROM (
        SELECT DISTINCT c.game_id FROM tournaments_seat c
        WHERE {mine} AND c.player_id = ANY(%(players)s::bigint[])
    ) t
    JOIN tournaments_game g ON g.id = t.game_id
    JOIN tournaments_seat s ON s.game_id = t.game_id AND NOT s.voided
    JOIN accounts_player x ON x.id = s.player_id
    ORDER BY s.ended_at, s.game_id, s.seat
"""

#: The seats of ``%(players)s`` at the window's tables as
#: :data:`~integrity.domain.audit.PlayerSeat` rows, each player's in (ended_at, game) order:
#: with the ids of the table's players in seat order (the window's seats of the game).
_SEATS_OF_SQL = """
    SELECT g.record_id,
           floor(extract(epoch from (s.ended_at AT TIME ZONE %(tz)s)) / 3600)::bigint,
           x.external_id, s.score, s.ip, s.device,
           ARRAY(
               SELECT o.player_id FROM tournaments_seat o
               WHERE o.game_id = s.game_id AND NOT o.voided ORDER BY o.seat
           ),
           s.player_id
    FROM tournaments_seat s
    JOIN tournaments_game g ON g.id = s.game_id
    JOIN accounts_player x ON x.id = s.player_id
    WHERE {window} AND s.player_id = ANY(%(players)s::bigint[])
        AND s.game_id <> ALL(%(lone)s::bigint[])
    ORDER BY s.player_id, s.ended_at, s.game_id
"""


def seats_of(
    players: Collection[int],
    lone: Collection[int],
    *,
    window_start: datetime,
    window_end: datetime,
    event: Event | None,
) -> Generator[PlayerSeat, None, None]:
    """The :data:`~integrity.domain.audit.PlayerSeat` rows of ``players`` (ids: those
    boosting can test) at the window's tables (games ``lone`` left out), each player's in
    play order, streamed (:func:`streamed`)."""
    window, values = window_sql(window_start, window_end, event)
    values.update(tz=TOUR_TZ.key, players=list(players), lone=list(lone))
    return streamed(_SEATS_OF_SQL.format(window=window), values)


def history_seats_of(
    players: Collection[int], *, window_start: datetime, days: int
) -> Generator[PlayerSeat, None, None]:
    """The :data:`~integrity.domain.audit.PlayerSeat` rows of ``players`` in the ``days``
    before ``window_start`` (boosting's history: every event's singles games, voided seats
    and games left with fewer than two seats out), each player's in play order, streamed."""
    start = window_start - timedelta(days=days)
    window, values = window_sql(start, window_start - timedelta(microseconds=1), None)
    values.update(tz=TOUR_TZ.key, players=list(players), lone=[])
    rows = streamed(_SEATS_OF_SQL.format(window=window), values)
    try:
        yield from (row for row in rows if len(row[6]) >= 2)
    finally:
        rows.close()


def tables_of(
    players: Collection[int],
    *,
    window_start: datetime,
    window_end: datetime,
    event: Event | None = None,
) -> Generator[TableRow, None, None]:
    """The table rows (:data:`_TABLES_OF_SQL`) of the window's games that any of ``players``
    (ids) sat at, streamed (:func:`streamed`), sorted in memory (``WORK_MEMORY``)."""
    mine, values = window_sql(window_start, window_end, event, "c")
    values.update(tz=TOUR_TZ.key, players=sorted(players))
    with audit_transaction():
        with connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL work_mem = '{WORK_MEMORY}'")
        yield from streamed(_TABLES_OF_SQL.format(mine=mine), values)
