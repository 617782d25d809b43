"""The benchmark registry of ``manage.py bench``: every stage module registers, the command
refuses an unknown stage before running any, and a run writes its table and its JSON."""

import importlib
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bench import registry
from bench.registry import STAGE_MODULES, STAGES, Result, format_table, stage, write_json


def _result(name: str, passed: bool) -> Result:
    return Result(
        stage=name,
        size="1 row",
        value=2.0,
        unit="s",
        baseline=1.0,
        ratio=2.0,
        goal="ratio <= 2",
        passed=passed,
    )


def test_every_stage_module_registers_its_stage() -> None:
    for module in STAGE_MODULES:
        importlib.import_module(module)
    assert set(STAGES) == {"ingest", "replay", "leaderboard", "audit", "titles", "read", "console"}


def test_an_unknown_stage_is_refused_with_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match=r"unknown stage\(s\) \['nosuch'\]; known: \["):
        call_command("bench", "nosuch", "--json", str(tmp_path / "b.json"))
    assert not (tmp_path / "b.json").exists()


def test_a_run_prints_one_table_and_writes_the_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registry, "STAGES", dict(STAGES))
    calls: list[float] = []

    @stage("fake")
    def fake(scale: float, out: object) -> list[Result]:
        calls.append(scale)
        return [_result("fake a", True), _result("fake b", False)]

    out = io.StringIO()
    path = tmp_path / "bench.json"
    monkeypatch.setattr("bench.management.commands.bench.STAGES", registry.STAGES)
    call_command("bench", "fake", "--scale", "0.5", "--json", str(path), stdout=out)

    assert calls == [0.5]
    text = out.getvalue()
    assert "-- fake (scale 0.5)" in text
    assert text.count("PASS") == 1
    assert text.count("FAIL") == 1
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["scale"] == 0.5
    assert [r["stage"] for r in written["results"]] == ["fake a", "fake b"]
    assert [r["passed"] for r in written["results"]] == [True, False]


def test_format_table_aligns_columns_under_a_rule() -> None:
    lines = format_table([_result("x", True), _result("a longer stage", False)]).splitlines()
    header = ["stage", "size", "value", "unit", "baseline", "ratio", "goal", "pass"]
    assert lines[0].split() == header
    assert set(lines[1].replace(" ", "")) == {"-"}
    assert {line.index("1 row") for line in lines[2:]} == {lines[0].index("size")}
    assert lines[2].startswith("x ")
    assert lines[3].startswith("a longer stage")


def test_write_json_keeps_the_machine(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    write_json([_result("x", True)], str(path), scale=0.01, machine="box x86_64 2 cpu")
    assert json.loads(path.read_text(encoding="utf-8"))["machine"] == "box x86_64 2 cpu"
