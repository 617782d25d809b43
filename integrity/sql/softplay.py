"""Soft play counted in PostgreSQL (SPEC §7; issue 28 "a partner spared the punishments dealt
to everyone else"): the counts :func:`~integrity.domain.softplay.softplay_from_counts` needs,
summed from the chances that ingest stored on each seat (``Seat.chances``: the
replay's own reading of the move log, ``tournaments.domain.chances``), so only the pairs the
test can use come to Python. Equal to :func:`~integrity.domain.softplay.pair_chances` over
the chances read from the same logs (tests/integrity/test_softplay_sql.py).

The window is the audit's (:func:`~integrity.sql.window.window_sql`: non-voided singles
seats): a chance counts when the actor's seat and the target's are both in it, so a voided
game and a sanctioned player's voided seats drop out as they do from every other detector.
Only the seats holding chances are read, through their partial index; a window without
move logs costs one index probe.
"""

from datetime import datetime

from django.db import connection

from integrity.domain.audit import AuditParams
from integrity.domain.softplay import PairChances, SoftPlayResult, softplay_from_counts
from integrity.sql.window import WORK_MEMORY, audit_transaction, window_sql
from tournaments.models import Event

#: Per (actor, target) pair with ``>= %(min_chances)s`` chances of one kind against the
#: target, a row per kind: the pair's chances and punishments of the kind and the actor's
#: over every target, by external id. Each seat's ``chances`` are flat (target player id,
#: kind, chances, punished) quadruples; a target whose seat is voided is found through the
#: partial index of the voided seats' games. The pairs are summed once, the actor's totals
#: and the pair's most of one kind by windows (no second pass over the seats); only then are
#: the tested pairs kept. The window's seats are selected first (``OFFSET 0``), so the
#: planner joins them with their estimated count, not with its guess of a thousand
#: quadruples per seat.
_SOFTPLAY_SQL = """
    SELECT xa.external_id, xb.external_id, p.kind, p.n, p.k, p.actor_n, p.actor_k
    FROM (
        SELECT a, b, kind, n, k, (sum(n) OVER actor)::bigint AS actor_n,
               (sum(k) OVER actor)::bigint AS actor_k, max(n) OVER pair AS pair_n
        FROM (
            SELECT c.a, c.chances[i] AS b, c.chances[i + 1] AS kind,
                   sum(c.chances[i + 2]::int) AS n, sum(c.chances[i + 3]::int) AS k
            FROM (
                SELECT s.game_id AS g, s.player_id AS a, s.chances FROM tournaments_seat s
                WHERE {window} AND s.chances IS NOT NULL
                OFFSET 0
            ) AS c, generate_series(1, cardinality(c.chances), 4) AS i
            WHERE NOT EXISTS (
                SELECT 1 FROM tournaments_seat v
                WHERE v.voided AND v.game_id = c.g AND v.player_id = c.chances[i]
            )
            GROUP BY 1, 2, 3
        ) AS pairs
        WINDOW actor AS (PARTITION BY a, kind), pair AS (PARTITION BY a, b)
    ) AS p
    JOIN accounts_player xa ON xa.id = p.a
    JOIN accounts_player xb ON xb.id = p.b
    WHERE p.pair_n >= %(min_chances)s
"""


def softplay_counts(
    *,
    window_start: datetime,
    window_end: datetime,
    event: Event | None = None,
    min_chances: int = 5,
) -> list[PairChances]:
    """The counts of every pair of the window with ``>= min_chances`` chances of one kind
    against the target, a row per kind, in (actor, target, kind) order:
    :func:`~integrity.domain.softplay.pair_chances` of the window's chances."""
    window, values = window_sql(window_start, window_end, event)
    values["min_chances"] = min_chances
    with audit_transaction(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL jit = off")
        cursor.execute(f"SET LOCAL work_mem = '{WORK_MEMORY}'")
        # Nearly every pair meets once, so the pairs are about as many as the chances: sorted
        # (hashing them spills to disk at tour scale, as co-seating's pairs do), which also
        # hands the actor's window its rows in order. The seats are read in the table's
        # order (a sequential or bitmap scan), never one by one in player order through the
        # (event, player, ended_at) index, which the planner favours when it overestimates
        # the triples per seat.
        cursor.execute("SET LOCAL enable_hashagg = off")
        cursor.execute("SET LOCAL enable_indexscan = off")
        cursor.execute(_SOFTPLAY_SQL.format(window=window), values)
        # Sorted here, not by the database's collation: the order of Python's strings.
        return sorted(
            (actor, target, kind, n, k, actor_n, actor_k)
            for actor, target, kind, n, k, actor_n, actor_k in cursor.fetchall()
        )


def softplay_sql(
    *,
    window_start: datetime,
    window_end: datetime,
    event: Event | None = None,
    params: AuditParams | None = None,
) -> SoftPlayResult:
    """Soft play over the window's stored chances (module docstring)."""
    params = params or AuditParams()
    pairs = softplay_counts(
        window_start=window_start,
        window_end=window_end,
        event=event,
        min_chances=params.min_chances,
    )
    return softplay_from_counts(pairs, q=params.q, min_chances=params.min_chances)
