"""Commands: ``audit`` (event or window, JSON out), ``simulate_season`` (records v1 that
``season_create`` + ``import_games`` take in) and ``integrity_report``."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from integrity.models import AuditRun
from integrity.simulation import Season
from tournaments.models import Event, Game

pytestmark = pytest.mark.django_db


def test_audit_an_event_and_write_json(simulated: tuple[Season, Event], tmp_path: Path) -> None:
    season, event = simulated
    out = StringIO()
    path = tmp_path / "audit.json"

    call_command("audit", "--event", event.code, "--json", str(path), stdout=out)

    assert out.getvalue().startswith(f"audit event:{event.code}: ")
    data = json.loads(path.read_text())
    assert data["run"] == f"event:{event.code}"
    [farm] = season.labels.farms
    first = data["cases"][0]
    assert set(farm) <= set(first["players"])
    assert set(first) == {"players", "families", "score"}
    scores = [case["score"] for case in data["cases"]]
    assert scores == sorted(scores, reverse=True)
    assert data["flags"]
    assert all(
        set(flag) == {"detector", "players", "statistic", "p", "q"} for flag in data["flags"]
    )
    run = AuditRun.objects.get()
    assert len(data["flags"]) == run.stats["flag_rows"]


def test_audit_a_window_of_days(simulated: tuple[Season, Event]) -> None:
    out = StringIO()
    call_command("audit", "--from", "2021-01-04", "--to", "2021-01-10", stdout=out)
    assert AuditRun.objects.get().key == "window:2021-01-04:2021-01-10"
    with pytest.raises(CommandError, match="give --event"):
        call_command("audit")
    with pytest.raises(CommandError, match="no event"):
        call_command("audit", "--event", "nope")


def test_simulate_season_then_import(tmp_path: Path) -> None:
    games, labels = tmp_path / "games.jsonl.gz", tmp_path / "labels.json"
    out = StringIO()
    call_command(
        "simulate_season",
        "--players=60",
        "--weeks=1",
        "--cheaters=0.1",
        "--seed=3",
        f"--out={games}",
        f"--labels={labels}",
        stdout=out,
    )
    assert "of 2021-W01-Q (60 players)" in out.getvalue()
    assert set(json.loads(labels.read_text())) == {"farms", "pairs", "boosters"}

    call_command("season_create", "2021", "--start", "2021-01-04", stdout=StringIO())
    imported = StringIO()
    call_command("import_games", str(games), "--quiet", stdout=imported)
    assert "rejected 0" in imported.getvalue()
    assert Game.objects.filter(event__code="2021-W01-Q").count() > 0


def test_integrity_report_prints_the_figures(tmp_path: Path) -> None:
    out = StringIO()
    path = tmp_path / "report.json"
    call_command(
        "integrity_report",
        "--players=400",
        "--weeks=1",
        "--cheaters=0.03",
        "--seed=1",
        "--models=legacy",
        f"--json={path}",
        stdout=out,
    )
    text = out.getvalue()
    assert "farms: injected 2, with >= 20 shared games 2" in text
    assert "precision@k (k=4): 4/4 = 1.000" in text
    assert "q 0.01 (pair tests 0.01)" in text
    assert "[honest season]" in text
    assert json.loads(path.read_text())["params"]["seed"] == 1


def test_integrity_report_prints_how_near_a_missed_pair_came() -> None:
    out = StringIO()
    call_command(
        "integrity_report",
        "--players=600",
        "--weeks=1",
        "--cheaters=0.03",
        "--seed=4",
        "--models=varied",
        stdout=out,
    )
    assert (
        "    missed dump pair, 26 shared games; smallest q: pointflow 0.41, together -, fed 0.015, "
        "kept 0.52\n"
    ) in out.getvalue()
