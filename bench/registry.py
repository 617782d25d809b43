"""The benchmark registry behind ``manage.py bench``.

Every stage measures the service path and, in the same run, its bare baseline on the same
machine (raw PostgreSQL COPY, a bare SQL sort or GROUP BY, a bare endpoint), and reports the
ratio: these machines are shared and noisy, so only ratios from one run are compared.
Each stage is one module of this app (``bench/<stage>.py``) and registers here by name;
``STAGE_MODULES`` lists them in the order ``bench all`` runs them.
"""

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import TextIO


@dataclass(frozen=True)
class Result:
    """One line of the table. ``ratio`` is service / baseline for times and
    service / baseline for rates; ``goal`` says which way it must go."""

    stage: str
    size: str
    value: float
    unit: str
    baseline: float
    ratio: float
    goal: str
    passed: bool


Stage = Callable[[float, TextIO], list[Result]]
STAGES: dict[str, Stage] = {}
STAGE_MODULES = (
    "bench.ingest",
    "bench.replay",
    "bench.leaderboard",
    "bench.audit",
    "bench.titles",
    "bench.read",
    "bench.console",
)


def stage(name: str) -> Callable[[Stage], Stage]:
    """Register a benchmark stage under ``name``; it receives the scale and stdout."""

    def register(func: Stage) -> Stage:
        STAGES[name] = func
        return func

    return register


@contextmanager
def timer() -> Iterator[list[float]]:
    """``with timer() as t: …`` then ``t[0]`` is the elapsed seconds."""
    elapsed: list[float] = []
    started = time.perf_counter()
    try:
        yield elapsed
    finally:
        elapsed.append(time.perf_counter() - started)


def format_table(results: list[Result]) -> str:
    header = ("stage", "size", "value", "unit", "baseline", "ratio", "goal", "pass")
    rows = [header] + [
        (
            r.stage,
            r.size,
            f"{r.value:,.2f}",
            r.unit,
            f"{r.baseline:,.2f}",
            f"{r.ratio:.3f}",
            r.goal,
            "PASS" if r.passed else "FAIL",
        )
        for r in results
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def write_json(results: list[Result], path: str, *, scale: float, machine: str) -> None:
    with open(path, "w", encoding="utf-8") as out:
        json.dump(
            {"scale": scale, "machine": machine, "results": [asdict(r) for r in results]},
            out,
            ensure_ascii=False,
            indent=2,
        )
