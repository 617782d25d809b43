"""Bench stage ``replay``: the move-log replay, and ingest of logged games against the same
games without their logs (issue 25's budgets).

Scale 1.0 is 50,000 four-player games under the ``classic`` preset, played by the engine
(``tournaments.simulation`` with ``rules``; ``--scale 0.01`` is the CI smoke size):

* **replay**: every log replayed (``tournaments.domain.movelog.replay``) in this process, on
  one core, against the bare walk over the same moves (a loop that reads each move's keys,
  the least any replay costs). Budget: at least 1,000 games a second.
* **ingest with logs**: the file imported through the service path (``games_import``) with
  the logs, then the same records with ``"log": null``, each into a clean bench event. Budget:
  the logged rate is at least 50 % of the unlogged one.
"""

import json
import os
import tempfile
from collections.abc import Iterable
from typing import Any, TextIO

from bench.ingest import PLAYER_PREFIX, ingest_clean, ingest_event, ingest_vacuum
from bench.registry import Result, stage, timer
from flows.ingest import games_import
from tournaments.domain.movelog import replay
from tournaments.domain.rules import PRESETS
from tournaments.simulation import simulate_games, simulate_players

GAMES_AT_SCALE_1 = 50_000
GAMES_PER_PLAYER = 20
#: Issue 25's budgets.
GOAL_GAMES_PER_SECOND = 1_000
GOAL_LOGGED_SHARE = 0.5


def _walk(records: Iterable[dict[str, Any]]) -> int:
    """Touch every move's keys: the bare cost under any replay."""
    count = 0
    for record in records:
        for move in record["log"]["moves"]:
            count += len(move)
    return count


def _import(records: list[dict[str, Any]], strip: bool) -> float:
    """Import the records (without their logs when ``strip``) into a clean bench event."""
    event = ingest_event()
    ingest_clean(event)
    ingest_vacuum()
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as file:
        for record in records:
            row = {**record, "log": None} if strip else record
            file.write(json.dumps(row, ensure_ascii=False) + "\n")
    rejects: list[dict[str, Any]] = []
    try:
        with timer() as took, open(file.name, "rb") as lines:
            summary = games_import(lines=lines, on_rejects=rejects.extend)
    finally:
        os.unlink(file.name)
        ingest_clean(event)
    if summary.ingested != len(records) or rejects:
        raise RuntimeError(f"bench replay lost records: {summary}, first rejects {rejects[:3]}")
    return took[0]


@stage("replay")
def replay_stage(scale: float, out: TextIO) -> list[Result]:
    games = max(200, round(GAMES_AT_SCALE_1 * scale))
    players = max(200, 4 * games // GAMES_PER_PLAYER)
    rules = PRESETS["classic"]
    event = ingest_event()
    with timer() as generated:
        records = [
            json.loads(json.dumps(record))
            for record in simulate_games(
                players=simulate_players(players, seed=25, id_prefix=PLAYER_PREFIX),
                games=games,
                event=event.code,
                window=(event.starts_at, event.ends_at),
                seed=25,
                rules=rules,
            )
        ]
    moves = sum(len(record["log"]["moves"]) for record in records)
    outs = sum(record["ended_by"] == "out" for record in records)
    out.write(
        f"   played {games:,} games ({moves:,} moves, {moves / games:.0f} a game, "
        f"{outs / games:.0%} ended out) in {generated[0]:.1f} s\n"
    )
    with timer() as walked:
        _walk(records)
    with timer() as replayed:
        bad = [record["id"] for record in records if not replay(record, rules).ok]
    if bad:
        raise RuntimeError(f"bench replay: {len(bad)} engine games do not replay: {bad[:3]}")
    rate = games / replayed[0]
    out.write(
        f"   replay {replayed[0]:.2f} s ({rate:,.0f} games/s, {moves / replayed[0]:,.0f} "
        f"moves/s); bare walk {walked[0]:.3f} s\n"
    )
    logged = _import(records, strip=False)
    plain = _import(records, strip=True)
    share = plain / logged
    out.write(
        f"   ingest with logs {logged:.1f} s ({games / logged:,.0f} games/s), without "
        f"{plain:.1f} s ({games / plain:,.0f} games/s): {share:.0%}\n"
    )
    size = f"{games:,} games, {moves:,} moves"
    return [
        Result(
            stage="replay vs bare walk",
            size=size,
            value=rate,
            unit="games/s",
            baseline=games / walked[0],
            ratio=walked[0] / replayed[0],
            goal=f">= {GOAL_GAMES_PER_SECOND:,} games/s",
            passed=rate >= GOAL_GAMES_PER_SECOND,
        ),
        Result(
            stage="ingest with logs vs without",
            size=size,
            value=games / logged,
            unit="games/s",
            baseline=games / plain,
            ratio=share,
            goal=f">= {GOAL_LOGGED_SHARE:.0%} of the rate without logs",
            passed=share >= GOAL_LOGGED_SHARE,
        ),
    ]
