"""The report on the varied models of issue 28 (SPEC §7): boosters counted per model, over
all of them, those with >= 30 games after the change and those with also >= 10 of the owner;
the honest cases and the honest season's boosting flags; several seeds in one command."""

import json
from datetime import datetime
from io import StringIO
from pathlib import Path

from django.core.management import call_command

from core.domain.clock import TOUR_TZ
from integrity.domain.audit import AuditParams
from integrity.domain.data import hour_bucket
from integrity.report import evaluate, report, run_season


def test_boosters_per_model_and_the_honest_twin() -> None:
    figures = report(players=1000, weeks=1, cheaters=0.03, seed=3, params=AuditParams())
    injected, honest = figures["injected"], figures["honest"]
    assert figures["params"]["models"] == "varied"

    boosters = injected["boosters"]
    assert set(boosters) == {"all", "hire", "hire_revert"}
    # Six boosters, four with >= 30 games of the hired player, two with also >= 10 of the
    # owner; boosting flags four, and a strong boosting flag opens a case on its own.
    assert boosters["all"] == {
        "all": {"injected": 6, "flagged": 4, "cased": 4, "recall_cased": 4 / 6},
        "after_30": {"injected": 4, "flagged": 2, "cased": 2, "recall_cased": 2 / 4},
        "after_30_owner_10": {"injected": 2, "flagged": 2, "cased": 2, "recall_cased": 1.0},
    }
    assert boosters["hire"]["after_30"]["injected"] == 3
    assert boosters["hire_revert"]["after_30_owner_10"]["cased"] == 1
    # One false boosting flag (an honest account on a phone and a tablet): its case ranks
    # below every true case.
    assert injected["detectors"]["boosting"] == {
        "flags": 5,
        "false": 1,
        "fdp": 0.2,
        "family_size": 178,
        # No daily form in this population: its days differ no more than its games.
        "day_icc": 0.0,
        "false_models": ["mobile+tablet"],
    }
    assert (injected["cases"]["false"], injected["cases"]["false_below_true"]) == (1, True)
    # Pairs are counted per model.
    assert {m: r["injected"] for m, r in injected["pairs"]["by_model"].items()} == {
        "assist": 1,
        "dump": 1,
        "last": 1,
        "quiet": 2,
    }

    # The honest twin (heavy players and improvers included): no boosting flag, no case.
    assert honest["detectors"]["boosting"]["flags"] == 0
    assert honest["detectors"]["boosting"]["false_models"] == []
    assert honest["cases"]["total"] == 0


def test_the_command_runs_several_seeds(tmp_path: Path) -> None:
    out = StringIO()
    path = tmp_path / "report.json"
    call_command(
        "integrity_report",
        "--players=300",
        "--weeks=1",
        "--cheaters=0.03",
        "--seeds=1,2",
        f"--json={path}",
        stdout=out,
    )
    text = out.getvalue()
    assert text.count("integrity_report: 300 players, 1 weeks, cheaters 0.03, seed ") == 2
    assert "models varied" in text
    assert "boosters all: in cases " in text
    assert "with >= 30 games after the change in cases " in text
    assert "[summary per seed]" in text
    assert " seed 1: cases " in text
    assert " seed 2: cases " in text
    assert set(json.loads(path.read_text())["seeds"]) == {"1", "2"}


def test_a_week_of_history_is_boostings_baseline() -> None:
    params = AuditParams()
    run = run_season(players=1000, weeks=1, cheaters=0.03, seed=3, params=params, history_weeks=1)
    window_start = datetime(2021, 1, 11, tzinfo=TOUR_TZ)
    # The audited tables are the second week's; every hired player starts in it.
    assert min(table.hour for table in run.tables) >= hour_bucket(window_start)
    assert run.season.labels.boosts
    assert all(boost.change_at >= window_start for boost in run.season.labels.boosts)
    # The boosters' games are counted in the window only.
    for player, (owner, hired) in run.boosted.items():
        assert owner + hired == sum(player in table.players for table in run.tables)
    # Five flags, all boosters, each block starting in the window after the account's own
    # games of the week before.
    flags = run.outcome.boosting.flags
    assert sorted((f.player, f.history, f.segment) for f in flags) == [
        ("p0000074", 63, (78, 96)),
        ("p0000087", 48, (60, 79)),
        ("p0000235", 38, (48, 118)),
        ("p0000461", 30, (38, 72)),
        ("p0000893", 60, (76, 131)),
    ]
    assert {f.player for f in flags} <= set(run.season.labels.boosters)
    assert evaluate(run)["boosters"]["all"] == {
        "all": {"injected": 6, "flagged": 5, "cased": 5, "recall_cased": 5 / 6},
        "after_30": {"injected": 4, "flagged": 3, "cased": 3, "recall_cased": 3 / 4},
        "after_30_owner_10": {"injected": 3, "flagged": 3, "cased": 3, "recall_cased": 1.0},
    }
