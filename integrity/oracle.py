"""What the winners of a colluding pair's games can show at best: the Neyman–Pearson bound.

A measurement of the simulator's pairs (``integrity_report``), not a detector. For a pair
of the ``assist`` or ``stronger`` model (:data:`~integrity.simulation_population.PAIR_MODELS`),
the most powerful test of who went out at the tables both played, *knowing every player's
drawn skill and the pair's model*: in each such game that ended with a player out, the
beneficiary goes out with probability ``π = θ_B / Σθ`` under the null (Luce's winner draw,
``θ = exp(skill)``, the simulator's) and with ``0.4 + 0.6 π`` (``assist``) or with his odds
lifted by ``exp(STRONGER_LIFT)`` (``stronger``) under the model. The test's statistic is
the log-likelihood ratio, a weighted sum of the games he won, and its p-value is
Monte-Carlo (:data:`DRAWS` draws of the null, a fixed seed).

A detector knows neither the skills nor the model: "better together" conditions the
beneficiary's strength out through his games apart. A pair the bound does not find at a
level BH passes in the audit's families is beyond any test of the results; a pair it
finds and the detectors miss is missed for want of the beneficiary's strength. The
``stronger`` bound reads the wins only (the model lifts the hands too), so it
understates what the results hold there.
"""

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from integrity.simulation_population import PAIR_PLAY, STRONGER_LIFT

#: The pair models whose evidence lies in the winners alone.
MODELS: Final = ("assist", "stronger")
DRAWS: Final = 200_000

#: A game as the bound reads it: its players and the seat that went out (None: ended by time).
Game = tuple[tuple[str, ...], int | None]


@dataclass(frozen=True, slots=True)
class PairBound:
    """One pair's bound: its model, shared games in the window, the games both played that
    ended with a player out (window and history), the beneficiary's wins there, the wins
    expected under the null, and the p-value."""

    model: str
    shared: int
    games: int
    wins: int
    expected: float
    p: float


def gains(null: Sequence[float], model: str) -> list[float]:
    """Per game, what a win of the beneficiary adds to the log-likelihood ratio over a loss
    (``null``: his probability of going out there under the null)."""
    if model == "assist":
        assist = PAIR_PLAY["assist"][0]
        return [math.log((assist + (1 - assist) * pi) / pi / (1 - assist)) for pi in null]
    if model == "stronger":
        # The odds lifted by exp(STRONGER_LIFT): a win adds the log odds ratio.
        return [STRONGER_LIFT for _ in null]
    raise ValueError(f"no bound for the pair model {model!r}; known: {', '.join(MODELS)}")


def p_value(null: Sequence[float], won: Sequence[bool], model: str, *, seed: int = 0) -> float:
    """The Monte-Carlo p-value of the likelihood-ratio statistic of these games (module
    docstring): ``(k + 1) / (DRAWS + 1)``, ``k`` draws of the null at least as large."""
    weights = np.array(gains(null, model))
    observed = float(weights[np.array(won, dtype=bool)].sum())
    rng = np.random.default_rng(seed)
    drawn = (rng.random((DRAWS, len(weights))) < np.array(null)) @ weights
    return float((np.count_nonzero(drawn >= observed - 1e-9) + 1) / (DRAWS + 1))


def out_seat(record: Mapping[str, Any]) -> int | None:
    """The seat of a record v1 that emptied its hand, None when the game ended by time."""
    if record["ended_by"] != "out":
        return None
    return next(k for k, seat in enumerate(record["seats"]) if not seat["hand"])


def pair_bounds(
    games: Iterable[Game],
    pairs: Sequence[Sequence[str]],
    models: Sequence[str],
    skills: Mapping[str, float],
    shared: Sequence[int],
) -> list[PairBound]:
    """The bound of each pair of :data:`MODELS` (``pairs[k]``: beneficiary, feeder;
    ``shared[k]``: its shared games in the window), over ``games`` (the window's and its
    history's)."""
    chosen = {
        k: (pair[0], pair[1])
        for k, (pair, model) in enumerate(zip(pairs, models, strict=True))
        if model in MODELS
    }
    wanted = {player for pair in chosen.values() for player in pair}
    seen: dict[int, list[tuple[float, bool]]] = {k: [] for k in chosen}
    for players, out in games:
        if out is None or not wanted.intersection(players):
            continue
        for k, (fed, feeder) in chosen.items():
            if fed in players and feeder in players:
                seat = players.index(fed)
                strengths = [math.exp(skills[player]) for player in players]
                seen[k].append((strengths[seat] / sum(strengths), seat == out))
    bounds = []
    for k in sorted(chosen):
        null = [pi for pi, _ in seen[k]]
        won = [w for _, w in seen[k]]
        bounds.append(
            PairBound(
                models[k],
                shared[k],
                len(null),
                sum(won),
                math.fsum(null),
                p_value(null, won, models[k]) if null else 1.0,
            )
        )
    return bounds
