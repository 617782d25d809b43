"""The bulk writes of the title materialisation, in SQL (PostgreSQL's binary COPY).

New rows are COPYed straight into their table; an update or an insert that must skip
existing rows COPYs into a temporary table first and runs one set-based ``UPDATE … FROM`` or
``INSERT … ON CONFLICT`` from it. Columns are (name, PostgreSQL type); JSON values are
passed as JSON text. What is written is decided by :mod:`titles.writing`; this module only
moves rows.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connection
from django.db.models import Model
from psycopg.types.json import set_json_dumps

from titles.models import PlayerTitle

Row = tuple[Any, ...]
Columns = list[tuple[str, str]]

FINGERPRINT_COLUMNS: Columns = [("fingerprint", "int8")]
TITLE_COLUMNS: Columns = [
    ("status", "text"),
    ("valid_until", "date"),
    ("lifetime_since", "date"),
    ("terms", "jsonb"),
    *FINGERPRINT_COLUMNS,
    ("updated_at", "timestamptz"),
]
TERM_UPDATE_COLUMNS: Columns = [
    ("valid_until", "date"),
    ("sources", "jsonb"),
    ("state", "text"),
    ("updated_at", "timestamptz"),
]
TERM_COLUMNS: Columns = [
    ("player_id", "int8"),
    ("start", "date"),
    ("valid_until", "date"),
    ("sources", "jsonb"),
    ("code", "text"),
    ("state", "text"),
    ("updated_at", "timestamptz"),
]
CHANGE_COLUMNS: Columns = [
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

_STAGE = "titles_stage"


@contextmanager
def raw_cursor() -> Iterator[Any]:
    """psycopg's own cursor on Django's connection (for COPY)."""
    with connection.cursor() as cursor:
        yield cursor.cursor


def _quote(name: str) -> str:
    return str(connection.ops.quote_name(name))


def copy_rows(cursor: Any, table: str, columns: Columns, rows: list[Row]) -> None:
    """Binary COPY of ``rows`` into ``table`` (quoted); JSON values are JSON text."""
    names = ", ".join(_quote(name) for name, _ in columns)
    set_json_dumps(str, cursor)  # the values are JSON text already
    with cursor.copy(f"COPY {table} ({names}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types([kind for _, kind in columns])
        write = copy.write_row
        for row in rows:
            write(row)


def _stage(cursor: Any, columns: Columns, rows: list[Row]) -> str:
    """COPY ``rows`` into a new temporary table; returns its name. The caller drops it; it
    is dropped at commit anyway."""
    cursor.execute(
        f"CREATE TEMP TABLE {_STAGE} ("
        + ", ".join(f"{_quote(name)} {kind}" for name, kind in columns)
        + ") ON COMMIT DROP"
    )
    copy_rows(cursor, _STAGE, columns, rows)
    return _STAGE


def insert_titles(cursor: Any, rows: list[Row]) -> list[int]:
    """Insert new ``PlayerTitle`` rows ``(player_id, *TITLE_COLUMNS)`` unless the player has
    one already; returns the players inserted, ascending."""
    if not rows:
        return []
    columns = [("player_id", "int8"), *TITLE_COLUMNS]
    table = _quote(PlayerTitle._meta.db_table)
    names = ", ".join(_quote(name) for name, _ in columns)
    stage = _stage(cursor, columns, rows)
    cursor.execute(
        f"INSERT INTO {table} ({names}) SELECT {names} FROM {stage} "  # noqa: S608
        "ON CONFLICT (player_id) DO NOTHING RETURNING player_id"
    )
    inserted = sorted(pid for (pid,) in cursor.fetchall())
    cursor.execute(f"DROP TABLE {stage}")
    return inserted


def update_rows(
    cursor: Any, model: type[Model], key: str, columns: Columns, rows: list[Row]
) -> None:
    """One set-based update; ``rows`` are ``(key, *values)`` in the order of ``columns``."""
    if not rows:
        return
    table = _quote(model._meta.db_table)
    stage = _stage(cursor, [(key, "int8"), *columns], rows)
    assign = ", ".join(f"{_quote(name)} = s.{_quote(name)}" for name, _ in columns)
    cursor.execute(
        f"UPDATE {table} AS t SET {assign} FROM {stage} AS s "  # noqa: S608
        f"WHERE t.{_quote(key)} = s.{_quote(key)}"
    )
    cursor.execute(f"DROP TABLE {stage}")


def insert_rows(
    cursor: Any, model: type[Model], columns: Columns, rows: list[Row], *, ids: bool = False
) -> list[int]:
    """COPY ``rows`` into the model's table; with ``ids``, returns their new ids, in order
    and ascending (taken from the id sequence first), else nothing."""
    if not rows:
        return []
    table = _quote(model._meta.db_table)
    if not ids:
        copy_rows(cursor, table, columns, rows)
        return []
    # The sequence's name once: pg_get_serial_sequence() per row costs ~8 µs each.
    cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [model._meta.db_table])
    (sequence,) = cursor.fetchone()
    cursor.execute(
        "SELECT nextval(%s::regclass) FROM generate_series(1, %s)", [sequence, len(rows)]
    )
    new = sorted(new_id for (new_id,) in cursor.fetchall())
    copy_rows(
        cursor,
        table,
        [("id", "int8"), *columns],
        [(new_id, *row) for new_id, row in zip(new, rows, strict=True)],
    )
    return new
