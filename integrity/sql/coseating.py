"""Co-seating counted in PostgreSQL (SPEC §7 "pairs who share tables more often than the
matchmaker explains"): the counts :func:`~integrity.domain.coseating.coseating_from_counts`
needs, so only the candidate pairs come to Python. The result equals the pure rule,
:func:`~integrity.domain.coseating.detect_coseating`, over the same window's tables
(tests/integrity/test_audit_sql.py feeds both the same simulated weeks).
"""

import uuid
from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from core.domain.clock import TOUR_TZ
from integrity.domain.audit import AuditParams
from integrity.domain.coseating import (
    DEFAULT_EXACT_FAMILY_CAP,
    CoseatingResult,
    HourCounts,
    PairCounts,
    coseating_from_counts,
    family_bound,
)
from integrity.sql.summary import HourActivity, window_players
from integrity.sql.window import WORK_MEMORY, audit_transaction, fetched, finished, window_sql
from tournaments.models import Event

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

#: The window's tables (games of two or more seats in it).
_TABLES_SQL = "SELECT count(*) FROM {game}"

#: The players of the pairs sharing ``>= %(sharing)s`` tables (at least 2: the pair table's).
_SHARING_SQL = """
    SELECT a FROM {pair} WHERE shared >= %(sharing)s
    UNION SELECT b FROM {pair} WHERE shared >= %(sharing)s
"""


@dataclass(frozen=True)
class CoseatingCount:
    """What :func:`coseating_count` counted: co-seating, the window's tables, and the ids of
    the players in pairs sharing ``>= sharing`` tables."""

    coseating: CoseatingResult
    tables: int
    sharing: list[int]


def _work_tables() -> dict[str, str]:
    """Names of this run's work tables: unlogged (so PostgreSQL may scan them with parallel
    workers where the audit transaction allows any, which it never does for temporary
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


def coseating_sql(
    *,
    window_start: datetime,
    window_end: datetime,
    event: Event | None = None,
    params: AuditParams | None = None,
    exact_family_cap: int = DEFAULT_EXACT_FAMILY_CAP,
) -> CoseatingResult:
    """Co-seating over the window's seats, counted by PostgreSQL (:func:`coseating_count`)
    after the window's summary (:func:`~integrity.sql.summary.window_players`) that its hour
    activity comes from."""
    params = params or AuditParams()
    players = window_players(
        window_start=window_start, window_end=window_end, event=event, params=params
    )
    return coseating_count(
        window_start=window_start,
        window_end=window_end,
        event=event,
        params=params,
        activity=finished(players.activity),
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
    """Co-seating over the window's seats (as :func:`~integrity.sql.window.audit_rows`
    selects them), counted by PostgreSQL in one transaction: work tables
    (:func:`_work_tables`, created and dropped in that transaction, so none outlives it) of
    the games (players as an array) and of the pairs sharing ``>= 2`` tables (each game's
    pairs from its array, ``GROUP BY ... HAVING``: no self-join of seats), and the seats per
    hour. The eligible players active per hour come from ``activity`` (the window's summary,
    read meanwhile on another connection, or before): with them the family size ``m``
    (exact up to ``exact_family_cap`` co-active pair-hours, else
    :func:`~integrity.domain.coseating.family_bound`). The per-(player, hour) seats and
    other seats are counted only for the candidates' players, and only the candidate pairs'
    hours come to Python, streamed in ``(pair, hour)`` order through a server-side cursor,
    for :func:`~integrity.domain.coseating.coseating_from_counts`. The window's tables are
    counted, and the players of pairs sharing ``>= sharing`` tables (``sharing >= 2``)
    listed, from the same work tables."""
    if sharing < 2:
        raise ValueError("the pair table holds the pairs sharing >= 2 tables")
    params = params or AuditParams()
    window, values = window_sql(window_start, window_end, event)
    values.update(
        tz=TOUR_TZ.key, min_games=params.min_games, min_common_hours=params.min_common_hours
    )
    tables = _work_tables()
    with audit_transaction():
        with connection.cursor() as cursor:
            # JIT compiling these few large statements costs more than it saves.
            cursor.execute("SET LOCAL jit = off")
            # The work tables' statistics only steer join and aggregate choices: a small
            # sample is enough and ANALYZE then costs a few milliseconds.
            cursor.execute("SET LOCAL default_statistics_target = 10")
            cursor.execute(f"SET LOCAL work_mem = '{WORK_MEMORY}'")
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
                _counted_pairs(fetched(cursor), hour_seats),
                family_size=family_size,
                family_size_exact=exact,
                q=params.q,
                min_games=params.min_games,
                min_common_hours=params.min_common_hours,
            )
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE {', '.join(tables.values())}")
    return CoseatingCount(result, table_count, sharing_players)
