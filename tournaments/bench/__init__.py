"""Benchmark stages of the tournaments app (registered with core.bench)."""

import importlib

for _stage in ("ingest", "leaderboard"):
    try:
        importlib.import_module(f"tournaments.bench.{_stage}")
    except ModuleNotFoundError as exc:  # a stage not written yet
        if exc.name != f"tournaments.bench.{_stage}":
            raise
