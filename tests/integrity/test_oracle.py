"""The Neyman–Pearson bound of the simulator's pairs (``integrity.oracle``): the likelihood
ratio of each model, its Monte-Carlo p-value against the exact tail, the games it reads,
and its figures in a simulated season's report."""

import itertools
import math
import random
from collections import Counter
from statistics import NormalDist

import numpy as np
import pytest

from integrity.domain.audit import AuditParams
from integrity.oracle import (
    CARDS,
    DRAWS,
    FED_CARDS,
    PairGame,
    cards_left_law,
    gains,
    out_seat,
    p_value,
    pair_bounds,
    quiet_hands,
    quiet_p_value,
)
from integrity.report import MIN_SHARED, evaluate, run_season
from integrity.simulation_play import OUT_HAND, TIME_HAND


def _exact_tail(null: list[float], won: list[bool], model: str) -> float:
    """P(statistic >= observed) under the null, by enumerating every outcome."""
    weights = gains(null, model)
    observed = sum(w for w, hit in zip(weights, won, strict=True) if hit)
    tail = 0.0
    for outcome in itertools.product((False, True), repeat=len(null)):
        statistic = sum(w for w, hit in zip(weights, outcome, strict=True) if hit)
        if statistic >= observed - 1e-9:
            tail += math.prod(p if hit else 1 - p for p, hit in zip(null, outcome, strict=True))
    return tail


def test_a_win_weighs_the_likelihood_ratio_of_the_model() -> None:
    # assist: 0.4 + 0.6 x 0.25 = 0.55 against 0.25 for a win, 0.6 for a loss.
    assert gains([0.25], "assist") == [pytest.approx(math.log(0.55 / 0.25 / 0.6))]
    # stronger: odds 1/3 lifted by e^2; a win adds log(odds ratio) = 2.
    assert gains([0.25], "stronger") == [pytest.approx(2.0)]
    with pytest.raises(ValueError, match="no winner bound for the pair model 'quiet'"):
        gains([0.25], "quiet")


@pytest.mark.parametrize("model", ["assist", "stronger"])
def test_the_monte_carlo_p_value_is_the_exact_tail(model: str) -> None:
    null = [0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7]
    won = [True, False, True, True, False, False, True, False, True, True]
    exact = _exact_tail(null, won, model)
    estimate = p_value(null, won, model)
    # 200,000 draws: a standard error of at most 0.0012.
    assert abs(estimate - exact) < 0.004
    assert 0.01 < exact < 0.5
    assert p_value(null, won, model) == estimate  # a fixed seed


def test_the_bound_reads_the_games_both_played_that_ended_out() -> None:
    skills = {"b": math.log(2.0), "f": 0.0, "s1": 0.0, "s2": 0.0, "s3": 0.0}
    games = [
        (("b", "f", "s1", "s2"), 0, (0, 3, 5, 6)),  # b out: pi = 2/5
        (("s1", "b", "f", "s2"), 0, (0, 3, 5, 6)),  # s1 out
        (("b", "f", "s1", "s3"), None, (2, 3, 5, 6)),  # ended by time: nobody went out
        (("b", "s1", "s2", "s3"), 0, (0, 3, 5, 6)),  # the feeder not at the table
        (("f", "s3", "b", "s1"), 2, (3, 5, 0, 6)),  # b out
    ]
    (bound,) = pair_bounds(
        games, [["b", "f"], ["s2", "s3"]], ["assist", "dump"], skills, [MIN_SHARED, 30]
    )
    assert (bound.model, bound.shared, bound.games, bound.wins) == ("assist", MIN_SHARED, 3, 2)
    assert bound.expected == pytest.approx(1.2)
    assert bound.p == pytest.approx(
        _exact_tail([0.4, 0.4, 0.4], [True, False, True], "assist"), abs=0.004
    )


def test_the_seat_that_went_out() -> None:
    seats = [{"hand": ["R1"]}, {"hand": []}, {"hand": ["W"]}]
    assert out_seat({"ended_by": "out", "seats": seats}) == 1
    assert out_seat({"ended_by": "time", "seats": seats}) is None


def test_a_stronger_season_reports_its_bound() -> None:
    run = run_season(
        players=400, weeks=2, cheaters=0.03, seed=1, params=AuditParams(), models="stronger"
    )
    # Two stronger pairs over two weeks: the bound (every skill known) finds both, far
    # beyond BH's thresholds, where the audit, which must learn the beneficiary's strength
    # from his games apart, cases neither.
    assert [(b.shared, b.games, b.wins, round(b.expected, 2), b.p) for b in run.bounds] == [
        (43, 39, 9, 1.8, 8 / (DRAWS + 1)),
        (31, 24, 12, 2.71, 2 / (DRAWS + 1)),
    ]
    figures = evaluate(run)
    assert figures["pairs"]["bound"] == {
        "stronger": {"eligible": 2, "found": {"0.001": 2, "0.0001": 2}}
    }
    assert figures["pairs"]["by_model"]["stronger"]["found"] == 0


def test_no_bound_under_daily_form() -> None:
    """The bound knows each account's skill; with daily form the skill played on a day is
    another, so the report gives no bound there (the same season without form has one)."""
    runs = {
        models: run_season(
            players=400, weeks=1, cheaters=0.03, seed=1, params=AuditParams(), models=models
        )
        for models in ("varied", "form")
    }
    assert [b.model for b in runs["varied"].bounds] == ["assist"]
    assert runs["form"].bounds == []
    assert runs["form"].season.labels.pair_models == ["last", "assist"]


def test_a_losers_cards_follow_the_simulators_law() -> None:
    law = cards_left_law(OUT_HAND, 0.0)
    assert law.sum() == pytest.approx(1.0)
    assert law[0] == 0.0
    # round(N(6.5, 3)) held to 1..12: one card below 1.5, twelve above 11.5.
    assert law[1] == pytest.approx(NormalDist(6.5, 3.0).cdf(1.5))
    assert law[12] == pytest.approx(1 - NormalDist(6.5, 3.0).cdf(11.5))
    assert law[6] == pytest.approx(NormalDist(6.5, 3.0).cdf(6.5) - NormalDist(6.5, 3.0).cdf(5.5))
    # A game ended by time: at most ten cards.
    assert cards_left_law(TIME_HAND, 1.0)[11:].tolist() == [0.0, 0.0]
    rng = random.Random(3)
    drawn = Counter(TIME_HAND.draw(rng, 1.0) for _ in range(100_000))
    expected = cards_left_law(TIME_HAND, 1.0)
    assert max(abs(drawn[k] / 100_000 - expected[k]) for k in range(CARDS + 1)) < 0.005


def _point(cards: int) -> np.ndarray:
    law = np.zeros(CARDS + 1)
    law[cards] = 1.0
    return law


def test_a_quiet_feeder_takes_half_the_partners_hand() -> None:
    # The partner keeps 4 cards, the feeder 5: with probability 0.8 the feeder takes 2.
    ratio = quiet_hands(_point(4), _point(5))
    assert ratio.shape == (CARDS + 1, FED_CARDS + 1)
    assert ratio[4, 5] == pytest.approx(math.log(0.2))
    assert ratio[2, 7] == math.inf  # impossible without the feeding
    assert np.count_nonzero(ratio) == 2
    # Five cards: the feeder takes two, the partner keeps three.
    assert quiet_hands(_point(5), _point(5))[3, 7] == math.inf
    # One card is never taken.
    assert not quiet_hands(_point(1), _point(5)).any()


def _quiet_exact_tail(games: list[PairGame]) -> float:
    """P(statistic >= observed) under the null, by enumerating every outcome of every game."""
    assist = 0.05
    values, chances, observed = np.zeros(1), np.ones(1), 0.0
    for game in games:
        hands = quiet_hands(game.fed_law, game.feeder_law)
        lost = 0.0 if game.outcome == "time" else math.log(1 - assist)
        won = math.log((assist + (1 - assist) * game.fed_out) / game.fed_out) if game.fed_out else 0
        other = 1 - game.fed_out - game.feeder_out
        spread = [(won, game.fed_out), (lost, game.feeder_out)] + [
            (lost + hands[i, j], other * game.fed_law[i] * game.feeder_law[j])
            for i in range(CARDS + 1)
            for j in range(CARDS + 1)
        ]
        kept = [(v, p) for v, p in spread if p > 0]
        values = (values[:, None] + np.array([v for v, _ in kept])[None, :]).ravel()
        chances = (chances[:, None] * np.array([p for _, p in kept])[None, :]).ravel()
        observed += {"fed": won, "feeder": lost}.get(game.outcome, lost + hands[game.cards])
    return float(chances[values >= observed - 1e-9].sum())


def test_the_quiet_monte_carlo_p_value_is_the_exact_tail() -> None:
    strong, weak = cards_left_law(OUT_HAND, 1.0), cards_left_law(TIME_HAND, -0.5)
    games = [
        PairGame(0.3, 0.2, "other", strong, cards_left_law(OUT_HAND, -0.5), (2, 9)),
        PairGame(0.0, 0.0, "time", weak, cards_left_law(TIME_HAND, 1.0), (3, 4)),
        PairGame(0.25, 0.25, "feeder", strong, strong, (5, 0)),
    ]
    exact = _quiet_exact_tail(games)
    estimate = quiet_p_value(games)
    assert abs(estimate - exact) < 0.004
    assert 0.01 < exact < 0.5
    assert quiet_p_value(games) == estimate  # a fixed seed


def test_the_quiet_bound_reads_every_game_both_played() -> None:
    skills = {"b": 0.0, "f": 0.0, "s1": 0.0, "s2": 0.0, "s3": 0.0}
    games = [
        (("b", "f", "s1", "s2"), 2, (3, 9, 0, 6)),  # s1 out; the partner light, the feeder heavy
        (("f", "b", "s1", "s3"), None, (8, 2, 5, 6)),  # ended by time
        (("b", "f", "s1", "s3"), 0, (0, 4, 5, 6)),  # b out
        (("b", "s1", "s2", "s3"), 1, (4, 0, 5, 6)),  # the feeder not at the table
    ]
    (bound,) = pair_bounds(games, [["b", "f"]], ["quiet"], skills, [MIN_SHARED])
    assert (bound.model, bound.shared, bound.games, bound.wins) == ("quiet", MIN_SHARED, 3, 1)
    assert bound.expected == pytest.approx(0.5)
    out, time = cards_left_law(OUT_HAND, 0.0), cards_left_law(TIME_HAND, 0.0)
    assert bound.p == pytest.approx(
        _quiet_exact_tail(
            [
                PairGame(0.25, 0.25, "other", out, out, (3, 9)),
                PairGame(0.0, 0.0, "time", time, time, (2, 8)),
                PairGame(0.25, 0.25, "fed", out, out, (0, 4)),
            ]
        ),
        abs=0.004,
    )


def test_a_quiet_season_reports_its_bound() -> None:
    run = run_season(
        players=400, weeks=2, cheaters=0.03, seed=2, params=AuditParams(), models="varied"
    )
    # The quiet pair wins about as often as the null expects (23 against 22.35); its hands
    # give it away to the bound, which knows how many cards each would keep, and no draw of
    # the null comes near. The audit finds it by the cards kept: in the 17 games both lost,
    # the feeder kept 5.6 cards more than the partner where their strengths say 1.6.
    quiet = [b for b in run.bounds if b.model == "quiet"]
    assert [(b.shared, b.games, b.wins, round(b.expected, 2), b.p) for b in quiet] == [
        (49, 49, 23, 22.35, 1 / (DRAWS + 1))
    ]
    figures = evaluate(run)
    assert figures["pairs"]["bound"]["quiet"] == {
        "eligible": 1,
        "found": {"0.001": 1, "0.0001": 1},
    }
    assert figures["pairs"]["by_model"]["quiet"]["found"] == 1
    kept = {flag.players: flag for flag in run.outcome.kept.flags}
    flag = kept[("p0000071", "p0000107")]
    assert (flag.feeder, flag.partner, flag.games, flag.shared) == (
        "p0000071",
        "p0000107",
        17,
        49,
    )
    assert (round(flag.kept, 2), round(flag.expected, 2)) == (5.65, 1.61)
    assert flag.q <= AuditParams().pair_q
    # Of the family of three, the `last` pair comes to p = 0.0088, short of weighted BH at
    # rank 2 (0.01 × 2/3 × its weight 0.97 = 0.0065). The pairs' players keep cards apart
    # as their strengths say: no variance of styles.
    assert figures["detectors"]["kept"] == {
        "flags": 1,
        "false": 0,
        "fdp": 0.0,
        "family_size": 3,
        "style": 0.0,
    }
