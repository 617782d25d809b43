"""Chances stored at ingest (issue 28; tournaments/services/ingest_validation.py,
game_copy.py): the replay that checks a logged game's log reads its chances too, and they land
on the actors' seats as (target player id, kind, chances, punished) quadruples; a game without
a log, and a seat without a chance, store nothing. The migrations that added the column and
the kind fill it the same way for games logged before them. A log is stored with its column's
compression."""

import importlib
from collections import Counter
from typing import Any

import pytest
from django.apps import apps
from django.db import connection

from flows.ingest import games_ingest
from tests.tournaments.conftest import PLAYERS, make_record
from tests.tournaments.test_rules_of_play import logged
from tournaments.domain.chances import chances_of
from tournaments.domain.rules import PRESETS
from tournaments.models import Event, Seat

CLASSIC = PRESETS["classic"]
SEEDS = range(1, 13)

pytestmark = pytest.mark.django_db


def _expected(record: dict[str, Any], pks: dict[str, int]) -> dict[str, list[int] | None]:
    """Each player's stored chances as the pure reading of the record's log gives them:
    per target in seat order and kind, (target pk, kind, chances, punished)."""
    seat_of = {seat["player"]["id"]: i for i, seat in enumerate(record["seats"])}
    counts: Counter[tuple[str, str, int]] = Counter()
    punished: Counter[tuple[str, str, int]] = Counter()
    for actor, target, kind, hit in chances_of(record, CLASSIC):
        counts[actor, target, kind] += 1
        punished[actor, target, kind] += hit
    stored: dict[str, list[int] | None] = dict.fromkeys(seat_of)
    for actor, target, kind in sorted(counts, key=lambda k: (seat_of[k[0]], seat_of[k[1]], k[2])):
        quadruple = [pks[target], kind, counts[actor, target, kind], punished[actor, target, kind]]
        stored[actor] = [*(stored[actor] or []), *quadruple]
    return stored


def _stored(record_id: str) -> dict[str, list[int] | None]:
    seats = Seat.objects.filter(game__record_id=record_id).select_related("player")
    return {seat.player.external_id: seat.chances for seat in seats}


def _pks() -> dict[str, int]:
    seats = Seat.objects.select_related("player")
    return {seat.player.external_id: seat.player_id for seat in seats}


def test_a_logged_game_stores_its_chances_on_the_actors_seats(event: Event) -> None:
    records = [logged(CLASSIC, seed, f"g-log-{seed:02d}") for seed in SEEDS]
    report = games_ingest(records=[*records, make_record("g-nolog")], source="test")
    assert (report.ingested, report.rejected) == (len(SEEDS) + 1, [])
    pks = _pks()

    for record in records:
        assert _stored(record["id"]) == _expected(record, pks), record["id"]
    assert _stored("g-nolog") == dict.fromkeys(PLAYERS)
    stored = [chances for chances in Seat.objects.values_list("chances", flat=True) if chances]
    by_kind: dict[int, list[int]] = {}
    for c in stored:
        for at in range(0, len(c), 4):
            counts = by_kind.setdefault(c[at + 1], [0, 0, 0])
            counts[0] += 1
            counts[1] += c[at + 2]
            counts[2] += c[at + 3]
    # Twelve games (classic: +4s may be challenged, 7s swap nothing), 30 of their 48 seats
    # with chances. Per kind, the (actor, target) entries, their chances and the bots'
    # punishments: 25 chances to punish, 21 taken; 21 +4s faced, 5 challenged (the bots
    # challenge 30 % of them).
    assert len(stored) == 30
    assert by_kind == {0: [19, 25, 21], 1: [21, 21, 5]}


def test_the_migration_fills_the_chances_of_games_logged_before_it(event: Event) -> None:
    records = [logged(CLASSIC, seed, f"g-log-{seed:02d}") for seed in SEEDS]
    games_ingest(records=[*records, make_record("g-nolog")], source="test")
    before = {record["id"]: _stored(record["id"]) for record in [*records, make_record("g-nolog")]}
    # A game whose hands were fixed after ingest: its moves still show its chances.
    fixed = Seat.objects.filter(game__record_id="g-log-01", seat=1).get()
    fixed.hand = "R1"
    fixed.save(update_fields=["hand"])
    Seat.objects.update(chances=None)

    migration = importlib.import_module("tournaments.migrations.0014_seat_chances")
    migration.backfill(apps, None)
    assert {game: _stored(game) for game in before} == before

    # Seats holding chances without their kind are read again, with it.
    Seat.objects.filter(chances__isnull=False).update(chances=[1, 2, 3])
    kinds = importlib.import_module("tournaments.migrations.0015_seat_chance_kinds")
    kinds.reread(apps, None)
    assert {game: _stored(game) for game in before} == before


def test_logs_are_compressed_as_their_column_says(event: Event) -> None:
    """A log compressed in the COPY's staging table is moved into the games as it is: the
    staging column takes the games' compression (lz4 where the server has it)."""
    games_ingest(records=[logged(CLASSIC, seed, f"g-log-{seed:02d}") for seed in SEEDS])
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attcompression FROM pg_attribute "
            "WHERE attrelid = 'tournaments_game'::regclass AND attname = 'log'"
        )
        (method,) = cursor.fetchone()
        cursor.execute(
            "SELECT pg_column_compression(log), count(*) FROM tournaments_game GROUP BY 1"
        )
        stored = dict(cursor.fetchall())
    expected = {"l": "lz4", "p": "pglz"}.get(method, "pglz")
    assert set(stored) - {None} == {expected}
    assert sum(stored.values()) == len(SEEDS)
