"""The engine's games replay, and a single change to one is caught (SPEC §9 move log v1):
tournaments/domain/engine.py against tournaments/domain/movelog.py."""

import copy
import json
import random
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.domain.engine import play_game
from tournaments.domain.movelog import replay
from tournaments.domain.rules import PRESETS, Ruleset

CLASSIC = PRESETS["classic"]
VARIANTS: dict[str, Ruleset] = {
    **PRESETS,
    "seven_zero": replace(CLASSIC, seven_zero=True),
    "multi_play": replace(CLASSIC, multi_play=True),
    "until_playable+forced": replace(CLASSIC, draw="until_playable", forced_play=True),
    "jump_in numbers": replace(CLASSIC, jump_in="identical_numbers"),
    "seeds stacking": replace(CLASSIC, stacking="seeds"),
    "happy deck": replace(CLASSIC, deck="happy", stacking="seeds", multi_play=True),
    "happy double": replace(CLASSIC, deck="happy-double", seven_zero=True, jump_in="all"),
    "last_card_number": replace(CLASSIC, last_card_number=True),
    "no challenge": replace(CLASSIC, challenge=False),
    "two_player reverse": replace(CLASSIC, two_player_reverse="reverse"),
    "number start": replace(CLASSIC, start_card="number"),
    "no time limits": replace(CLASSIC, game_seconds=None, turn_seconds=None),
}


def record(rules: Ruleset, seed: int, seats: int = 4) -> dict[str, Any]:
    """An engine game as a JSON round-tripped record."""
    game = play_game(rules, random.Random(seed), seats=seats)
    data = {
        "seats": [{"hand": hand} for hand in game.hands],
        "ended_by": game.ended_by,
        "log": game.log,
    }
    copied: dict[str, Any] = json.loads(json.dumps(data))
    return copied


@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_engine_game_replays_ok(name: str) -> None:
    rules = VARIANTS[name]
    endings = {"out": 0, "time": 0}
    for seed in range(60):
        game = record(rules, seed, seats=2 + seed % 4)
        verdict = replay(game, rules)
        assert verdict.ok, f"seed {seed}: {verdict}"
        endings[game["ended_by"]] += 1
    assert endings["out"] > 0


def test_the_engine_makes_every_kind_of_move() -> None:
    seen: set[str] = set()
    busy = replace(CLASSIC, seven_zero=True, jump_in="all", multi_play=True, stacking="seeds")
    long = replace(CLASSIC, game_seconds=None, turn_seconds=None, draw="until_playable")
    for seed in range(80):
        for move in record((busy, long, CLASSIC)[seed % 3], seed)["log"]["moves"]:
            seen.update(key for key in move if key not in ("t", "seat", "color"))
            if isinstance(move.get("play"), list):
                seen.add("multi")
    assert seen >= {
        "flip",
        "play",
        "draw",
        "pass",
        "uno",
        "catch",
        "challenge",
        "swap",
        "reshuffle",
        "end",
        "auto",
        "multi",
    }


def test_a_seed_gives_the_same_game() -> None:
    assert record(CLASSIC, 7) == record(CLASSIC, 7)


def _mutate(game: dict[str, Any], rng: random.Random) -> str | None:
    """Make one change that the rules must catch; return what it was, or None."""
    moves = game["log"]["moves"]
    kind = rng.choice(["card", "draw", "seat", "delete", "hand", "time"])
    actions = [i for i, m in enumerate(moves) if "play" in m or "draw" in m]
    i = rng.choice(actions)
    move = moves[i]
    if kind == "card" and "play" in move:
        cards = move["play"] if isinstance(move["play"], list) else [move["play"]]
        codes = sorted(PRESETS["classic"].table.copies)
        new = rng.choice([code for code in codes if code not in cards])
        cards = [new, *cards[1:]]
        move["play"] = cards[0] if len(cards) == 1 else cards
        return f"move {i}: play {new}"
    if kind == "draw" and "draw" in move:
        move["draw"] += rng.choice([-1, 1]) if move["draw"] > 1 else 1
        return f"move {i}: draw {move['draw']}"
    if kind == "seat":
        move["seat"] = (move["seat"] + rng.randrange(1, len(game["seats"]))) % len(game["seats"])
        return f"move {i}: seat {move['seat']}"
    if kind == "delete":
        del moves[i]
        return f"move {i} deleted"
    if kind == "hand":
        seat = rng.choice([s for s, entry in enumerate(game["seats"]) if entry["hand"]])
        hand = game["seats"][seat]["hand"]
        hand[0] = "R1" if hand[0] != "R1" else "R2"
        return f"seats[{seat}].hand"
    if kind == "time" and i > 0 and move["t"] > 0:
        move["t"] = moves[i - 1]["t"] - 1
        return f"move {i}: t {move['t']}"
    return None


@settings(max_examples=300)
@given(
    name=st.sampled_from(list(VARIANTS)),
    seed=st.integers(0, 10_000),
    change=st.integers(0, 2**32),
)
def test_a_random_single_change_to_a_legal_log_is_caught(name: str, seed: int, change: int) -> None:
    rules = VARIANTS[name]
    game = record(rules, seed)
    assert replay(game, rules).ok
    changed = copy.deepcopy(game)
    what = _mutate(changed, random.Random(change))
    if what is None or changed == game:
        return
    assert not replay(changed, rules).ok, what
