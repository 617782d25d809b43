"""The integrity audit's SQL (SPEC §7), the one place it lives: what an audit at tour scale
(10,000,000 games a window) asks PostgreSQL to count instead of loading the window. Each
accelerator equals its pure rule in :mod:`integrity.domain` on the same data
(tests/integrity/test_audit_sql.py):

* :mod:`integrity.sql.window` — the window's seats, the audit transaction, streaming and
  the seat loads (:func:`audit_rows`, :func:`seats_of`, :func:`history_seats_of`,
  :func:`tables_of`);
* :mod:`integrity.sql.summary` — the window's players in one grouped query: skills, who
  boosting can test (:func:`integrity.domain.boosting.may_be_tested`), hour activity;
* :mod:`integrity.sql.coseating` — co-seating's counts
  (:func:`integrity.domain.coseating.detect_coseating`);
* :mod:`integrity.sql.sessions` — shared sessions' graph
  (:func:`integrity.domain.sessions.detect_sessions`);
* :mod:`integrity.sql.softplay` — soft play's counts per pair and kind, from the chances
  stored at ingest (:func:`integrity.domain.softplay.detect_softplay`).

The audit service (:mod:`integrity.services.audits`) runs them and the pure detectors.
"""

from integrity.sql.coseating import CoseatingCount, coseating_count, coseating_sql
from integrity.sql.sessions import sessions_sql
from integrity.sql.softplay import softplay_counts, softplay_sql
from integrity.sql.summary import HourActivity, WindowPlayers, window_players
from integrity.sql.window import (
    audit_rows,
    audit_transaction,
    history_seats_of,
    seats_of,
    streamed,
    tables_of,
)

__all__ = [
    "CoseatingCount",
    "HourActivity",
    "WindowPlayers",
    "audit_rows",
    "audit_transaction",
    "coseating_count",
    "coseating_sql",
    "history_seats_of",
    "seats_of",
    "sessions_sql",
    "softplay_counts",
    "softplay_sql",
    "streamed",
    "tables_of",
    "window_players",
]
