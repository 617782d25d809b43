"""Shared sessions grouped in PostgreSQL (SPEC §7 "accounts that share devices or network
addresses, above all at one table"): the account-identifier graph and the same-game sharing,
so only identifiers on two or more accounts come to Python, for
:func:`~integrity.domain.sessions.sessions_from_graph`. The result equals the pure rule,
:func:`~integrity.domain.sessions.detect_sessions`, over the same window's sessions
(tests/integrity/test_audit_sql.py).
"""

from datetime import datetime

from django.db import connection

from integrity.domain.audit import AuditParams
from integrity.domain.sessions import IdentifierKind, SessionsResult, sessions_from_graph
from integrity.sql.window import audit_transaction, window_sql
from tournaments.models import Event

#: Each identifier used by two or more accounts in the window's seats (as
#: :func:`~integrity.sql.window.audit_rows` selects them), with those accounts; an address as
#: PostgreSQL prints it (``host``), the text the seat rows carry. The distinct (device,
#: address, account) triples first, in one read of the seats: a hash aggregate into about as
#: many rows as accounts.
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
    """Shared sessions over the window's seats (module docstring)."""
    params = params or AuditParams()
    window, values = window_sql(window_start, window_end, event)
    accounts: dict[IdentifierKind, dict[str, list[str]]] = {"device": {}, "ip": {}}
    with audit_transaction(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL work_mem = '{_SESSIONS_MEMORY}'")
        cursor.execute(_IDENTIFIERS_SQL.format(window=window), values)
        for kind, value, players in cursor.fetchall():
            accounts[kind][value] = players
        values["devices"], values["ips"] = list(accounts["device"]), list(accounts["ip"])
        cursor.execute(_SHARED_SQL.format(window=window), values)
        shared = cursor.fetchall()
    return sessions_from_graph(accounts, shared, max_degree=params.max_degree)
