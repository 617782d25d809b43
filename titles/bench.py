"""Benchmark stage ``titles``: replay the whole ledger (SPEC §6) against a bare read.

Scale 1.0 is 1,000,000 approved qualifications over 200,000 players (0.01 is the CI smoke
size). The service path is :func:`titles.recompute.titles_recompute_all` — per chunk of
players: lock their title rows, load their approved qualifications with one query ordered
by player, replay each player, write the title rows, terms and history in bulk — first from
an empty materialisation, then again with nothing changed. The baseline, in the same run,
is the same qualification rows read with a bare ``SELECT … ORDER BY player``. Goal: the
first replay within 10 s at scale 1.0. Everything is rolled back at the end.
"""

import random
from datetime import date, timedelta
from typing import TextIO

from django.db import connection, transaction
from django.utils import timezone

from accounts.provinces import PROVINCES
from core.bench import Result, stage, timer
from titles.models import Qualification, QualificationRule
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


def _bare_read() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            'SELECT player_id, source, "on", confers, requires_valid_master '  # noqa: S608
            f"FROM {Qualification._meta.db_table} WHERE status = 'approved' "
            'ORDER BY player_id, "on", source'
        )
        return len(cursor.fetchall())


@stage("titles")
def titles_replay(scale: float, out: TextIO) -> list[Result]:
    qualifications = max(1000, round(1_000_000 * scale))
    players = max(200, round(200_000 * scale))
    size = f"{qualifications:,} quals / {players:,} players"
    rng = random.Random(2021)  # noqa: S311 - synthetic benchmark data
    with transaction.atomic():
        _seed(players, qualifications, rng)
        out.write(f"seeded {size}\n")
        with connection.cursor() as cursor:
            # The run is rolled back: check the foreign keys as rows are written, so the
            # time includes what a commit would pay for them.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        with timer() as bare:
            read = _bare_read()
        with timer() as first:
            replayed = titles_recompute_all(reason="bench")
        with timer() as again:
            titles_recompute_all(reason="bench")
        out.write(f"read {read:,} rows; replayed {replayed:,} players\n")
        transaction.set_rollback(True)
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
            size=f"{size}, replay again (no change)",
            value=again[0],
            unit="s",
            baseline=bare[0],
            ratio=again[0] / bare[0],
            goal=f"<= {GOAL_SECONDS:g} s",
            passed=again[0] <= GOAL_SECONDS,
        ),
    ]
