"""The Neyman–Pearson bound of the pairs whose evidence lies in the winners
(``integrity.oracle``): the likelihood ratio of each model, its Monte-Carlo p-value against
the exact tail, the games it reads, and its figures in a simulated season's report."""

import itertools
import math

import pytest

from integrity.domain.audit import AuditParams
from integrity.oracle import DRAWS, gains, out_seat, p_value, pair_bounds
from integrity.report import MIN_SHARED, evaluate, run_season


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
    with pytest.raises(ValueError, match="no bound for the pair model 'quiet'"):
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
        (("b", "f", "s1", "s2"), 0),  # b out: pi = 2/5
        (("s1", "b", "f", "s2"), 0),  # s1 out
        (("b", "f", "s1", "s3"), None),  # ended by time: nobody went out
        (("b", "s1", "s2", "s3"), 0),  # the feeder not at the table
        (("f", "s3", "b", "s1"), 2),  # b out
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
