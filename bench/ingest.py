"""Bench stage ``ingest``: game ingest at tour size against a raw COPY of the same rows.

Scale 1.0 is a big week: 250,000 games = 1,000,000 player-game rows (``--scale 0.01`` is the
CI smoke size). The stage simulates the week (``tournaments.simulation``), writes it to a
temporary ``.jsonl`` and imports it through the service path ``import_games`` uses
(``games_import``: parse, validate, score, COPY games and seats, players, standings). Then, in
the same run, it COPYs the identical game and seat rows, already prepared as tuples, three
ways, and reports the service's rate (rows/s of games + seats) and its ratio to each (the
budget, issue 22: at least 15,000 rows/s through the service):

* **bare COPY**: temporary tables ``LIKE`` the real ones: no index, no constraint, no WAL —
  the least any storing can cost;
* **scratch copies**: regular tables ``LIKE … INCLUDING ALL``: the same columns, checks and
  indexes, logged, committed; no foreign keys, which ``LIKE`` never copies;
* **the real tables**: every index, and the foreign keys checked at commit — the ceiling of
  any path that stores the rows for real, before any parsing, validation, scoring or
  standings.

The bench event, its rows and its players are removed before and after.
"""

import json
import os
import tempfile
import time
from datetime import date, datetime
from typing import Any, TextIO

from django.db import connection, transaction

from accounts.models import Player, PlayerChange
from bench.players import delete_bench_players
from bench.registry import Result, stage, timer
from core.domain.clock import TOUR_TZ
from flows.ingest import games_import
from tournaments.domain.calendar import DAILY_CLOSE, DAILY_OPEN
from tournaments.models import Event, Game, Season, Seat, Standing
from tournaments.services.game_copy import GAME_COLUMNS, SEAT_COLUMNS
from tournaments.simulation import simulate_games, simulate_players

GAMES_AT_SCALE_1 = 250_000
GAMES_PER_PLAYER = 20  # seats per player on average: 4 * games / players
BENCH_YEAR = 2999
BENCH_EVENT = "bench-ingest"
PLAYER_PREFIX = "bench-p"
MONDAY = date(2021, 2, 1)
#: Issue 22's budget: player-game rows (games + seats) a second through the service.
GOAL_ROWS_PER_SECOND = 15_000


def ingest_event() -> Event:
    season, _ = Season.objects.get_or_create(
        year=BENCH_YEAR, defaults={"name": "bench", "starts_on": date(2021, 1, 4)}
    )
    event, _ = Event.objects.update_or_create(
        code=BENCH_EVENT,
        defaults={
            "season": season,
            "kind": "weekly_qualifier",
            "starts_at": datetime.combine(MONDAY, DAILY_OPEN, TOUR_TZ),
            "ends_at": datetime.combine(date(2021, 2, 7), DAILY_CLOSE, TOUR_TZ),
            "daily_opens": DAILY_OPEN,
            "daily_closes": DAILY_CLOSE,
            "open_entry": True,
            "status": "scheduled",
        },
    )
    return event


def ingest_clean(event: Event) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        for model in (Standing, Seat, Game):
            cursor.execute(
                f"DELETE FROM {model._meta.db_table} WHERE event_id = %s",  # noqa: S608
                [event.pk],
            )
        delete_bench_players(cursor, PLAYER_PREFIX, [PlayerChange])


def ingest_vacuum() -> None:
    """Reclaim the rows of earlier runs, so every run starts from the same tables."""
    with connection.cursor() as cursor:
        for model in (Game, Seat, Standing, Player):
            cursor.execute(f"VACUUM ANALYZE {model._meta.db_table}")


def _rows(event: Event) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The event's game rows (pk first, then `GAME_COLUMNS`) and seat rows (`SEAT_COLUMNS`)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, {', '.join(GAME_COLUMNS)} FROM {Game._meta.db_table} "  # noqa: S608
            "WHERE event_id = %s",
            [event.pk],
        )
        games = cursor.fetchall()
        cursor.execute(
            f"SELECT {', '.join(SEAT_COLUMNS)} FROM {Seat._meta.db_table} "  # noqa: S608
            "WHERE event_id = %s",
            [event.pk],
        )
        seats = cursor.fetchall()
    return games, seats


def _copy(
    cursor: Any, tables: tuple[str, str], games: list[tuple[Any, ...]], seats: list[tuple[Any, ...]]
) -> float:
    started = time.perf_counter()
    for table, columns, rows in (
        (tables[0], ("id", *GAME_COLUMNS), games),
        (tables[1], SEAT_COLUMNS, seats),
    ):
        with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
    return time.perf_counter() - started


def _bare_copy(games: list[tuple[Any, ...]], seats: list[tuple[Any, ...]]) -> float:
    """Seconds to COPY the rows into temporary tables without indexes or constraints."""
    with transaction.atomic(), connection.cursor() as cursor:
        for name, model in (("bench_game", Game), ("bench_seat", Seat)):
            cursor.execute(f"CREATE TEMP TABLE {name} (LIKE {model._meta.db_table}) ON COMMIT DROP")
            cursor.execute(f"ALTER TABLE {name} ALTER COLUMN id DROP NOT NULL")
        return _copy(cursor, ("bench_game", "bench_seat"), games, seats)


def _scratch_copy(games: list[tuple[Any, ...]], seats: list[tuple[Any, ...]]) -> float:
    """Seconds to COPY the rows into scratch copies of the tables and commit: ``LIKE …
    INCLUDING ALL`` gives the columns, defaults, checks and every index, logged like the
    real tables; no foreign keys (``LIKE`` never copies them). Dropped afterwards."""
    names = (("bench_scratch_game", Game), ("bench_scratch_seat", Seat))
    with connection.cursor() as cursor:
        for name, model in names:
            cursor.execute(f"DROP TABLE IF EXISTS {name}")
            cursor.execute(f"CREATE TABLE {name} (LIKE {model._meta.db_table} INCLUDING ALL)")
    try:
        started = time.perf_counter()
        with transaction.atomic(), connection.cursor() as cursor:
            _copy(cursor, (names[0][0], names[1][0]), games, seats)
        return time.perf_counter() - started
    finally:
        with connection.cursor() as cursor:
            for name, _ in names:
                cursor.execute(f"DROP TABLE {name}")


def _real_copy(event: Event, games: list[tuple[Any, ...]], seats: list[tuple[Any, ...]]) -> float:
    """Seconds to COPY the same rows into the real tables and commit (indexes, constraints,
    foreign keys checked at commit): what the database alone costs the service path."""
    with connection.cursor() as cursor:
        for model in (Seat, Game):
            cursor.execute(
                f"DELETE FROM {model._meta.db_table} WHERE event_id = %s",  # noqa: S608
                [event.pk],
            )
    started = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        _copy(cursor, (Game._meta.db_table, Seat._meta.db_table), games, seats)
    return time.perf_counter() - started


@stage("ingest")
def ingest(scale: float, out: TextIO) -> list[Result]:
    games = max(100, round(GAMES_AT_SCALE_1 * scale))
    players = max(200, 4 * games // GAMES_PER_PLAYER)
    event = ingest_event()
    ingest_clean(event)
    ingest_vacuum()
    with (
        timer() as generated,
        tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as file,
    ):
        for record in simulate_games(
            players=simulate_players(players, seed=7, id_prefix=PLAYER_PREFIX),
            games=games,
            event=BENCH_EVENT,
            window=(event.starts_at, event.ends_at),
            seed=7,
        ):
            file.write(json.dumps(record, ensure_ascii=False) + "\n")
    out.write(f"   simulated {games:,} games of {players:,} players in {generated[0]:.1f} s\n")
    rejects: list[dict[str, Any]] = []
    try:
        with timer() as service, open(file.name, "rb") as lines:
            summary = games_import(lines=lines, on_rejects=rejects.extend)
    finally:
        os.unlink(file.name)
    if summary.ingested != games or rejects:
        raise RuntimeError(f"bench ingest lost records: {summary}, first rejects {rejects[:3]}")
    game_rows, seat_rows = _rows(event)
    rows = len(game_rows) + len(seat_rows)
    baselines = (
        ("bare COPY (temp tables, no index)", _bare_copy(game_rows, seat_rows)),
        ("COPY into scratch copies", _scratch_copy(game_rows, seat_rows)),
        ("COPY into the real tables", _real_copy(event, game_rows, seat_rows)),
    )
    ingest_clean(event)
    rate = rows / service[0]
    out.write(f"   service {service[0]:.1f} s ({rate:,.0f} rows/s)\n")
    for name, seconds in baselines:
        out.write(f"   {name}: {seconds:.1f} s ({rows / seconds:,.0f} rows/s)\n")
    size = f"{games:,} games + {len(seat_rows):,} seats"
    return [
        Result(
            stage=f"ingest vs {name}",
            size=size,
            value=rate,
            unit="rows/s",
            baseline=rows / seconds,
            ratio=rate * seconds / rows,
            goal=f">= {GOAL_ROWS_PER_SECOND:,} rows/s",
            passed=rate >= GOAL_ROWS_PER_SECOND,
        )
        for name, seconds in baselines
    ]
