"""What the results of a colluding pair's games can show at best: the Neyman–Pearson bound.

A measurement of the simulator's pairs (``integrity_report``), not a detector: for a pair
of the ``assist``, ``quiet`` or ``stronger`` model
(:data:`~integrity.simulation_population.PAIR_MODELS`), the test of the games both played
*knowing every player's drawn skill and the pair's model*, by the log-likelihood ratio of
model and null, its p-value Monte-Carlo (:data:`DRAWS` draws of the null, a fixed seed).

* ``assist``, ``stronger``: who went out, in each game that ended with a player out. The
  beneficiary goes out with probability ``π = θ_B / Σθ`` under the null (Luce's winner
  draw, ``θ = exp(skill)``, the simulator's) and with ``0.4 + 0.6 π`` (``assist``) or with
  his odds lifted by ``exp(STRONGER_LIFT)`` (``stronger``) under the model: the statistic
  is a weighted sum of the games he won. The ``stronger`` model lifts the hands too, which
  this bound does not read, so it understates what the results hold there.
* ``quiet``: who went out (the fed account with ``0.05 + 0.95 π``) and, in every game
  neither of the pair won, both their cards left, whose law under the null is the
  simulator's :class:`~integrity.simulation_play.HandLaw` at their skills; the model moves
  half the fed account's cards (rounded down) to the feeder with probability 0.8. The
  model feeds only when the fed account does not hold the fewest points, which the ratio
  leaves out (a game ended out has its winner's empty hand below every other, so there it
  nearly always holds): a valid test of the null all the same, if not quite the most
  powerful.

A detector knows neither the skills nor the model: "better together" conditions the
beneficiary's strength out through his games apart. A pair the bound does not find at a
level BH passes in the audit's families is beyond any test of the results; a pair it
finds and the detectors miss is missed for want of the players' strength.
"""

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Final

import numpy as np

from integrity.simulation_play import OUT_HAND, TIME_HAND, HandLaw
from integrity.simulation_population import PAIR_PLAY, STRONGER_LIFT

#: The pair models with a bound.
MODELS: Final = ("assist", "quiet", "stronger")
DRAWS: Final = 200_000

#: A game as the bound reads it: its players, the seat that went out (None: ended by time)
#: and the cards left in each seat's hand.
Game = tuple[tuple[str, ...], int | None, tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class PairBound:
    """One pair's bound: its model, shared games in the window, the games both played that
    the bound reads (window and history; for the winner models those that ended with a
    player out), the beneficiary's wins there, the wins expected under the null, and the
    p-value."""

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
    raise ValueError(f"no winner bound for the pair model {model!r}; known: assist, stronger")


def p_value(null: Sequence[float], won: Sequence[bool], model: str, *, seed: int = 0) -> float:
    """The Monte-Carlo p-value of the likelihood-ratio statistic of these games (module
    docstring): ``(k + 1) / (DRAWS + 1)``, ``k`` draws of the null at least as large."""
    weights = np.array(gains(null, model))
    observed = float(weights[np.array(won, dtype=bool)].sum())
    rng = np.random.default_rng(seed)
    drawn = (rng.random((DRAWS, len(weights))) < np.array(null)) @ weights
    return float((np.count_nonzero(drawn >= observed - 1e-9) + 1) / (DRAWS + 1))


#: The most cards a loser keeps in either law, and what a ``quiet`` feeder can hold.
CARDS: Final = max(OUT_HAND.most, TIME_HAND.most)
FED_CARDS: Final = CARDS + CARDS // 2


def cards_left_law(law: HandLaw, skill: float) -> np.ndarray:
    """P(a loser keeps k cards), k = 0..12, under the simulator's :class:`HandLaw`."""
    normal = NormalDist(law.mean - law.slope * skill, law.sd)
    cdf = [normal.cdf(k + 0.5) for k in range(law.most)]
    pmf = np.zeros(CARDS + 1)
    pmf[1] = cdf[1]
    for k in range(2, law.most):
        pmf[k] = cdf[k] - cdf[k - 1]
    pmf[law.most] = 1.0 - cdf[law.most - 1]
    return pmf


def quiet_hands(fed: np.ndarray, feeder: np.ndarray) -> np.ndarray:
    """The log-likelihood ratio of a ``quiet`` pair's cards left, ``[fed's, feeder's]``, in
    a game neither won (``fed``, ``feeder``: their laws under the null): with probability
    ``feed`` the feeder takes half (rounded down) of a hand of two cards or more."""
    feed = PAIR_PLAY["quiet"][1]
    null = np.zeros((CARDS + 1, FED_CARDS + 1))
    null[:, : CARDS + 1] = np.outer(fed, feeder)
    alt = np.zeros_like(null)
    for n in range(1, CARDS + 1):
        kept = feeder * fed[n]
        if n == 1:
            alt[1, : CARDS + 1] += kept
            continue
        half = n // 2
        alt[n, : CARDS + 1] += (1 - feed) * kept
        alt[n - half, half : half + CARDS + 1] += feed * kept
    with np.errstate(divide="ignore", invalid="ignore"):
        # +inf where only the model can give the cards; 0 where neither can.
        return np.where(alt > 0, np.log(alt) - np.log(null), 0.0)


@dataclass(frozen=True, slots=True, eq=False)
class PairGame:
    """A game both of a pair played, as the bound reads it: the chances under the null that
    the fed account and the feeder go out (0, 0 when it ended by time), who did (``"fed"``,
    ``"feeder"``, ``"other"``, or ``"time"``), the laws of their cards left under the null
    (:func:`cards_left_law`) and the cards they kept."""

    fed_out: float
    feeder_out: float
    outcome: str
    fed_law: np.ndarray
    feeder_law: np.ndarray
    cards: tuple[int, int]


def quiet_p_value(games: Sequence[PairGame], *, seed: int = 0) -> float:
    """The Monte-Carlo p-value of a ``quiet`` pair's log-likelihood ratio: per game, who
    went out (the fed account with probability ``assist + (1 - assist)·π`` under the model)
    and, when neither of the pair did, :func:`quiet_hands`. ``(k + 1) / (DRAWS + 1)``."""
    assist = PAIR_PLAY["quiet"][0]
    rng = np.random.default_rng(seed)
    observed = 0.0
    drawn = np.zeros(DRAWS)
    for game in games:
        hands = quiet_hands(game.fed_law, game.feeder_law)
        lost = 0.0 if game.outcome == "time" else math.log(1 - assist)
        won = math.log((assist + (1 - assist) * game.fed_out) / game.fed_out) if game.fed_out else 0
        observed += {"fed": won, "feeder": lost}.get(game.outcome, lost + hands[game.cards])
        u = rng.random(DRAWS)
        fed = np.searchsorted(np.cumsum(game.fed_law), rng.random(DRAWS), side="right")
        feeder = np.searchsorted(np.cumsum(game.feeder_law), rng.random(DRAWS), side="right")
        statistic = lost + hands[np.minimum(fed, CARDS), np.minimum(feeder, CARDS)]
        statistic[u < game.fed_out + game.feeder_out] = lost
        statistic[u < game.fed_out] = won
        drawn += statistic
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
    seen: dict[int, list[PairGame]] = {k: [] for k in chosen}
    for players, out, cards in games:
        if not wanted.intersection(players):
            continue
        for k, (fed, feeder) in chosen.items():
            if fed in players and feeder in players:
                seen[k].append(_read(players, out, cards, fed, feeder, skills))
    bounds = []
    for k in sorted(chosen):
        if models[k] == "quiet":
            read = seen[k]
            p = quiet_p_value(read) if read else 1.0
        else:
            read = [game for game in seen[k] if game.outcome != "time"]
            null = [game.fed_out for game in read]
            p = p_value(null, [g.outcome == "fed" for g in read], models[k]) if read else 1.0
        bounds.append(
            PairBound(
                models[k],
                shared[k],
                len(read),
                sum(game.outcome == "fed" for game in read),
                math.fsum(game.fed_out for game in read),
                p,
            )
        )
    return bounds


def _read(
    players: Sequence[str],
    out: int | None,
    cards: Sequence[int],
    fed: str,
    feeder: str,
    skills: Mapping[str, float],
) -> PairGame:
    """One game of the pair ``fed``, ``feeder`` as the bound reads it."""
    at, by = players.index(fed), players.index(feeder)
    law = OUT_HAND if out is not None else TIME_HAND
    strengths = [math.exp(skills[player]) for player in players]
    total = sum(strengths)
    outcome = "time" if out is None else {at: "fed", by: "feeder"}.get(out, "other")
    return PairGame(
        strengths[at] / total if out is not None else 0.0,
        strengths[by] / total if out is not None else 0.0,
        outcome,
        cards_left_law(law, skills[fed]),
        cards_left_law(law, skills[feeder]),
        (cards[at], cards[by]),
    )
