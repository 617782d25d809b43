"""Tests for tournaments.simulation and ``manage.py simulate_week``: deterministic, realistic
records that pass ingest (SPEC §3, §9)."""

import gzip
import io
import ipaddress
import json
from collections import defaultdict
from datetime import datetime, time, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from accounts.provinces import PROVINCE_SET
from core.domain.clock import TOUR_TZ
from flows.ingest import games_ingest
from tournaments.domain.cards import validate_deal
from tournaments.models import Event, Game, Seat
from tournaments.simulation import simulate_games, simulate_players

WINDOW = (
    datetime(2021, 2, 1, 10, 0, tzinfo=TOUR_TZ),
    datetime(2021, 2, 7, 23, 59, 59, 999999, tzinfo=TOUR_TZ),
)


def _games(count: int = 300, players: int = 80, seed: int = 1) -> list[dict[str, Any]]:
    return list(
        simulate_games(
            players=simulate_players(players, seed=seed),
            games=count,
            event="2021-W05-Q",
            window=WINDOW,
            seed=seed,
        )
    )


def test_players_are_deterministic_with_ids_provinces_and_sessions() -> None:
    players = simulate_players(50, seed=3, id_prefix="x")

    assert players == simulate_players(50, seed=3, id_prefix="x")
    assert players != simulate_players(50, seed=4, id_prefix="x")
    assert [p.id for p in players] == [f"x{n:07d}" for n in range(1, 51)]
    assert {p.province for p in players} <= PROVINCE_SET
    assert all(p.name and p.device.startswith("d-") and p.activity > 0 for p in players)
    assert all(ipaddress.ip_address(p.ip).version == 4 for p in players)


def test_games_are_deterministic_in_their_arguments() -> None:
    assert _games(seed=1) == _games(seed=1)
    assert _games(seed=1) != _games(seed=2)


def test_games_are_realistic_tables_of_a_real_deck_inside_the_window() -> None:
    games = _games(count=300)

    assert [g["id"] for g in games] == [f"g-2021-W05-Q-{n:07d}" for n in range(1, 301)]
    busy: dict[str, list[tuple[datetime, datetime]]] = defaultdict(list)
    for game in games:
        started = datetime.fromisoformat(game["started_at"])
        ended = datetime.fromisoformat(game["ended_at"])
        assert WINDOW[0] <= started <= ended <= WINDOW[1]
        assert started.date() == ended.date()
        assert time(10) <= started.time()
        assert ended.time() <= time(23, 59, 59)
        assert started.utcoffset() == timedelta(hours=8)
        seats = game["seats"]
        assert len(seats) == 4
        assert len({seat["player"]["id"] for seat in seats}) == 4
        hands = [seat["hand"] for seat in seats]
        validate_deal(hands)
        sizes = sorted(len(hand) for hand in hands)
        if game["ended_by"] == "out":
            assert sizes[0] == 0
            assert sizes[1] >= 1
            assert sizes[3] <= 12
            assert 60 <= (ended - started).total_seconds() <= 175
        else:
            assert game["ended_by"] == "time"
            assert sizes[0] >= 1
            assert sizes[3] <= 10
            assert (ended - started).total_seconds() == 180
        for seat in seats:
            assert seat["team"] is None
            assert set(seat["session"]) == {"ip", "device", "client"}
            busy[seat["player"]["id"]].append((started, ended))
    for spans in busy.values():  # nobody plays two games at once
        spans.sort()
        assert all(a[1] < b[0] for a, b in zip(spans, spans[1:], strict=False))
    endings = [g["ended_by"] for g in games]
    assert 0.7 < endings.count("out") / len(endings) < 0.95


@pytest.mark.django_db
def test_every_simulated_game_passes_ingest(event: Event) -> None:
    games = _games(count=300)

    report = games_ingest(records=games)

    assert (report.ingested, report.rejected, report.conflicts) == (300, [], [])
    assert Seat.objects.count() == 1200


def test_a_window_without_a_whole_hour_in_the_daily_hours_is_an_error() -> None:
    night = (
        datetime(2021, 2, 1, 0, 0, tzinfo=TOUR_TZ),
        datetime(2021, 2, 1, 9, 59, tzinfo=TOUR_TZ),
    )

    with pytest.raises(ValueError, match="no whole hour"):
        list(simulate_games(players=simulate_players(8), games=4, event="E", window=night))


def test_too_few_players_for_the_tables_is_an_error() -> None:
    with pytest.raises(ValueError, match="only 7 exist"):
        list(
            simulate_games(players=simulate_players(7), games=98 * 19 * 2, event="E", window=WINDOW)
        )


@pytest.mark.django_db
def test_simulate_week_writes_a_file_import_games_takes_whole(tmp_path: Path, event: Event) -> None:
    path = tmp_path / "week.jsonl.gz"
    out = io.StringIO()

    call_command("simulate_week", str(path), "--players", "60", "--games", "120", stdout=out)

    assert out.getvalue() == f"{path}: 120 games of event 2021-W05-Q (60 players)\n"
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines]
    assert len(records) == 120
    assert {r["event"] for r in records} == {"2021-W05-Q"}
    imported = io.StringIO()
    call_command("import_games", str(path), "--quiet", stdout=imported)
    assert imported.getvalue().startswith(
        f"{path}: 120 lines: ingested 120, duplicates 0, conflicts 0, rejected 0"
    )
    assert Game.objects.count() == 120
