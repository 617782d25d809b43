"""Audits (SPEC §7: "audits after each event closes and periodically over the season produce
flags ... flags on related players group into cases").

:func:`audit_run` audits one window under a ``key``:

1. the run row is created or reset (``attempts`` + 1, status ``running``) in its own short
   transaction, so a failure is recorded even though the work is rolled back;
2. on PostgreSQL the window is never loaded whole. Two connections share the work, each in
   one transaction and without parallel workers by default (:func:`_audit_transaction`):
   the audit's own connection, and a second one in a thread (outside a caller's
   transaction only: inside one, whose uncommitted rows another connection would not see,
   everything runs on the caller's connection, in the same order).

   On the audit's own connection:

   * the window's players are summarised in one grouped query (:func:`window_players`):
     the skills, the players boosting can test
     (:func:`~integrity.domain.boosting.may_be_tested`, a few percent of them), and the
     eligible players active per hour, which co-seating's family size needs;
   * the seats of the players boosting can test are read, each with its table's players
     (:func:`seats_of`), their residuals computed with the window's skills
     (:func:`~integrity.domain.audit.seat_residuals`), and boosting runs on them;
   * once the other connection is done, the tables of the players point flow can test are
     loaded and point flow runs on them.

   On the second connection meanwhile:

   * co-seating is counted in SQL (:func:`coseating_count`: the games and pairs first, then
     with the summary's hour activity the family size; only the candidate pairs come to
     Python, with the window's table count and the players of the pairs sharing ``>=
     min_shared_wins`` tables);
   * shared sessions are grouped in SQL (:func:`sessions_sql`: only identifiers on two or
     more accounts come to Python).

   Each detector's result equals the in-memory one over the whole window (tested);
3. elsewhere (SQLite) the window's seats are loaded with **one ordered query** —
   non-voided singles seats, joined to their game (record id) and player (external id),
   ordered by ``(ended_at, game, seat)``, streamed as plain tuples (no model instances, no
   per-row converters; :func:`_streamed`) — turned into observations by
   :func:`integrity.domain.audit.observations`, and the four detectors and the case
   proposals run in memory (:func:`integrity.domain.audit.audit`), with the cyclic garbage
   collector paused;
4. one transaction writes everything: the run is locked, **its old flags are deleted** and
   the new ones written (so re-running a key replaces its flags and never duplicates
   them), players resolved by external id, cases opened or updated, and the run marked
   ``completed`` with its statistics.

Doubles games are left out: a doubles team queues together by definition.

**Flags.** One row per detector flag, except the near-conclusive same-table links, which
are grouped into one row per (pair, kind, identifier) listing the games (each game still
counts in the case score). ``score`` is the flag's strength (``-log10 q``; for links the
weight the case builder gives them).

**Cases.** A proposal's key is its sorted player ids joined by ``|`` (a SHA-256 digest of it
when longer than the column). An open case with that key is updated (score, families,
reason, flags), never duplicated; a new key opens a case and logs ``opened`` once. A case
already decided (dismissed, sanctioned, reversed) is not reopened by statistics: the new
flags are attached and ``flagged_again`` is logged once per run key.
"""

import hashlib
import logging
import math
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Collection, Generator, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass
from datetime import date, datetime, timedelta
from typing import Any, TypeVar

from django.db import connection, transaction
from django.db.models import BigIntegerField, Func, Q
from django.utils import timezone

from accounts.models import Player
from core import collector
from core.errors import ServiceError
from integrity.conf import audit_parallel_workers, audit_params, chunk_size
from integrity.domain.audit import (
    AuditOutcome,
    AuditParams,
    DetectorFlag,
    Found,
    PlayerSeat,
    SeatRow,
    audit,
    boosting_of,
    observations,
    outcome,
    seat_residuals,
)
from integrity.domain.boosting import BoostFlag, may_be_tested
from integrity.domain.cases import NEAR_CONCLUSIVE_SCORE, CaseProposal
from integrity.domain.coseating import (
    DEFAULT_EXACT_FAMILY_CAP,
    CoseatingResult,
    HourCounts,
    PairCounts,
    PairFlag,
    coseating_from_counts,
    family_bound,
)
from integrity.domain.data import TOUR_TZ, hour_bucket
from integrity.domain.pointflow import FlowFlag, detect_pointflow
from integrity.domain.sessions import (
    IdentifierKind,
    SameTableLink,
    SessionCluster,
    SessionsResult,
    sessions_from_graph,
)
from integrity.models import AuditRun, Case, CaseEvent, CasePlayer, Flag
from tournaments.models import Event, Game, Seat

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

_IN_CHUNK = 900  # ids per IN (...): below SQLite's variable limit
_KEY_LENGTH = Case._meta.get_field("key").max_length or 200
_RUN_KEY_LENGTH = AuditRun._meta.get_field("key").max_length or 80
#: The longest audit window: 48,000 hour buckets (a season is 8,784 at most).
LONGEST_WINDOW = timedelta(days=2000)


class _HourBucket(Func):
    """:func:`integrity.domain.data.hour_bucket` in PostgreSQL: whole hours since
    1970-01-01 00:00 on the tour's clock."""

    template = (
        f"floor(extract(epoch from (%(expressions)s AT TIME ZONE '{TOUR_TZ.key}')) / 3600)::bigint"
    )
    output_field = BigIntegerField()


def event_key(event: Event) -> str:
    return f"event:{event.code}"


def window_key(first: date, last: date) -> str:
    return f"window:{first.isoformat()}:{last.isoformat()}"


def day_window(first: date, last: date) -> tuple[datetime, datetime]:
    """Tour days ``first``..``last`` (inclusive, Asia/Shanghai) as an inclusive window."""
    start = datetime.combine(first, datetime.min.time(), TOUR_TZ)
    end = datetime.combine(last + timedelta(days=1), datetime.min.time(), TOUR_TZ)
    return start, end - timedelta(microseconds=1)


def case_key(players: Sequence[str]) -> str:
    joined = "|".join(sorted(players))
    if len(joined) <= _KEY_LENGTH:
        return joined
    return "sha256:" + hashlib.sha256(joined.encode()).hexdigest()


# --- loading -------------------------------------------------------------------------------


def audit_rows(
    *, window_start: datetime, window_end: datetime, event: Event | None = None
) -> Generator[SeatRow, None, None]:
    """The window's non-voided singles seats as seat rows, in (ended_at, game, seat) order.

    An event audit reads that event's seats; a window audit the seats of the events whose
    window overlaps it (so the per-event index is used), both within the window. The hour
    bucket is computed by PostgreSQL (parsing a timestamp per row in Python costs more than
    the rest of the row); elsewhere from ``ended_at`` in Python."""
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
    columns = ("game__record_id", "player__external_id", "hand_points", "score", "ip", "device")
    if connection.vendor == "postgresql":
        rows = seats.annotate(hour=_HourBucket("ended_at")).values_list(
            columns[0], "hour", *columns[1:]
        )
        return _streamed(*rows.query.sql_with_params())
    timed = seats.values_list(columns[0], "ended_at", *columns[1:])
    return (
        (game, hour_bucket(ended), *rest)
        for game, ended, *rest in timed.iterator(chunk_size=chunk_size())
    )


def _streamed(
    sql: str, params: Sequence[Any] | Mapping[str, Any]
) -> Generator[tuple[Any, ...], None, None]:
    """The rows of a query as the driver returns them (the seat columns need none of the
    ORM's per-row converters), streamed in chunks of :func:`chunk_size` rows: PostgreSQL
    sends them as it produces them, without waiting to be asked for each chunk, from a plan
    that may use parallel workers (a server-side cursor never gets one, and outside a
    transaction it is held: the whole result is made and stored before the first row goes
    out). The connection serves nothing else until the last row is read. A stream left
    early is cancelled, which aborts the transaction it runs in: so it runs in one of its
    own (a savepoint in a caller's)."""
    with transaction.atomic(), connection.cursor() as cursor:
        yield from cursor.cursor.stream(sql, params, size=chunk_size())


# --- co-seating counted in SQL (PostgreSQL) -------------------------------------------------

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

#: The window's games. Each game's players are sorted: the aggregate reads the seats in the
#: subquery's (game, player) order (nothing above the subquery reorders them), which costs
#: less than ``array_agg(p ORDER BY p)``'s sort per game.
_GAME_SQL = """
    CREATE UNLOGGED TABLE {game} AS
    SELECT g, array_agg(p) AS ps, count(*)::int AS k,
           floor(extract(epoch from (min(e) AT TIME ZONE %(tz)s)) / 3600)::bigint AS h
    FROM (
        SELECT s.game_id AS g, s.player_id AS p, s.ended_at AS e
        FROM tournaments_seat s
        WHERE {window}
        ORDER BY s.game_id, s.player_id
    ) AS seats
    GROUP BY g HAVING count(*) >= 2
"""
_EVENT = "%(event)s"
_OVERLAPPING = (
    "SELECT id FROM tournaments_event WHERE starts_at <= %(end)s AND ends_at >= %(start)s"
)


def _window_sql(
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


#: Memory for the sorts of the seats by game and of the pairs (six per four-seat game): in
#: memory up to ~1M games.
_WORK_MEMORY = "256MB"

#: The pairs sharing at least two tables: each game's pairs ``ps[i] < ps[j]`` come from its
#: own array (no join of seats); the index pairs ``i < j`` of a ``k``-seat table are looked
#: up once per game as two arrays and unnested together. Nearly every pair meets once, so
#: the count is a grouping of as many keys as there are pairs: sorted (hashing them spills
#: to disk), and on one 8-byte key ``a << 32 | b`` while player ids are below
#: :data:`_PACKED_BELOW` (:data:`_PACKED`), which PostgreSQL sorts about twice as fast as
#: the two columns (:data:`_UNPACKED`). ``OFFSET 0`` keeps the subquery whole, so only the
#: key is sorted (pulled up, the sort would carry each game's array along).
_PAIR_SQL = """
    CREATE UNLOGGED TABLE {pair} AS
    WITH ij AS (
        SELECT k, array_agg(i ORDER BY i, j) AS i, array_agg(j ORDER BY i, j) AS j
        FROM (SELECT DISTINCT k FROM {game}) AS sizes, generate_series(1, k) AS i,
             generate_series(1, k) AS j
        WHERE i < j
        GROUP BY k
    )
    SELECT {unpack}, count(*) AS shared
    FROM (
        SELECT {pack} FROM {game} AS g JOIN ij ON ij.k = g.k, unnest(ij.i, ij.j) AS t(i, j)
        OFFSET 0
    ) AS pairs
    GROUP BY {key} HAVING count(*) >= 2
"""
#: The highest player id there is (an upper bound on the window's): whether ids fit the
#: packed key.
_HIGHEST_SQL = "SELECT coalesce(max(id), 0) FROM accounts_player"
_PACKED_BELOW = 2**31
_PACKED = {
    "pack": "(ps[t.i] << 32) | ps[t.j] AS ab",
    "unpack": "ab >> 32 AS a, ab & 4294967295 AS b",
    "key": "ab",
}
_UNPACKED = {"pack": "ps[t.i] AS a, ps[t.j] AS b", "unpack": "a, b", "key": "a, b"}

#: Per hour: every seat played.
_HOUR_SEATS_SQL = "SELECT h, sum(k)::bigint FROM {game} GROUP BY h"

#: The exact family: pairs of eligible players active together in >= min_common_hours (only
#: counted for small windows, see :func:`coseating_count`).
_FAMILY_SQL = """
    WITH seats AS MATERIALIZED (SELECT g.h, u.p FROM {game} g, unnest(g.ps) AS u(p)),
    e AS MATERIALIZED (
        SELECT DISTINCT h, p FROM seats
        WHERE p IN (SELECT p FROM seats GROUP BY p HAVING count(*) >= %(min_games)s)
    )
    SELECT count(*) FROM (
        SELECT 1 FROM e x JOIN e y ON x.h = y.h AND x.p < y.p
        GROUP BY x.p, y.p HAVING count(*) >= %(min_common_hours)s
    ) AS pairs
"""

#: The candidate pairs (two eligible players sharing >= 2 tables), one row per common hour,
#: in (pair, hour) order. The per-hour seats and other seats, and the games, of the
#: candidates' players are counted once from their seats only (``ch``), then joined per pair.
_PAIRS_SQL = """
    WITH ph AS (
        SELECT u.p, g.h, count(*) AS seats, sum(g.k - 1)::bigint AS others
        FROM {game} g, unnest(g.ps) AS u(p)
        WHERE u.p IN (SELECT a FROM {pair} UNION SELECT b FROM {pair})
        GROUP BY u.p, g.h
    ), ch AS MATERIALIZED (
        SELECT p, h, seats, others, games
        FROM (SELECT ph.*, (sum(seats) OVER (PARTITION BY p))::bigint AS games FROM ph) AS counted
        WHERE games >= %(min_games)s
    )
    SELECT c.a, c.b, xa.external_id, xb.external_id, ha.games, hb.games, c.shared,
           ha.seats, hb.seats, ha.others, hb.others, ha.h
    FROM {pair} c
    JOIN ch ha ON ha.p = c.a
    JOIN ch hb ON hb.p = c.b AND hb.h = ha.h
    JOIN accounts_player xa ON xa.id = c.a
    JOIN accounts_player xb ON xb.id = c.b
    ORDER BY c.a, c.b, ha.h
"""


#: Settings :func:`coseating_count`, :func:`sessions_sql` and :func:`window_players` change
#: with ``SET LOCAL``; their values are restored at the end (:func:`_audit_transaction`).
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
def _audit_transaction() -> Iterator[None]:
    """A transaction (a savepoint in a caller's) for the audit's PostgreSQL work: its
    statements get at most :func:`~integrity.conf.audit_parallel_workers` parallel workers
    each, and :data:`_SETTINGS` are restored at the end, so ``SET LOCAL`` within leaves a
    caller's enclosing transaction its own values (on an error the rollback undoes them)."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(_SAVE_SQL)
            saved = cursor.fetchone()
            cursor.execute(
                "SELECT set_config('max_parallel_workers_per_gather', %s, true)",
                [str(audit_parallel_workers())],
            )
        yield
        with connection.cursor() as cursor:
            cursor.execute(
                _RESTORE_SQL, [item for pair in zip(_SETTINGS, saved, strict=True) for item in pair]
            )


def _work_tables() -> dict[str, str]:
    """Names of this run's work tables: unlogged (so PostgreSQL may scan them with parallel
    workers where :func:`_audit_transaction` allows any, which it never does for temporary
    tables), unique per run (``coseating_<hex>_<kind>``) so concurrent audits never
    collide."""
    run = uuid.uuid4().hex[:16]
    return {kind: f"coseating_{run}_{kind}" for kind in ("game", "pair")}


def _counted_pairs(
    rows: Iterator[tuple[Any, ...]], hour_seats: Mapping[int, int]
) -> Iterator[PairCounts]:
    pair: tuple[Any, ...] | None = None
    hours: list[HourCounts] = []
    for a, b, name_a, name_b, games_a, games_b, shared, xa, xb, oa, ob, hour in rows:
        if pair is None or (a, b) != pair[:2]:
            if pair is not None:
                yield PairCounts(pair[2], pair[3], pair[4], tuple(hours))
            pair, hours = (a, b, (name_a, name_b), (games_a, games_b), shared), []
        hours.append((xa, xb, oa, ob, hour_seats[hour]))
    if pair is not None:
        yield PairCounts(pair[2], pair[3], pair[4], tuple(hours))


def _fetched(cursor: Any, size: int) -> Iterator[tuple[Any, ...]]:
    while rows := cursor.fetchmany(size):
        yield from rows


#: The window's tables (games of two or more seats in it).
_TABLES_SQL = "SELECT count(*) FROM {game}"

#: The players of the pairs sharing ``>= %(sharing)s`` tables (at least 2: the pair table's).
_SHARING_SQL = """
    SELECT a FROM {pair} WHERE shared >= %(sharing)s
    UNION SELECT b FROM {pair} WHERE shared >= %(sharing)s
"""


@dataclass(frozen=True)
class HourActivity:
    """The window's eligible players (``>= min_games`` games at its tables) and, per hour
    bucket, how many of them played then: what the co-seating family size needs
    (:func:`~integrity.domain.coseating.family_bound`), counted from the window's summary
    (:func:`window_players`)."""

    eligible: int
    active: dict[int, int]


@dataclass(frozen=True)
class CoseatingCount:
    """What :func:`coseating_count` counted: co-seating, the window's tables, and the ids of
    the players in pairs sharing ``>= sharing`` tables."""

    coseating: CoseatingResult
    tables: int
    sharing: list[int]


def coseating_sql(
    *,
    window_start: datetime,
    window_end: datetime,
    event: Event | None = None,
    params: AuditParams | None = None,
    exact_family_cap: int = DEFAULT_EXACT_FAMILY_CAP,
) -> CoseatingResult:
    """Co-seating over the window's seats, counted by PostgreSQL (:func:`coseating_count`)
    after the window's summary (:func:`window_players`) that its hour activity comes from."""
    params = params or AuditParams()
    players = window_players(
        window_start=window_start, window_end=window_end, event=event, params=params
    )
    return coseating_count(
        window_start=window_start,
        window_end=window_end,
        event=event,
        params=params,
        activity=_finished(players.activity),
        exact_family_cap=exact_family_cap,
    ).coseating


def coseating_count(
    *,
    window_start: datetime,
    window_end: datetime,
    event: Event | None = None,
    params: AuditParams | None = None,
    activity: Future[HourActivity],
    exact_family_cap: int = DEFAULT_EXACT_FAMILY_CAP,
    sharing: int = 2,
) -> CoseatingCount:
    """Co-seating over the window's seats (as :func:`audit_rows` selects them), counted by
    PostgreSQL in one transaction: work tables (:func:`_work_tables`, created and dropped in
    that transaction, so none outlives it) of the games (players as an array) and of the
    pairs sharing ``>= 2`` tables (each game's pairs from its array, ``GROUP BY ... HAVING``:
    no self-join of seats), and the seats per hour. The eligible players active per hour
    come from ``activity`` (the window's summary, read meanwhile on another connection, or
    before): with them the family size ``m`` (exact up to ``exact_family_cap`` co-active
    pair-hours, else :func:`~integrity.domain.coseating.family_bound`). The per-(player,
    hour) seats and other seats are counted only for the candidates' players, and only the
    candidate pairs' hours come to Python, streamed in ``(pair, hour)`` order through a
    server-side cursor, for :func:`~integrity.domain.coseating.coseating_from_counts`. The
    result equals :func:`~integrity.domain.coseating.detect_coseating` over the same
    window's tables. The window's tables are counted, and the players of pairs sharing ``>=
    sharing`` tables (``sharing >= 2``) listed, from the same work tables."""
    if sharing < 2:
        raise ValueError("the pair table holds the pairs sharing >= 2 tables")
    params = params or AuditParams()
    window, values = _window_sql(window_start, window_end, event)
    values.update(
        tz=TOUR_TZ.key, min_games=params.min_games, min_common_hours=params.min_common_hours
    )
    tables = _work_tables()
    with _audit_transaction():
        with connection.cursor() as cursor:
            # JIT compiling these few large statements costs more than it saves.
            cursor.execute("SET LOCAL jit = off")
            # The work tables' statistics only steer join and aggregate choices: a small
            # sample is enough and ANALYZE then costs a few milliseconds.
            cursor.execute("SET LOCAL default_statistics_target = 10")
            cursor.execute(f"SET LOCAL work_mem = '{_WORK_MEMORY}'")
            cursor.execute(_GAME_SQL.format(window=window, **tables), values)
            cursor.execute("ANALYZE {game}".format(**tables))
            cursor.execute(_HIGHEST_SQL)
            (highest,) = cursor.fetchone()
            key = _PACKED if highest < _PACKED_BELOW else _UNPACKED
            cursor.execute("SET LOCAL enable_hashagg = off")
            cursor.execute(_PAIR_SQL.format(**key, **tables))
            cursor.execute("SET LOCAL enable_hashagg = on")
            cursor.execute("ANALYZE {pair}".format(**tables))
            cursor.execute(_TABLES_SQL.format(**tables))
            (table_count,) = cursor.fetchone()
            cursor.execute(_SHARING_SQL.format(**tables), {"sharing": sharing})
            sharing_players = sorted(player for (player,) in cursor.fetchall())
            cursor.execute(_HOUR_SEATS_SQL.format(**tables))
            hour_seats: dict[int, int] = dict(cursor.fetchall())
            hours = activity.result()
            pair_hours, bound = family_bound(
                hours.eligible, hours.active.values(), params.min_common_hours
            )
            exact = pair_hours <= exact_family_cap
            if exact:
                cursor.execute(_FAMILY_SQL.format(**tables), values)
                (family_size,) = cursor.fetchone()
            else:
                family_size = bound
        with connection.chunked_cursor() as cursor:
            cursor.execute(_PAIRS_SQL.format(**tables), values)
            result = coseating_from_counts(
                _counted_pairs(_fetched(cursor, chunk_size()), hour_seats),
                family_size=family_size,
                family_size_exact=exact,
                q=params.q,
                min_games=params.min_games,
                min_common_hours=params.min_common_hours,
            )
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE {', '.join(tables.values())}")
    return CoseatingCount(result, table_count, sharing_players)


# --- shared sessions counted in SQL (PostgreSQL) -------------------------------------------

#: Each identifier used by two or more accounts in the window's seats (as :func:`audit_rows`
#: selects them), with those accounts; an address as PostgreSQL prints it (``host``), the
#: text the seat rows carry. The distinct (device, address, account) triples first, in one
#: read of the seats: a hash aggregate into about as many rows as accounts.
_IDENTIFIERS_SQL = """
    WITH seen AS MATERIALIZED (
        SELECT DISTINCT s.device, s.ip, s.player_id AS p FROM tournaments_seat s
        WHERE {window}
    )
    SELECT d.kind, d.v, ARRAY(SELECT x.external_id FROM accounts_player x WHERE x.id = ANY(d.ps))
    FROM (
        SELECT 'device' AS kind, v, array_agg(p) AS ps
        FROM (SELECT DISTINCT device AS v, p FROM seen WHERE device <> '') AS used
        GROUP BY v HAVING count(*) >= 2
        UNION ALL
        SELECT 'ip', host(v), array_agg(p)
        FROM (SELECT DISTINCT ip AS v, p FROM seen WHERE ip IS NOT NULL) AS used
        GROUP BY v HAVING count(*) >= 2
    ) AS d
"""

#: Each (game, identifier) used by two or more accounts of that game, with those accounts:
#: only the identifiers of :data:`_IDENTIFIERS_SQL` (``devices``, ``ips``) can be. The seats
#: holding one of them are read once.
_SHARED_SQL = """
    WITH held AS MATERIALIZED (
        SELECT s.game_id AS g, s.player_id AS p, s.device, s.ip FROM tournaments_seat s
        WHERE {window}
            AND (s.device = ANY(%(devices)s::text[]) OR s.ip = ANY(%(ips)s::inet[]))
    )
    SELECT g.record_id, d.kind, d.v,
           ARRAY(SELECT x.external_id FROM accounts_player x WHERE x.id = ANY(d.ps))
    FROM (
        SELECT g, 'device' AS kind, device AS v, array_agg(p) AS ps
        FROM held WHERE device = ANY(%(devices)s::text[])
        GROUP BY g, device HAVING min(p) <> max(p)
        UNION ALL
        SELECT g, 'ip', host(ip), array_agg(p)
        FROM held WHERE ip = ANY(%(ips)s::inet[])
        GROUP BY g, ip HAVING min(p) <> max(p)
    ) AS d
    JOIN tournaments_game g ON g.id = d.g
"""

#: Memory for the distinct (identifier, account) pairs: in memory up to ~1M pairs.
_SESSIONS_MEMORY = "64MB"


def sessions_sql(
    *,
    window_start: datetime,
    window_end: datetime,
    event: Event | None = None,
    params: AuditParams | None = None,
) -> SessionsResult:
    """Shared sessions over the window's seats (as :func:`audit_rows` selects them): the
    account-identifier graph and the same-game sharing are grouped by PostgreSQL, so only
    identifiers on two or more accounts come to Python, for
    :func:`~integrity.domain.sessions.sessions_from_graph`. The result equals
    :func:`~integrity.domain.sessions.detect_sessions` over the same window's sessions."""
    params = params or AuditParams()
    window, values = _window_sql(window_start, window_end, event)
    accounts: dict[IdentifierKind, dict[str, list[str]]] = {"device": {}, "ip": {}}
    with _audit_transaction(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL work_mem = '{_SESSIONS_MEMORY}'")
        cursor.execute(_IDENTIFIERS_SQL.format(window=window), values)
        for kind, value, players in cursor.fetchall():
            accounts[kind][value] = players
        values["devices"], values["ips"] = list(accounts["device"]), list(accounts["ip"])
        cursor.execute(_SHARED_SQL.format(window=window), values)
        shared = cursor.fetchall()
    return sessions_from_graph(accounts, shared, max_degree=params.max_degree)


# --- the players boosting can test, and the tables to load (PostgreSQL) --------------------

#: The window's games left with fewer than two seats (the others voided): no tables, only
#: sessions. Only a game with a voided seat can be one.
_LONE_SQL = """
    SELECT s.game_id, min(s.player_id) FROM tournaments_seat s
    WHERE {window} AND s.game_id IN (SELECT v.game_id FROM tournaments_seat v WHERE {voided})
    GROUP BY s.game_id HAVING count(*) < 2
"""

#: Per player at the window's tables (lone games left out), in (ended_at, game) order: the
#: games, the summed game score, whether two or more known devices and IP ranges (IPv4 /24,
#: IPv6 /48) appear, and the hour bucket of each game as one character, ``A`` + the hours
#: since the window's first bucket (``%(first)s``; at most :data:`LONGEST_WINDOW`, which
#: keeps the characters below the UTF-16 surrogates PostgreSQL refuses).
_SUMMARY_SQL = """
    SELECT p, count(*) AS n, sum(score) AS total,
           min(device) FILTER (WHERE device <> '')
               IS DISTINCT FROM max(device) FILTER (WHERE device <> '') AS devices,
           min(r) IS DISTINCT FROM max(r) AS ranges,
           string_agg(hr, '' ORDER BY e, g) AS hours
    FROM (
        SELECT s.player_id AS p, s.ended_at AS e, s.game_id AS g, s.score, s.device,
               network(set_masklen(s.ip, CASE family(s.ip) WHEN 4 THEN 24 ELSE 48 END)) AS r,
               chr(65 + (floor(extract(epoch from (s.ended_at AT TIME ZONE %(tz)s)) / 3600)
                         - %(first)s)::int) AS hr
        FROM tournaments_seat s
        WHERE {window} AND s.game_id <> ALL(%(lone)s::bigint[])
    ) AS seats
    GROUP BY p
"""

#: The summary's character for the window's first hour bucket.
_A = ord("A")

#: The seat rows (as :func:`audit_rows` returns them) of the window's games with any of
#: ``%(players)s`` at the table, in (ended_at, game, seat) order.
_TABLES_OF_SQL = """
    SELECT g.record_id,
           floor(extract(epoch from (s.ended_at AT TIME ZONE %(tz)s)) / 3600)::bigint,
           x.external_id, s.hand_points, s.score, s.ip, s.device
    FROM tournaments_seat s
    JOIN tournaments_game g ON g.id = s.game_id
    JOIN accounts_player x ON x.id = s.player_id
    WHERE {window} AND s.game_id IN (
        SELECT c.game_id FROM tournaments_seat c
        WHERE {mine} AND c.player_id = ANY(%(players)s::bigint[])
    )
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


@dataclass(frozen=True)
class WindowPlayers:
    """The window's players as :func:`window_players` summarised them: the skills by player
    id, the ids of the players boosting can test, the games of lone games left out by
    every table read, the window's seats and players (lone games included), and the hour
    activity co-seating needs."""

    skill: dict[int, float]
    boosting: list[int]
    lone: list[int]
    seats: int
    players: int
    activity: HourActivity


def window_players(
    *,
    window_start: datetime,
    window_end: datetime,
    event: Event | None = None,
    params: AuditParams | None = None,
) -> WindowPlayers:
    """The window's skills (each player's mean game score at its tables), the players
    boosting can test (:func:`~integrity.domain.boosting.may_be_tested` on each player's
    summary) and the eligible players active per hour (:class:`HourActivity`), read in one
    grouped query (:data:`_SUMMARY_SQL`)."""
    params = params or AuditParams()
    first = hour_bucket(window_start)
    window, values = _window_sql(window_start, window_end, event)
    voided = _window_sql(window_start, window_end, event, "v", voided=True)[0]
    skill: dict[int, float] = {}
    testable: list[int] = []
    least = 2 * params.min_segment
    with _audit_transaction():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL jit = off")
            cursor.execute(f"SET LOCAL work_mem = '{_WORK_MEMORY}'")
            # The summary reads every seat of the window: read in the table's order (a
            # bitmap or sequential scan) and sorted, not fetched one by one in player order
            # through the (event, player, ended_at) index (3x slower on 1,000,000 seats).
            cursor.execute("SET LOCAL enable_indexscan = off")
            cursor.execute(_LONE_SQL.format(window=window, voided=voided), values)
            lone = cursor.fetchall()
        lone_games = sorted({game for game, _ in lone})
        values.update(tz=TOUR_TZ.key, lone=lone_games, first=first)
        seats = len(lone)
        players = {player for _, player in lone}
        eligible = 0
        active: Counter[str] = Counter()
        with closing(_streamed(_SUMMARY_SQL.format(window=window), values)) as summary:
            for player, games, total, devices, ranges, hours in summary:
                seats += games
                players.add(player)
                skill[player] = total / games
                if games >= params.min_games:
                    eligible += 1
                    active.update(set(hours))
                if games >= least and may_be_tested(
                    [(first + ord(hour) - _A) % 24 for hour in hours],
                    several_devices=devices,
                    several_ranges=ranges,
                    min_segment=params.min_segment,
                    window=params.window,
                    min_hour_shift=params.min_hour_shift,
                ):
                    testable.append(player)
    activity = HourActivity(eligible, {first + ord(hour) - _A: n for hour, n in active.items()})
    return WindowPlayers(skill, testable, lone_games, seats, len(players), activity)


def seats_of(
    players: WindowPlayers, *, window_start: datetime, window_end: datetime, event: Event | None
) -> Generator[PlayerSeat, None, None]:
    """The :data:`~integrity.domain.audit.PlayerSeat` rows of the players boosting can test,
    each player's in play order, streamed (:func:`_streamed`)."""
    window, values = _window_sql(window_start, window_end, event)
    values.update(tz=TOUR_TZ.key, players=players.boosting, lone=players.lone)
    return _streamed(_SEATS_OF_SQL.format(window=window), values)


def tables_of(
    players: Collection[int],
    *,
    window_start: datetime,
    window_end: datetime,
    event: Event | None = None,
) -> Generator[SeatRow, None, None]:
    """The seat rows (:func:`audit_rows`' columns and order) of the window's games that any
    of ``players`` (ids) sat at, streamed (:func:`_streamed`)."""
    window, values = _window_sql(window_start, window_end, event)
    mine = _window_sql(window_start, window_end, event, "c")[0]
    values.update(tz=TOUR_TZ.key, players=sorted(players))
    return _streamed(_TABLES_OF_SQL.format(window=window, mine=mine), values)


# --- writing -------------------------------------------------------------------------------


def _finite(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None


def _flag_row(run: AuditRun, flag: DetectorFlag, versions: Mapping[str, str]) -> Flag:
    if isinstance(flag, PairFlag):
        a, b = flag.players
        return Flag(
            run=run,
            detector=Flag.Detector.COSEATING,
            version=versions["coseating"],
            family=Flag.Family.BEHAVIOUR,
            player_keys=list(flag.players),
            statistic=flag.shared,
            p_value=flag.p,
            q_value=flag.q,
            evidence={
                "shared": flag.shared,
                "expected": flag.expected,
                "trials": flag.trials,
                "games": {a: flag.games[0], b: flag.games[1]},
                "common_hours": flag.common_hours,
            },
            score=flag.strength,
        )
    if isinstance(flag, FlowFlag):
        return Flag(
            run=run,
            detector=Flag.Detector.POINTFLOW,
            version=versions["pointflow"],
            family=Flag.Family.BEHAVIOUR,
            player_keys=list(flag.players),
            # The rank sum of the test that decided (pointflow-2), or the sign test's count.
            statistic=flag.rank_sum if flag.test == "rank" else flag.heaviest,
            p_value=flag.p,
            q_value=flag.q,
            evidence={
                "feeder": flag.feeder,
                "beneficiary": flag.beneficiary,
                "shared_wins": flag.shared_wins,
                "test": flag.test,
                "baseline_games": flag.baseline_games,
                "rank_sum": flag.rank_sum,
                "rank_sum_hands": flag.rank_sum_hands,
                "rank_sum_expected": flag.rank_sum_expected,
                "heaviest": flag.heaviest,
                "expected": flag.expected,
                "mean_excess": flag.mean_excess,
                "feeder_mean": flag.feeder_mean,
                "feeder_baseline": _finite(flag.feeder_baseline),
                "flow_to_beneficiary": flag.flow_to_beneficiary,
                "flow_to_feeder": flag.flow_to_feeder,
                "reverse_wins": flag.reverse_wins,
            },
            score=flag.strength,
        )
    if isinstance(flag, SessionCluster):
        return Flag(
            run=run,
            detector=Flag.Detector.SESSIONS,
            version=versions["sessions"],
            family=Flag.Family.LINKS,
            player_keys=list(flag.players),
            statistic=len(flag.players),
            evidence={"devices": list(flag.devices), "ips": list(flag.ips)},
            score=flag.strength,
        )
    if isinstance(flag, BoostFlag):
        return Flag(
            run=run,
            detector=Flag.Detector.BOOSTING,
            version=versions["boosting"],
            family=Flag.Family.BEHAVIOUR,
            player_keys=[flag.player],
            statistic=flag.z,
            p_value=flag.p,
            q_value=flag.q,
            evidence={
                "games": flag.games,
                "change_index": flag.change_index,
                "change_game": flag.change_game,
                "change_hour": flag.change_hour,
                "kinds": list(flag.kinds),
                "before_mean": flag.before_mean,
                "after_mean": flag.after_mean,
                "shift": flag.shift,
                "splits": flag.splits,
            },
            score=flag.strength,
        )
    raise TypeError(f"not a flag row: {flag!r}")


def _link_rows(
    run: AuditRun, links: Iterable[tuple[str, SameTableLink]], version: str
) -> tuple[list[Flag], dict[str, int]]:
    """One row per (pair, kind, identifier); returns the rows and, per link reference, the
    index of its row."""
    grouped: dict[tuple[tuple[str, str], str, str], list[tuple[str, str]]] = defaultdict(list)
    for ref, link in links:
        grouped[link.players, link.kind, link.identifier].append((ref, link.game_id))
    rows: list[Flag] = []
    index: dict[str, int] = {}
    for (players, kind, identifier), items in sorted(grouped.items()):
        games = sorted({game for _, game in items})
        for ref, _ in items:
            index[ref] = len(rows)
        rows.append(
            Flag(
                run=run,
                detector=Flag.Detector.SAME_TABLE,
                version=version,
                family=Flag.Family.LINKS,
                player_keys=list(players),
                statistic=len(games),
                near_conclusive=True,
                evidence={"kind": kind, "identifier": identifier, "games": games},
                score=NEAR_CONCLUSIVE_SCORE * len(games),
            )
        )
    return rows, index


def _chunks(items: Sequence[Any], size: int = _IN_CHUNK) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _player_ids(keys: Iterable[str]) -> dict[str, int]:
    wanted = sorted(set(keys))
    found: dict[str, int] = {}
    for chunk in _chunks(wanted):
        found.update(Player.objects.filter(external_id__in=chunk).values_list("external_id", "pk"))
    missing = sorted(set(wanted) - set(found))
    if missing:
        raise ServiceError(f"unknown players in the audit: {', '.join(missing[:10])}")
    return found


def _versions(outcome: AuditOutcome) -> dict[str, str]:
    return {
        "coseating": outcome.coseating.version,
        "pointflow": outcome.pointflow.version,
        "sessions": outcome.sessions.version,
        "boosting": outcome.boosting.version,
        "cases": outcome.triage.version,
    }


def _write_flags(run: AuditRun, outcome: AuditOutcome) -> tuple[dict[str, Flag], int]:
    """Write the run's flag rows; returns the row behind each flag reference and the number
    of rows."""
    versions = _versions(outcome)
    rows: list[Flag] = []
    by_ref: dict[str, int] = {}
    links: list[tuple[str, SameTableLink]] = []
    for ref, flag in outcome.flags.items():
        if isinstance(flag, SameTableLink):
            links.append((ref, flag))
            continue
        by_ref[ref] = len(rows)
        rows.append(_flag_row(run, flag, versions))
    link_rows, link_index = _link_rows(run, links, versions["sessions"])
    offset = len(rows)
    rows.extend(link_rows)
    by_ref.update({ref: offset + i for ref, i in link_index.items()})
    Flag.objects.bulk_create(rows, batch_size=1000)
    ids = _player_ids(key for row in rows for key in row.player_keys)
    through = Flag.players.through
    through.objects.bulk_create(
        [through(flag_id=row.pk, player_id=ids[key]) for row in rows for key in row.player_keys],
        batch_size=5000,
    )
    return {ref: rows[i] for ref, i in by_ref.items()}, len(rows)


def _write_cases(
    run: AuditRun, proposals: Sequence[CaseProposal], rows: Mapping[str, Flag]
) -> dict[str, int]:
    """Open or update a case per proposal (module docstring); returns the counts."""
    counts = {"opened": 0, "updated": 0, "flagged_again": 0}
    keyed = {case_key(p.players): p for p in proposals}
    existing: dict[str, Case] = {}
    for chunk in _chunks(sorted(keyed)):
        existing.update(
            (case.key, case)
            for case in Case.objects.select_for_update().filter(key__in=chunk).order_by("pk")
        )
    ids = _player_ids(player for p in proposals for player in p.players)
    case_flags = Case.flags.through
    links: list[Any] = []
    for key, proposal in sorted(keyed.items()):
        flag_ids = sorted({rows[ref].pk for ref in proposal.flags})
        case = existing.get(key)
        if case is None:
            case = Case.objects.create(
                key=key,
                families=list(proposal.families),
                score=proposal.score,
                reason=proposal.reason[:300],
            )
            CasePlayer.objects.bulk_create(
                [CasePlayer(case=case, player_id=ids[player]) for player in proposal.players]
            )
            CaseEvent.objects.create(
                case=case,
                action=CaseEvent.Action.OPENED,
                reason=proposal.reason[:500],
                data={"run": run.key, "flags": len(flag_ids), "score": proposal.score},
            )
            counts["opened"] += 1
        elif case.status == Case.Status.OPEN:
            case.families, case.score = list(proposal.families), proposal.score
            case.reason = proposal.reason[:300]
            case.save(update_fields=["families", "score", "reason"])
            counts["updated"] += 1
        else:
            logged = CaseEvent.objects.filter(
                case=case, action=CaseEvent.Action.FLAGGED_AGAIN, data__run=run.key
            ).exists()
            if not logged:
                CaseEvent.objects.create(
                    case=case,
                    action=CaseEvent.Action.FLAGGED_AGAIN,
                    reason=proposal.reason[:500],
                    data={"run": run.key, "flags": len(flag_ids), "score": proposal.score},
                )
            counts["flagged_again"] += 1
        links.extend(case_flags(case_id=case.pk, flag_id=flag_id) for flag_id in flag_ids)
    case_flags.objects.bulk_create(links, batch_size=5000, ignore_conflicts=True)
    return counts


def _stats(outcome: AuditOutcome, seconds: dict[str, float]) -> dict[str, Any]:
    return {
        "tables": outcome.tables,
        "seats": outcome.seats,
        "players": outcome.players,
        "pairs_tested": outcome.coseating.tested,
        "family_size": outcome.coseating.family_size,
        "family_size_exact": outcome.coseating.family_size_exact,
        "pointflow_family": outcome.pointflow.family_size,
        "boosting_family": outcome.boosting.family_size,
        "flags": {
            "coseating": len(outcome.coseating.flags),
            "pointflow": len(outcome.pointflow.flags),
            "sessions": len(outcome.sessions.clusters),
            "same_table": len(outcome.sessions.links),
            "boosting": len(outcome.boosting.flags),
        },
        "cases_proposed": len(outcome.triage.cases),
        "review": len(outcome.triage.review),
        "versions": _versions(outcome),
        "seconds": {name: round(value, 3) for name, value in seconds.items()},
    }


# --- the service ---------------------------------------------------------------------------


def _start(
    *,
    key: str,
    window_start: datetime,
    window_end: datetime,
    event: Event | None,
    params: dict[str, Any],
) -> AuditRun:
    with transaction.atomic():
        run, created = AuditRun.objects.select_for_update().get_or_create(
            key=key,
            defaults={
                "event": event,
                "window_start": window_start,
                "window_end": window_end,
                "params": params,
                "attempts": 1,
            },
        )
        if not created:
            run.event, run.window_start, run.window_end = event, window_start, window_end
            run.params, run.status, run.error = params, AuditRun.Status.RUNNING, ""
            run.attempts += 1
            run.started_at, run.finished_at = timezone.now(), None
            run.save()
        return run


@dataclass(frozen=True)
class _Counted:
    """What PostgreSQL counts alongside: co-seating, the window's tables, the players of the
    pairs point flow can test (``None``: every player), shared sessions, and the seconds
    each took."""

    coseating: CoseatingResult
    tables: int
    feeders: list[int] | None
    sessions: SessionsResult
    seconds: dict[str, float]


def _count_in_sql(
    window: Mapping[str, Any], params: AuditParams, activity: Future[HourActivity]
) -> _Counted:
    """Co-seating (:func:`coseating_count`), with the hour activity from ``activity``, then
    shared sessions (:func:`sessions_sql`).

    Point flow tests the ordered pairs with ``>= min_shared_wins`` shared wins, so only the
    pairs sharing as many tables (listed by the co-seating count when that is ``>= 2``, the
    least its pair table holds) and the tables of their players matter to it."""
    started = time.perf_counter()
    sharing = params.min_shared_wins
    count = coseating_count(**window, params=params, activity=activity, sharing=max(2, sharing))
    feeders = count.sharing if sharing >= 2 else None
    counted = time.perf_counter()
    sessions = sessions_sql(**window, params=params)
    seconds = {"coseating": counted - started, "sessions": time.perf_counter() - counted}
    return _Counted(count.coseating, count.tables, feeders, sessions, seconds)


def _count_alongside(
    window: Mapping[str, Any], params: AuditParams, activity: Future[HourActivity]
) -> _Counted:
    """:func:`_count_in_sql` on this thread's own connection, closed at the end: run by
    :func:`audit_run` while the rest of the audit runs on its own connection."""
    try:
        return _count_in_sql(window, params, activity)
    finally:
        connection.close()


def _finished(value: _T) -> Future[_T]:
    """``value`` as a finished future."""
    future: Future[_T] = Future()
    future.set_result(value)
    return future


def _audit_in_sql(
    window: Mapping[str, Any], params: AuditParams, alongside: ThreadPoolExecutor | None
) -> AuditOutcome:
    """The audit on PostgreSQL (module docstring, step 2): co-seating counted on a second
    connection by ``alongside`` (with ``None``, on this connection once the window's summary
    is read), the rest on this one. The outcome equals the in-memory audit's over the whole
    window (tested)."""
    seconds: dict[str, float] = {}
    activity: Future[HourActivity] = Future()
    counting = None
    if alongside is not None:
        counting = alongside.submit(_count_alongside, window, params, activity)
    with _audit_transaction():
        started = time.perf_counter()
        try:
            players = window_players(**window, params=params)
        except BaseException as exc:
            activity.set_exception(exc)  # the count alongside stops waiting for it
            raise
        activity.set_result(players.activity)
        seconds["players"] = time.perf_counter() - started
        if counting is None:
            counting = _finished(_count_in_sql(window, params, activity))

        started = time.perf_counter()
        with closing(seats_of(players, **window)) as rows:
            residuals, sessions = seat_residuals(rows, players.skill)
        seconds["load"] = time.perf_counter() - started
        started = time.perf_counter()
        boosting = boosting_of(residuals, sessions, params)
        seconds["boosting"] = time.perf_counter() - started
        del residuals, sessions

        counted = counting.result()
        seconds.update(counted.seconds)
        started = time.perf_counter()
        if counted.feeders is None:
            feeders = audit_rows(**window)
        else:
            feeders = tables_of(counted.feeders, **window)
        with closing(feeders) as rows:
            tables, _ = observations(rows)
        pointflow = detect_pointflow(tables, q=params.q, min_shared_wins=params.min_shared_wins)
        seconds["pointflow"] = time.perf_counter() - started

        found = Found(counted.coseating, pointflow, counted.sessions, boosting)
        return outcome(
            found,
            tables=counted.tables,
            seats=players.seats,
            players=players.players,
            seconds=seconds,
        )


def audit_run(
    *,
    key: str,
    window_start: datetime,
    window_end: datetime,
    event: Event | None = None,
    params: Mapping[str, Any] | None = None,
) -> AuditRun:
    """Audit the window (module docstring); idempotent per ``key``. Returns the run."""
    if not key.strip() or len(key) > _RUN_KEY_LENGTH:
        raise ServiceError("an audit key is 1 to 80 characters", detail={"key": key})
    if timezone.is_naive(window_start) or timezone.is_naive(window_end):
        raise ServiceError("the audit window needs aware datetimes")
    if window_end < window_start:
        raise ServiceError("the audit window ends before it starts")
    if window_end - window_start > LONGEST_WINDOW:
        raise ServiceError(
            f"an audit window spans at most {LONGEST_WINDOW.days} days",
            detail={"days": (window_end - window_start).days},
        )
    detector_params = audit_params(params)
    run = _start(
        key=key,
        window_start=window_start,
        window_end=window_end,
        event=event,
        params=asdict(detector_params),
    )
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    window: dict[str, Any] = {
        "window_start": window_start,
        "window_end": window_end,
        "event": event,
    }
    postgres = connection.vendor == "postgresql"
    try:
        with collector.paused(), ThreadPoolExecutor(max_workers=1) as pool:
            if postgres:
                # Another connection would not see a caller's uncommitted rows: inside a
                # transaction everything runs on this connection.
                alongside = None if connection.in_atomic_block else pool
                found = _audit_in_sql(window, detector_params, alongside)
            else:
                loading = time.perf_counter()
                # Closed here even if reading stops early: a stream left to the garbage
                # collector would keep the connection busy until then.
                with closing(audit_rows(**window)) as seat_rows:
                    tables, sessions = observations(seat_rows)
                seconds["load"] = time.perf_counter() - loading
                found = audit(tables, sessions, detector_params)
                del tables, sessions
        seconds.update(found.seconds)
        writing = time.perf_counter()
        with transaction.atomic():
            run = AuditRun.objects.select_for_update().get(pk=run.pk)
            Flag.objects.filter(run=run).delete()
            rows, written = _write_flags(run, found)
            counts = _write_cases(run, found.triage.cases, rows)
            seconds["write"] = time.perf_counter() - writing
            seconds["total"] = time.perf_counter() - started
            run.stats = {**_stats(found, seconds), "cases": counts, "flag_rows": written}
            run.status, run.finished_at = AuditRun.Status.COMPLETED, timezone.now()
            run.save(update_fields=["stats", "status", "finished_at"])
    except Exception as exc:
        AuditRun.objects.filter(pk=run.pk).update(
            status=AuditRun.Status.FAILED, error=repr(exc)[:2000], finished_at=timezone.now()
        )
        logger.exception("audit %s failed", key)
        raise
    logger.info("audit %s: %s", key, run.stats.get("flags"))
    return run


def audit_event(*, event: Event, params: Mapping[str, Any] | None = None) -> AuditRun:
    """The audit of one event over its window (key ``event:<code>``)."""
    return audit_run(
        key=event_key(event),
        window_start=event.starts_at,
        window_end=event.ends_at,
        event=event,
        params=params,
    )


def event_audit_is_clean(event: Event, *, player: Player | None = None) -> bool:
    """Whether the event's audit has completed and (for ``player``) no open case holds the
    player — what a title grant from this event needs (SPEC §6 "Grants go through review")."""
    audited = AuditRun.objects.filter(
        key=event_key(event), status=AuditRun.Status.COMPLETED
    ).exists()
    if not audited:
        return False
    if player is None:
        return True
    return not Case.objects.filter(Q(status=Case.Status.OPEN) & Q(players=player)).exists()
