"""The players' strengths in Luce's winner draw (issue 28): integrity/domain/strengths.py."""

import math
import random
import zlib

import pytest

from integrity.domain import strengths
from integrity.domain.data import TableObs
from integrity.domain.strengths import fit_scale, luce_strengths


def game(game_id: str, players: tuple[str, ...], winner: int, *, out: bool = True) -> TableObs:
    hands = tuple(0 if k == winner and out else 5 + k for k in range(len(players)))
    scores = tuple(30 if k == winner else -hands[k] for k in range(len(players)))
    return TableObs(game_id, 0, players, hands, scores, (winner,))


def test_the_scale_is_the_maximum_likelihood_one() -> None:
    # two seats at x = 0 and 1: seat 1 wins with probability e^β / (1 + e^β); 3 wins in 4
    games = [([0.0, 1.0], 1)] * 3 + [([0.0, 1.0], 0)]
    assert fit_scale(games) == pytest.approx(math.log(3.0), rel=1e-12)
    assert fit_scale([([0.0, 2.0], 1), ([0.0, 2.0], 0)]) == 0.0
    assert fit_scale([]) == 0.0


def test_the_fitted_scale_solves_the_likelihood_equation() -> None:
    rng = random.Random(5)
    games = []
    for _ in range(400):
        xs = [rng.gauss(0.0, 1.0) for _ in range(4)]
        weights = [math.exp(0.8 * x) for x in xs]
        games.append((xs, rng.choices(range(4), weights)[0]))
    beta = fit_scale(games)
    gradient = 0.0
    for xs, winner in games:
        weights = [math.exp(beta * x) for x in xs]
        gradient += xs[winner] - sum(w * x for w, x in zip(weights, xs, strict=True)) / sum(weights)
    assert gradient == pytest.approx(0.0, abs=1e-9)
    assert 0.6 < beta < 1.0  # the draw's 0.8, within its error at 400 games


def test_strengths_read_the_out_games_and_centre_on_the_mean_skill() -> None:
    skills = {"a": 10.0, "b": 0.0, "c": -10.0}
    tables = [
        game("g1", ("a", "b"), 0),
        game("g2", ("a", "b"), 0),
        game("g3", ("a", "b"), 0),
        game("g4", ("a", "b"), 1),
        game("g5", ("a", "b"), 1, out=False),  # ended by the clock: left out
        game("g6", ("b", "c"), 0, out=False),
    ]
    # a against b: skills 10 apart, 3 wins in 4, so e^(10 β) = 3
    beta = math.log(3.0) / 10.0
    strengths = luce_strengths(skills, tables)
    assert strengths == pytest.approx(
        {"a": math.exp(10 * beta), "b": 1.0, "c": math.exp(-10 * beta)}
    )
    # a player without a skill has the mean skill's: strength 1, as for everyone when no
    # game ends with a player out
    assert luce_strengths({"a": 4.0, "b": -2.0}, [game("g1", ("a", "x"), 0)])["a"] > 1.0
    assert luce_strengths(skills, tables[4:]) == {"a": 1.0, "b": 1.0, "c": 1.0}
    # only the players seated at the tables: c sits at none of the first four
    assert set(luce_strengths(skills, tables[:4])) == {"a", "b"}
    assert luce_strengths({}, tables) == {}


def test_beyond_the_cap_the_scale_is_fitted_to_games_picked_by_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(strengths, "FIT_GAMES", 3)
    tables = [game(f"g{i}", ("a", "b"), i % 2) for i in range(8)]
    picked = [t for t in tables if zlib.crc32(t.game_id.encode()) % 3 == 0]
    assert 0 < len(picked) <= 3  # within the cap: all of them are fitted
    skills = {"a": 1.0, "b": -1.0}
    assert luce_strengths(skills, tables) == luce_strengths(skills, picked)
    assert strengths._out_games(tables, skills, 0.0) == [
        ([1.0, -1.0], t.winners[0]) for t in picked
    ]
