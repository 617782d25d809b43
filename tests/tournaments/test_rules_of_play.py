"""Rules of play through the services, the API and the commands (SPEC §3, §9 move log v1):
a season's and an event's ruleset, ingest replaying logs, ``replay_logs``, ``season_create
--ruleset`` and ``simulate_week --logs``."""

import gzip
import io
import json
import random
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from core.domain.clock import TOUR_TZ
from flows.ingest import games_ingest
from tests.tournaments.conftest import make_record
from tournaments.domain.engine import play_game
from tournaments.domain.movelog import replay
from tournaments.domain.rules import PRESETS, Ruleset
from tournaments.models import CalendarChange, Event, Game, Season

START = datetime(2021, 2, 1, 10, 0, 3, tzinfo=TOUR_TZ)


def logged(rules: Ruleset, seed: int, record_id: str = "g-log-1") -> dict[str, Any]:
    """An engine game of the ``event`` fixture as a record with its log."""
    game = play_game(rules, random.Random(seed))
    ended = START + timedelta(seconds=max(1, -(-game.duration_ms // 1000)))
    return make_record(
        record_id,
        started_at=START.isoformat(),
        ended_at=ended.isoformat(),
        ended_by=game.ended_by,
        hands=game.hands,
        log=json.loads(json.dumps(game.log)),
    )


def stacked_seed() -> int:
    """The first seed whose ubisoft game stacks a draw (so classic refuses its log)."""
    for seed in range(500):
        record = logged(PRESETS["ubisoft"], seed)
        if not replay(record, PRESETS["classic"]).ok:
            return seed
    raise AssertionError("no stacking game in 500 seeds")


def test_a_logged_game_lands_with_its_log(event: Event) -> None:
    record = logged(PRESETS["classic"], 1)
    report = games_ingest(records=[record])
    assert (report.ingested, report.rejected) == (1, [])
    assert Game.objects.get(record_id="g-log-1").log == record["log"]


def test_a_log_that_does_not_replay_is_rejected_with_the_replays_reason(
    event: Event, db_counts: Any
) -> None:
    record = logged(PRESETS["classic"], 1)
    moves = record["log"]["moves"]
    index = next(i for i, move in enumerate(moves) if "draw" in move)
    moves[index]["draw"] += 1
    verdict = replay(record, PRESETS["classic"])
    assert not verdict.ok
    before = db_counts()
    report = games_ingest(records=[record])
    assert report.ingested == 0
    assert [(r.field, r.reason) for r in report.rejected] == [("log", str(verdict))]
    assert db_counts() == before


def test_the_event_ruleset_overrides_the_seasons(event: Event) -> None:
    seed = stacked_seed()
    record = logged(PRESETS["ubisoft"], seed)
    report = games_ingest(records=[record])
    assert [r.field for r in report.rejected] == ["log"]
    assert report.rejected[0].reason.startswith("move ")
    event.play_ruleset = {"preset": "ubisoft", "switches": {}}
    event.save()
    assert games_ingest(records=[record]).ingested == 1


def test_a_season_ruleset_applies_to_its_events(event: Event, season: Season) -> None:
    record = logged(PRESETS["ubisoft"], stacked_seed())
    season.play_ruleset = {"preset": "ubisoft", "switches": {}}
    season.save()
    assert games_ingest(records=[record]).ingested == 1


def test_a_broken_stored_ruleset_refuses_the_events_records(event: Event, db_counts: Any) -> None:
    event.play_ruleset = {"preset": "hearts"}
    event.save()
    before = db_counts()
    report = games_ingest(records=[make_record()])
    assert [(r.field, r.reason) for r in report.rejected] == [
        (
            "event",
            "the rules of play of event 2021-W05-Q are invalid: unknown preset 'hearts' "
            "(known: classic, yiqiyounuo, ubisoft, wango)",
        )
    ]
    assert db_counts() == before


def test_replay_logs_prints_one_verdict_a_record_and_writes_nothing(
    event: Event, tmp_path: Path
) -> None:
    good = logged(PRESETS["classic"], 1, "g-good")
    bad = logged(PRESETS["classic"], 2, "g-bad")
    bad["log"]["moves"][1]["seat"] = (bad["log"]["moves"][1]["seat"] + 1) % 4
    verdict = replay(bad, PRESETS["classic"])
    path = tmp_path / "games.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as stream:
        for row in (good, make_record("g-nolog"), bad):
            stream.write(json.dumps(row) + "\n")
        stream.write("not json\n")
    out = io.StringIO()
    call_command("replay_logs", str(path), stdout=out)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert rows[:3] == [
        {"id": "g-good", "ok": True, "move": None, "reason": None},
        {"id": "g-nolog", "ok": True, "move": None, "reason": None},
        {"id": "g-bad", "ok": False, "move": verdict.move, "reason": verdict.reason},
    ]
    assert rows[3]["id"] is None
    assert rows[3]["ok"] is False
    assert rows[3]["reason"].startswith("line 4: ")
    assert Game.objects.count() == 0


def test_replay_logs_takes_a_ruleset_and_refuses_a_bad_one(tmp_path: Path, db: Any) -> None:
    record = logged(PRESETS["ubisoft"], stacked_seed())
    record["event"] = "no-such-event"
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    out = io.StringIO()
    call_command("replay_logs", str(path), stdout=out)  # unknown event: classic
    assert json.loads(out.getvalue())["ok"] is False
    out = io.StringIO()
    call_command("replay_logs", str(path), "--ruleset", "ubisoft", stdout=out)
    assert json.loads(out.getvalue())["ok"] is True
    with pytest.raises(CommandError, match=r"^--ruleset: unknown preset 'uno' "):
        call_command("replay_logs", str(path), "--ruleset", "uno")
    with pytest.raises(CommandError, match=r"^no such file: "):
        call_command("replay_logs", str(tmp_path / "missing.jsonl"))


def test_season_create_takes_a_ruleset(db: Any) -> None:
    call_command(
        "season_create", "2022", "--start", "2022-01-03", "--ruleset", "wango", stdout=io.StringIO()
    )
    spec = '{"preset": "classic", "switches": {"seven_zero": true}}'
    call_command(
        "season_create", "2023", "--start", "2023-01-02", "--ruleset", spec, stdout=io.StringIO()
    )
    call_command("season_create", "2024", "--start", "2024-01-01", stdout=io.StringIO())
    assert {s.year: s.play_ruleset for s in Season.objects.all()} == {
        2022: {"preset": "wango", "switches": {}},
        2023: {"preset": "classic", "switches": {"seven_zero": True}},
        2024: {"preset": "classic", "switches": {}},
    }
    with pytest.raises(CommandError, match=r"^--ruleset: stacking: 'x' is not one of "):
        call_command(
            "season_create",
            "2025",
            "--start",
            "2025-01-06",
            "--ruleset",
            '{"switches": {"stacking": "x"}}',
        )
    assert not Season.objects.filter(year=2025).exists()


def test_the_api_creates_a_season_with_a_ruleset_and_changes_it(
    organiser_api: APIClient,
) -> None:
    body = {
        "year": 2022,
        "start": "2022-01-03",
        "play_ruleset": {"preset": "ubisoft", "switches": {"seven_zero": True}},
    }
    created = organiser_api.post("/api/seasons/", body, format="json")
    assert created.status_code == 201
    assert created.json()["ruleset"]["play_ruleset"] == {
        "preset": "ubisoft",
        "switches": {"seven_zero": True},
    }
    bad = organiser_api.post(
        "/api/seasons/", {**body, "year": 2023, "play_ruleset": "hearts"}, format="json"
    )
    assert bad.status_code == 400
    assert bad.json()["fields"] == {
        "play_ruleset": "unknown preset 'hearts' (known: classic, yiqiyounuo, ubisoft, wango)"
    }
    assert not Season.objects.filter(year=2023).exists()
    changed = organiser_api.patch(
        "/api/seasons/2022/", {"play_ruleset": "yiqiyounuo", "reason": "网易规则"}, format="json"
    )
    assert changed.status_code == 200
    assert changed.json()["ruleset"]["play_ruleset"] == {"preset": "yiqiyounuo", "switches": {}}
    log = CalendarChange.objects.filter(action=CalendarChange.Action.RULESET).get()
    assert (log.diff["play_ruleset"]["before"], log.diff["play_ruleset"]["after"]) == (
        {"preset": "ubisoft", "switches": {"seven_zero": True}},
        {"preset": "yiqiyounuo", "switches": {}},
    )


def test_the_api_adds_an_event_with_its_own_ruleset(organiser_api: APIClient) -> None:
    organiser_api.post("/api/seasons/", {"year": 2021, "start": "2021-01-04"}, format="json")
    add = {
        "season": 2021,
        "code": "2021-NC",
        "kind": "championship",
        "format": "seated",
        "starts_at": "2021-12-01T10:00:00+08:00",
        "ends_at": "2021-12-02T23:00:00+08:00",
        "reason": "全国锦标赛",
        "play_ruleset": {"preset": "classic", "switches": {"hand_size": 5}},
    }
    bad = organiser_api.post(
        "/api/events/", {**add, "play_ruleset": {"switches": {"draw": 2}}}, format="json"
    )
    assert (bad.status_code, bad.json()["fields"]) == (
        400,
        {"play_ruleset": "draw: 2 is not one of one, one_only, until_playable"},
    )
    assert not Event.objects.filter(code="2021-NC").exists()
    created = organiser_api.post("/api/events/", add, format="json")
    assert created.status_code == 201
    assert created.json()["play_ruleset"] == {"preset": "classic", "switches": {"hand_size": 5}}
    assert Event.objects.get(code="2021-NC").play_rules().hand_size == 5


def test_a_week_simulated_with_logs_passes_ingest(event: Event, tmp_path: Path) -> None:
    path = tmp_path / "week.jsonl"
    call_command(
        "simulate_week",
        str(path),
        "--players",
        "400",
        "--games",
        "120",
        "--logs",
        "classic",
        stdout=io.StringIO(),
    )
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 120
    assert all(record["log"]["v"] == 1 for record in records)
    report = games_ingest(records=records)
    assert (report.ingested, report.rejected) == (120, [])


def test_a_season_simulated_with_logs_passes_ingest_end_to_end(db: Any, tmp_path: Path) -> None:
    call_command("season_create", "2021", "--start", "2021-01-04", stdout=io.StringIO())
    games, labels = tmp_path / "season.jsonl.gz", tmp_path / "labels.json"
    call_command(
        "simulate_season",
        "--players",
        "60",
        "--weeks",
        "1",
        "--cheaters",
        "0",
        "--seed",
        "3",
        "--logs",
        "classic",
        "--out",
        str(games),
        "--labels",
        str(labels),
        stdout=io.StringIO(),
    )
    with gzip.open(games, "rt", encoding="utf-8") as stream:
        records = [json.loads(line) for line in stream]
    assert len(records) == 150
    assert {record["event"] for record in records} == {"2021-W01-Q"}
    assert all(record["log"]["v"] == 1 for record in records)
    out = io.StringIO()
    call_command("import_games", str(games), "--quiet", stdout=out)
    assert Game.objects.filter(event__code="2021-W01-Q").count() == 150
    assert Game.objects.filter(log__isnull=True).count() == 0
