"""The report on the varied models of issue 28 (SPEC §7): boosters counted per model, over
all of them, those with >= 30 games after the change and those with also >= 10 of the owner;
the honest cases and the honest season's boosting flags; several seeds in one command."""

import json
from io import StringIO
from pathlib import Path

from django.core.management import call_command

from integrity.domain.audit import AuditParams
from integrity.report import report


def test_boosters_per_model_and_the_honest_twin() -> None:
    figures = report(players=1000, weeks=1, cheaters=0.03, seed=3, params=AuditParams())
    injected, honest = figures["injected"], figures["honest"]
    assert figures["params"]["models"] == "varied"

    boosters = injected["boosters"]
    assert set(boosters) == {"all", "hire", "hire_revert"}
    # Six boosters, all with >= 30 games of the hired player; three with >= 10 of the owner
    # (all hire_revert), of which boosting flags two, and a strong boosting flag opens a case.
    assert boosters["all"] == {
        "all": {"injected": 6, "flagged": 2, "cased": 2, "recall_cased": 2 / 6},
        "after_30": {"injected": 6, "flagged": 2, "cased": 2, "recall_cased": 2 / 6},
        "after_30_owner_10": {"injected": 3, "flagged": 2, "cased": 2, "recall_cased": 2 / 3},
    }
    assert boosters["hire"]["after_30"]["injected"] == 2
    assert boosters["hire_revert"]["after_30_owner_10"]["cased"] == 2
    assert injected["detectors"]["boosting"] == {
        "flags": 2,
        "false": 0,
        "fdp": 0.0,
        "family_size": 189,
        "false_models": [],
    }
    assert (injected["cases"]["false"], injected["cases"]["false_below_true"]) == (0, True)

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
