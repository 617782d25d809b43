"""The PostgreSQL fast path of game ingest (SPEC §9): COPY of prepared text, no ORM objects.

Games are COPYed into a temporary staging table, then moved with
``INSERT … SELECT … ORDER BY record_id ON CONFLICT (record_id) DO NOTHING RETURNING``: the
unique ``record_id`` decides which of two concurrent writers of one record wins, and the
fixed order keeps two overlapping batches from deadlocking. Seats are COPYed straight into
their table, only for the games actually inserted, each actor's chances (read by the replay
that checked the log) as an array literal of (target player id, kind, chances, punished)
quadruples (``Seat.chances``). Runs inside the caller's transaction.
"""

import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime

import orjson
from django.db import connection

from tournaments.models import Game, Seat
from tournaments.services.ingest_validation import CheckedGame

STAGE = "ingest_game_stage"
GAME_COLUMNS = (
    "record_id",
    "digest",
    "event_id",
    "mode",
    "started_at",
    "ended_at",
    "ended_by",
    "seat_count",
    "log",
    "voided",
    "ingested_at",
)
SEAT_COLUMNS = (
    "game_id",
    "seat",
    "player_id",
    "team",
    "hand",
    "hand_points",
    "score",
    "event_id",
    "ended_at",
    "voided",
    "ip",
    "device",
    "client",
    "chances",
)
NULL = "\\N"
_SPECIAL = re.compile(r"[\\\t\n\r]")
_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def copy_text(value: str) -> str:
    """A string as a field of COPY text format (backslash escapes)."""
    return value.translate(_ESCAPES) if _SPECIAL.search(value) else value


def _log_text(log: object) -> str:
    """A move log as a COPY text field of its JSON: orjson, or the standard library for what
    orjson cannot write (an integer beyond 64 bits). Both escape every control character
    inside strings and write no tab or line break between values, so of COPY's specials only
    the backslash can occur: looked for with ``in``, not :func:`copy_text`'s regular
    expression (7 µs over a 2.5 KB log, more than writing it)."""
    try:
        text = orjson.dumps(log).decode()
    except orjson.JSONEncodeError:
        text = json.dumps(log, ensure_ascii=False)
    return text.replace("\\", "\\\\") if "\\" in text else text


def _game_lines(games: Sequence[CheckedGame], now: str) -> str:
    lines = []
    for game in games:
        log = NULL if game.log is None else _log_text(game.log)
        lines.append(
            f"{copy_text(game.record_id)}\t{game.digest}\t{game.event.pk}\t{game.mode}\t"
            f"{game.started_at.isoformat()}\t{game.ended_at.isoformat()}\t{game.ended_by}\t"
            f"{len(game.seats)}\t{log}\tf\t{now}\n"
        )
    return "".join(lines)


#: The compression method of the stored move logs (``l`` lz4, ``p`` pglz, empty: the server's
#: default), which the staging table's column takes: a log compressed while staged is moved
#: into the games as it is, never compressed again, so a staging column left at the default
#: (pglz) would store it with pglz whatever the games' column says, at about four times
#: lz4's cost on the ingest path (migration ``0013_move_log_json``).
_LOG_COMPRESSION_SQL = (
    "SELECT attcompression FROM pg_attribute WHERE attrelid = %s::regclass AND attname = 'log'"
)
_METHODS = {"l": "lz4", "p": "pglz"}


def games_copy(*, games: Sequence[CheckedGame], now: datetime) -> dict[str, int]:
    """Insert the games that are new; return ``{record_id: game pk}`` of those inserted."""
    if not games:
        return {}
    columns = ", ".join(GAME_COLUMNS)
    table = Game._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TEMP TABLE {STAGE} ON COMMIT DROP AS "  # noqa: S608 - fixed names
            f"SELECT {columns} FROM {table} WITH NO DATA"
        )
        cursor.execute(_LOG_COMPRESSION_SQL, [table])
        (method,) = cursor.fetchone()
        if method in _METHODS:
            compression = _METHODS[method]
            cursor.execute(f"ALTER TABLE {STAGE} ALTER COLUMN log SET COMPRESSION {compression}")
        with cursor.copy(f"COPY {STAGE} ({columns}) FROM STDIN") as copy:
            copy.write(_game_lines(games, now.isoformat()))
        cursor.execute(
            f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {STAGE} "  # noqa: S608
            "ORDER BY record_id ON CONFLICT (record_id) DO NOTHING RETURNING record_id, id"
        )
        inserted = dict(cursor.fetchall())
        cursor.execute(f"DROP TABLE {STAGE}")
    return inserted


def _chances(game: CheckedGame, ids: Sequence[int]) -> list[str]:
    """Per seat, its chances as a COPY field: ``{target id,kind,chances,punished,…}``,
    or null (``ids``: the seats' player pks)."""
    held: dict[int, list[str]] = {}
    for actor, target, kind, chances, punished in game.chances:
        held.setdefault(actor, []).append(f"{ids[target]},{kind},{chances},{punished}")
    return ["{" + ",".join(held[seat]) + "}" if seat in held else NULL for seat in range(len(ids))]


def seats_copy(*, games: Sequence[tuple[int, CheckedGame]], players: Mapping[str, int]) -> None:
    """COPY the seats of inserted games (``(game pk, game)``; ``players``: key -> player pk)."""
    lines = []
    for game_pk, game in games:
        head = f"{game_pk}\t"
        tail = f"\t{game.event.pk}\t{game.ended_at.isoformat()}\tf\t"
        ids = [players[seat.player_key] for seat in game.seats]
        chances = _chances(game, ids) if game.chances else None
        for position, seat in enumerate(game.seats):
            team = NULL if seat.team is None else seat.team
            ip = NULL if seat.ip is None else seat.ip
            lines.append(
                f"{head}{position}\t{ids[position]}\t{team}\t{copy_text(seat.hand)}\t"
                f"{seat.hand_points}\t{seat.score}{tail}{ip}\t"
                f"{copy_text(seat.device)}\t{copy_text(seat.client)}\t"
                f"{NULL if chances is None else chances[position]}\n"
            )
    if not lines:
        return
    with connection.cursor() as cursor:
        sql = f"COPY {Seat._meta.db_table} ({', '.join(SEAT_COLUMNS)}) FROM STDIN"
        with cursor.copy(sql) as copy:
            copy.write("".join(lines))
