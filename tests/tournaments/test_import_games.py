"""Tests for ``manage.py import_games`` (JSON Lines of game records v1, SPEC §9)."""

import gzip
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from tests.tournaments.conftest import make_record
from tournaments.models import Event, Game

Counts = Callable[[], dict[str, int]]
OTHERS = ("a1", "a2", "a3", "a4")
LINES = [
    json.dumps(make_record("g-1"), ensure_ascii=False),  # 1 ingested
    "not json",  # 2
    "",  # 3 blank: skipped
    json.dumps(make_record("g-2", hands=([], ["R5"], ["G7", "R10"], ["WD4"]))),  # 4 rejected
    json.dumps(make_record("g-3", players=OTHERS)),  # 5 ingested
    json.dumps(make_record("g-1", hands=([], ["R6"], ["G7"], ["WD4"]))),  # 6 conflict
    json.dumps(make_record("g-3", players=OTHERS)),  # 7 duplicate
    "NaN",  # 8
    '["a list"]',  # 9
]
REJECTS = [
    {
        "line": 2,
        "id": None,
        "field": "record",
        "reason": "not JSON: Expecting value: line 1 column 1 (char 0)",
        "record": "not json",
    },
    {
        "line": 4,
        "id": "g-2",
        "field": "seats[2].hand[1]",
        "reason": "unknown card 'R10'",
        "record": json.loads(LINES[3]),
    },
    {
        "line": 6,
        "id": "g-1",
        "field": "id",
        "reason": "id g-1 is already stored with a different record",
        "record": json.loads(LINES[5]),
    },
    {
        "line": 8,
        "id": None,
        "field": "record",
        "reason": "not JSON: NaN is not JSON",
        "record": "NaN",
    },
    {
        "line": 9,
        "id": None,
        "field": "record",
        "reason": "a game record must be a JSON object",
        "record": ["a list"],
    },
]


def _write(path: Path, lines: list[str]) -> Path:
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return path


def _import(path: Path, *args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_games", str(path), *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _rejects(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["week.jsonl", "week.jsonl.gz"])
def test_a_file_is_imported_with_a_summary_and_a_rejects_file(
    tmp_path: Path, event: Event, name: str
) -> None:
    path = _write(tmp_path / name, LINES)

    out, _ = _import(path, "--quiet", "--batch-size", "2")

    assert out == (
        f"{path}: 9 lines: ingested 2, duplicates 1, conflicts 1, rejected 4\n"
        f"rejects: {path}.rejects.jsonl\n"
    )
    assert _rejects(Path(f"{path}.rejects.jsonl")) == REJECTS
    assert sorted(Game.objects.values_list("record_id", flat=True)) == ["g-1", "g-3"]


@pytest.mark.django_db
def test_running_the_same_file_again_changes_nothing(
    tmp_path: Path, event: Event, db_counts: Counts
) -> None:
    path = _write(tmp_path / "week.jsonl", LINES)
    _import(path, "--quiet")
    before = db_counts()

    out, _ = _import(path, "--quiet", "--rejects", str(tmp_path / "again.jsonl"))

    assert out == (
        f"{path}: 9 lines: ingested 0, duplicates 3, conflicts 1, rejected 4\n"
        f"rejects: {tmp_path / 'again.jsonl'}\n"
    )
    assert db_counts() == before
    assert _rejects(tmp_path / "again.jsonl") == REJECTS


@pytest.mark.django_db
def test_the_progress_bar_goes_to_stderr_unless_quiet(tmp_path: Path, event: Event) -> None:
    path = _write(tmp_path / "week.jsonl", LINES[:1])

    _, err = _import(path)
    _, quiet = _import(path, "--quiet")

    assert "week.jsonl: 100%" in err
    assert quiet == ""


@pytest.mark.django_db
def test_a_clean_file_leaves_an_empty_rejects_file(tmp_path: Path, event: Event) -> None:
    path = _write(tmp_path / "week.jsonl", LINES[:1])

    out, _ = _import(path, "--quiet")

    assert out.startswith(f"{path}: 1 lines: ingested 1, duplicates 0, conflicts 0, rejected 0")
    assert Path(f"{path}.rejects.jsonl").read_text() == ""


@pytest.mark.django_db
def test_a_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no such file"):
        _import(tmp_path / "nope.jsonl")


@pytest.mark.django_db
def test_a_corrupt_gzip_is_an_error_after_the_batches_read(
    tmp_path: Path, event: Event, db_counts: Counts
) -> None:
    path = tmp_path / "week.jsonl.gz"
    path.write_bytes(b"not gzip at all")

    with pytest.raises(CommandError, match="cannot read"):
        _import(path, "--quiet")
    assert db_counts()["Game"] == 0


@pytest.mark.django_db
def test_a_fixed_rejects_file_is_imported_again(tmp_path: Path, event: Event) -> None:
    path = _write(tmp_path / "week.jsonl", LINES)
    _import(path, "--quiet")
    rows = _rejects(Path(f"{path}.rejects.jsonl"))
    # The organiser fixes the bad card of g-2 and the line that was not JSON, in place.
    rows[1]["record"]["seats"][2]["hand"] = ["G7", "R1"]
    rows[0]["record"] = json.dumps(make_record("g-4", players=("b1", "b2", "b3", "b4")))
    fixed = _write(tmp_path / "fixed.jsonl", [json.dumps(row, ensure_ascii=False) for row in rows])

    out, _ = _import(fixed, "--quiet")

    assert out.startswith(f"{fixed}: 5 lines: ingested 2, duplicates 0, conflicts 1, rejected 2")
    again = _rejects(Path(f"{fixed}.rejects.jsonl"))
    assert [(row["line"], row["id"], row["record"]) for row in again] == [
        (3, "g-1", REJECTS[2]["record"]),
        (4, None, "NaN"),
        (5, None, ["a list"]),
    ]
    assert sorted(Game.objects.values_list("record_id", flat=True)) == ["g-1", "g-2", "g-3", "g-4"]


@pytest.mark.django_db
def test_a_gzip_file_is_read_by_its_magic_bytes_whatever_its_name(
    tmp_path: Path, event: Event
) -> None:
    path = tmp_path / "week.jsonl"
    path.write_bytes(gzip.compress((LINES[0] + "\n" + LINES[4] + "\n").encode()))

    out, _ = _import(path, "--quiet")

    assert out.startswith(f"{path}: 2 lines: ingested 2, duplicates 0, conflicts 0, rejected 0")
