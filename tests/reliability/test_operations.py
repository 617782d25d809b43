"""Operations: the documented backup and restore (docs/reliability.md) works.

PostgreSQL only: games ingested through ``games_ingest``, a qualification approved into a
Master title through the titles services; the database is dumped with ``pg_dump -Fc``,
restored with ``pg_restore`` into a new database, and every game, qualification and title is
found there again (row counts and a SHA-256 over their key columns equal).
"""

import hashlib
import subprocess
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from accounts.models import Player
from flows import grants
from flows.ingest import games_ingest
from tests.tournaments.conftest import make_record
from tests.tournaments.factories import local, make_event, make_season
from titles import services as titles

pytestmark = [pytest.mark.django_db(transaction=True)]

#: table -> the key columns whose values must survive the round trip, in a fixed order.
CHECKED = {
    "tournaments_game": "record_id, digest, ended_at",
    "tournaments_seat": "game_id, seat, player_id, score",
    "titles_qualification": 'player_id, source, status, version, "on"',
    "titles_playertitle": "player_id, status, valid_until, lifetime_since",
    "titles_titleterm": "player_id, code, start, valid_until, state",
}


def fingerprint(dbname: str) -> dict[str, tuple[int, str]]:
    """Per table: the row count and a SHA-256 of the key columns of every row, sorted."""
    db = connection.settings_dict
    found = {}
    with psycopg.connect(
        host=db["HOST"], port=db["PORT"] or 5432, user=db["USER"], dbname=dbname
    ) as conn:
        for table, columns in CHECKED.items():
            rows = conn.execute(f"SELECT {columns} FROM {table} ORDER BY {columns}").fetchall()  # noqa: S608
            digest = hashlib.sha256(repr(rows).encode()).hexdigest()
            found[table] = (len(rows), digest)
    return found


def pg(*command: str) -> None:
    db = connection.settings_dict
    subprocess.run(  # noqa: S603 - fixed PostgreSQL client commands
        [*command, "-h", db["HOST"], "-p", str(db["PORT"] or 5432), "-U", db["USER"]],
        check=True,
        capture_output=True,
    )


@pytest.fixture
def restored_name() -> Iterator[str]:
    name = f"{connection.settings_dict['NAME']}_restored"
    pg("dropdb", "--if-exists", name)
    yield name
    pg("dropdb", "--if-exists", name)


def test_pg_dump_and_pg_restore_bring_back_every_game_qualification_and_title(
    restored_name: str, tmp_path: Path, ci_log: Callable[[str], None]
) -> None:
    season = make_season()
    event = make_event(season, "2021-W05-Q", ends_at=local(2021, 2, 7, 23))
    records = [
        make_record(
            f"g-{i}",
            players=[f"p{i % 5}", f"p{i % 5 + 5}", f"p{i % 5 + 10}", f"p{i % 5 + 15}"],
            started_at=f"2021-02-0{1 + i % 6}T1{i % 9}:00:00+08:00",
            ended_at=f"2021-02-0{1 + i % 6}T1{i % 9}:02:00+08:00",
        )
        for i in range(30)
    ]
    assert games_ingest(records=records).ingested == 30
    player = Player.objects.get(external_id="p0")
    pending = titles.achievement_record(
        achievement="monthly_champion",
        player=player,
        on=date(2021, 2, 1),
        source=f"event:{event.code}:champion",
        evidence={"event": event.code},
        by=None,
    )
    assert pending is not None
    grants.qualification_approve(
        qualification=pending, by=None, reason="backup test", expected_version=pending.version
    )
    original = fingerprint(connection.settings_dict["NAME"])
    assert original["tournaments_game"][0] == 30
    assert original["titles_titleterm"][0] == 1

    dump = tmp_path / "unotour.dump"
    pg("pg_dump", "-Fc", "-f", str(dump), "-d", connection.settings_dict["NAME"])
    pg("createdb", restored_name)
    pg("pg_restore", "--no-owner", "--exit-on-error", "-d", restored_name, str(dump))

    assert fingerprint(restored_name) == original
    ci_log(
        f"backup: pg_dump -Fc ({dump.stat().st_size:,} bytes) and pg_restore; "
        + ", ".join(f"{table} {count}" for table, (count, _) in original.items())
        + " rows found again, checksums equal"
    )
