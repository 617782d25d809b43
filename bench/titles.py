"""Benchmark stage ``titles``: materialise the whole ledger (SPEC §6) against a bare read.

Scale 1.0 is 1,000,000 approved qualifications over 200,000 players (0.01 is the CI smoke
size). The service path is :func:`titles.recompute.titles_recompute_all`, run as the
recompute job runs it: outside a transaction, every write committed (so the times include
the foreign-key checks a commit pays for). Both rows have as baseline the bare
``SELECT … ORDER BY player`` of the same qualification rows; the budget (issue 22) is 10 s for
each at scale 0.1 (100,000 qualifications over 20,000 players):

* **first replay** — from an empty materialisation: every player gets a title row, terms
  and history (at scale 1.0 about 370,000 terms and 1,300,000 history rows);
* **again, no change** — the steady state of the job: nothing to write, and no terms or
  history read (each player's fingerprint and status match).

Also printed: the replay alone (the same rows through :func:`titles.domain.replay.replay`,
no database), what the first replay wrote, and the CPU time it took in this process and,
when the server runs on this machine, in all PostgreSQL processes (on shared cores the wall
time moves with other work; the CPU times much less). The bench players and all their rows
are committed before and deleted after (and before, should an earlier run have stopped
halfway).
"""

import gc
import os
import random
import time
from datetime import date, timedelta
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any, TextIO

from django.db import connection, transaction
from django.utils import timezone

from accounts.models import Player
from accounts.provinces import PROVINCES
from bench.players import delete_bench_players
from bench.registry import Result, stage, timer
from titles.domain.replay import Qualification as Replayed
from titles.domain.replay import replay
from titles.models import (
    PlayerTitle,
    Qualification,
    QualificationRule,
    TitleChange,
    TitleTerm,
)
from titles.recompute import titles_recompute_all

GOAL_SECONDS = 10.0
FIRST_DAY = date(2019, 1, 1)
DAYS = 6 * 365


def _seed(players: int, qualifications: int, rng: random.Random) -> None:
    """COPY the players and their approved qualifications (not timed)."""
    now = timezone.now()
    rule = QualificationRule.objects.get_or_create(
        key="monthly_champion", defaults={"confers": "master"}
    )[0]
    with connection.cursor() as cursor:
        raw = cursor.cursor
        with raw.copy(
            "COPY accounts_player (external_id, name, province, created_at, updated_at) FROM STDIN"
        ) as copy:
            for i in range(players):
                copy.write_row((f"bench-t{i:07d}", f"玩家{i}", rng.choice(PROVINCES), now, now))
        cursor.execute(
            "SELECT id FROM accounts_player WHERE external_id LIKE 'bench-t%%' ORDER BY id"
        )
        ids = [row[0] for row in cursor.fetchall()]
        table = Qualification._meta.db_table
        with raw.copy(
            f'COPY {table} (player_id, source, rule_id, "on", confers, '
            "requires_valid_master, status, evidence, created_at, decision_reason, version) "
            "FROM STDIN"
        ) as copy:
            for i in range(qualifications):
                copy.write_row(
                    (
                        ids[rng.randrange(players)],
                        f"bench:{i}",
                        rule.pk,
                        FIRST_DAY + timedelta(days=rng.randrange(DAYS)),
                        "master",
                        True,
                        "approved",
                        "{}",
                        now,
                        "",
                        2,
                    )
                )
        cursor.execute(f"ANALYZE accounts_player, {table}")


def _cpu() -> tuple[float, float | None]:
    """CPU seconds used so far by this process and by all PostgreSQL processes of the server
    (this connection, the service's other connections and their parallel workers, background
    work), those that have ended included: the postmaster keeps them as its children's time.
    ``None`` unless the server runs on this machine (Linux ``/proc``)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()
    ticks, local = 0, False
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            name, fields = stat.read_text().rsplit(")", 1)
        except (OSError, ValueError):
            continue
        if name.endswith("(postgres"):
            local = local or stat.parent.name == str(backend)
            ticks += sum(int(field) for field in fields.split()[11:15])  # own, children's
    return time.process_time(), ticks / os.sysconf("SC_CLK_TCK") if local else None


def _vacuum() -> None:
    """``VACUUM ANALYZE`` the tables a run reads and writes, after the seeding (not timed):
    neither side then pays for hint bits or stale statistics."""
    tables = [Player, Qualification, PlayerTitle, TitleTerm, TitleChange]
    with connection.cursor() as cursor:
        for model in tables:
            cursor.execute(f"VACUUM ANALYZE {connection.ops.quote_name(model._meta.db_table)}")


def _clean() -> None:
    """Delete the bench players and all their rows (not timed)."""
    models = (TitleChange, TitleTerm, PlayerTitle, Qualification)
    with transaction.atomic(), connection.cursor() as cursor:
        delete_bench_players(cursor, "bench-t", models)


def _bare_read() -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(
            'SELECT player_id, source, "on", confers, requires_valid_master '  # noqa: S608
            f"FROM {Qualification._meta.db_table} WHERE status = 'approved' "
            'ORDER BY player_id, "on", source'
        )
        rows: list[tuple[Any, ...]] = cursor.fetchall()
        return rows


def _replay_alone(rows: list[tuple[Any, ...]]) -> None:
    """Replay every player of ``rows`` (player, source, on, confers, requires), no database;
    with the cyclic garbage collector paused, as the recompute does."""
    gc.disable()
    try:
        for _, group in groupby(rows, key=itemgetter(0)):
            replay(
                Replayed(source=source, on=on, confers=confers, requires_valid_master=requires)
                for _, source, on, confers, requires in group
            )
    finally:
        gc.enable()


@stage("titles")
def titles_replay(scale: float, out: TextIO) -> list[Result]:
    qualifications = max(1000, round(1_000_000 * scale))
    players = max(200, round(200_000 * scale))
    size = f"{qualifications:,} quals / {players:,} players"
    rng = random.Random(2021)  # noqa: S311 - synthetic benchmark data
    _clean()
    try:
        with transaction.atomic():
            _seed(players, qualifications, rng)
        _vacuum()
        out.write(f"seeded {size}\n")
        with timer() as bare:
            rows = _bare_read()
        with timer() as alone:
            _replay_alone(rows)
        before = _cpu()
        with timer() as first:
            replayed = titles_recompute_all(reason="bench")
        after = _cpu()
        wrote = f"{TitleTerm.objects.count():,} terms, {TitleChange.objects.count():,} history rows"
        with timer() as again:
            titles_recompute_all(reason="bench")
    finally:
        _clean()
    out.write(
        f"read {len(rows):,} rows in {bare[0]:.2f} s; replay alone {alone[0]:.2f} s; "
        f"first replay of {replayed:,} players wrote {wrote}; CPU: Python "
        f"{after[0] - before[0]:.2f} s, PostgreSQL "
        + (
            f"{after[1] - before[1]:.2f} s\n"
            if after[1] is not None and before[1] is not None
            else "not measured (not on this machine)\n"
        )
    )
    return [
        Result(
            stage="titles",
            size=f"{size}, first replay",
            value=first[0],
            unit="s",
            baseline=bare[0],
            ratio=first[0] / bare[0],
            goal=f"<= {GOAL_SECONDS:g} s",
            passed=first[0] <= GOAL_SECONDS,
        ),
        Result(
            stage="titles",
            size=f"{size}, again, no change",
            value=again[0],
            unit="s",
            baseline=bare[0],
            ratio=again[0] / bare[0],
            goal=f"<= {GOAL_SECONDS:g} s",
            passed=again[0] <= GOAL_SECONDS,
        ),
    ]
