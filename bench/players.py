"""Deleting a stage's bench players in SQL, with the rows that point at them.

The stages write their players and rows straight in SQL and delete them the same way, so no
``on_delete`` cascade runs: every table a stage can fill for a player (the notices a
finalise or a grant writes included) is cleared here before the players themselves.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection
from django.db.backends.utils import CursorWrapper
from django.db.models import Model

from notices.models import Notice, NoticeDelivery

PLAYERS = "SELECT id FROM accounts_player WHERE external_id LIKE %s"


def delete_bench_players(
    cursor: CursorWrapper, prefix: str, models: Iterable[type[Model]] = ()
) -> None:
    """Delete the players whose external id starts with ``prefix`` and their rows in
    ``models`` (each with a ``player_id``), their notices and the notices' deliveries."""
    like = [f"{prefix}%"]
    quote = connection.ops.quote_name
    cursor.execute(
        f"DELETE FROM {quote(NoticeDelivery._meta.db_table)} WHERE notice_id IN "  # noqa: S608
        f"(SELECT id FROM {quote(Notice._meta.db_table)} WHERE player_id IN ({PLAYERS}))",
        like,
    )
    tables: list[type[Model]] = [*models, Notice]
    for model in tables:
        table = quote(model._meta.db_table)
        cursor.execute(f"DELETE FROM {table} WHERE player_id IN ({PLAYERS})", like)  # noqa: S608
    cursor.execute("DELETE FROM accounts_player WHERE external_id LIKE %s", like)
