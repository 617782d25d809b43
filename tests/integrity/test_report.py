"""The detectors measured on simulated seasons (SPEC §7), in memory: a small injected season
and its honest-only twin, with the figures exact for the seed."""

import pytest

from integrity.domain.audit import AuditParams
from integrity.report import evaluate, report, run_season
from tournaments.domain.rules import ruleset_from_spec


def test_a_small_report() -> None:
    figures = report(
        players=400, weeks=1, cheaters=0.03, seed=1, params=AuditParams(), models="legacy"
    )

    injected, honest = figures["injected"], figures["honest"]
    assert injected["farms"] == {
        "by_model": {},
        "shared_games": {"min": 24, "max": 39},
        "not_cased_shared_games": [],
        "cased": {"injected": 2, "eligible": 2, "found": 2, "recall": 1.0},
        "flagged": {"injected": 2, "eligible": 2, "found": 2, "recall": 1.0},
    }
    # One pair reaches 20 shared games in a week: co-seating and point flow (its
    # rank sums against the feeder's own games) both flag it, so it opens a case.
    assert injected["pairs"]["cased"] == {
        "injected": 2,
        "eligible": 1,
        "found": 1,
        "recall": 1.0,
    }
    assert injected["pairs"]["flagged"]["found"] == 1
    assert injected["pairs"]["by_model"] == {
        "legacy": {"injected": 2, "eligible": 1, "found": 1, "recall": 1.0}
    }
    assert injected["pairs"]["not_cased_shared_games"] == []
    # Cases need evidence of benefit: the households' address links are leads in the
    # review queue. A case scores its evidence alone (co-seating weighs nothing).
    assert injected["cases"] == {
        "total": 4,
        "true": 4,
        "false": 0,
        "false_below_true": True,
        "lowest_true_score": 2.1,
        "highest_false_score": None,
        "k": 4,
        "hits_top_k": 4,
        "precision_at_k": 1.0,
        "review_queue": 19,
    }
    assert {name: d["false"] for name, d in injected["detectors"].items() if "false" in d} == {
        "coseating": 0,
        "pointflow": 0,
        "boosting": 0,
        "together": 0,
        "fed": 0,
        "kept": 0,
    }
    # The honest twin: no statistical flag at all; household links still open link cases.
    assert {name: d["flags"] for name, d in honest["detectors"].items() if "flags" in d} == {
        "coseating": 0,
        "pointflow": 0,
        "boosting": 0,
        "together": 0,
        "fed": 0,
        "kept": 0,
    }
    assert (honest["cases"]["total"], honest["cases"]["review_queue"]) == (0, 19)
    assert figures["params"] == {
        "players": 400,
        "weeks": 1,
        "history_weeks": 0,
        "cheaters": 0.03,
        "seed": 1,
        "q": 0.01,
        "pair_q": 0.01,
        "max_degree": 8,
        "models": "legacy",
    }


def test_a_small_logged_report_audits_soft_play() -> None:
    rules = ruleset_from_spec("classic")
    figures = report(
        players=400,
        weeks=1,
        cheaters=0.03,
        seed=1,
        params=AuditParams(),
        rules=rules,
        models="legacy",
    )
    injected, honest = figures["injected"], figures["honest"]
    # Both pairs' accounts spare each other in their logs and both farms' feeders spare the
    # fed account: every soft-play flag names two accounts of one group, and the honest twin
    # raises none.
    assert injected["detectors"]["softplay"] == {
        "flags": 5,
        "false": 0,
        "fdp": 0.0,
        "family_size": 53,
    }
    assert honest["detectors"]["softplay"]["flags"] == 0
    assert injected["pairs"]["cased"]["found"] == injected["pairs"]["cased"]["eligible"] == 1
    assert honest["cases"]["total"] == 0
    assert figures["params"]["logs"] == {"preset": "classic", "switches": {}}


def test_a_missed_pair_shows_how_near_each_pair_test_came() -> None:
    run = run_season(
        players=600, weeks=1, cheaters=0.03, seed=4, params=AuditParams(), models="varied"
    )
    pairs = evaluate(run)["pairs"]
    # Two pairs share >= 20 games; one is cased, the other (a `dump` pair, 26 games) is not.
    assert pairs["cased"] == {"injected": 3, "eligible": 2, "found": 1, "recall": 0.5}
    assert pairs["not_cased_shared_games"] == [26]
    [miss] = pairs["near_misses"]
    assert (miss["model"], miss["shared_games"]) == ("dump", 26)
    # Point flow tested the feeder, the fed-account test his group and the cards kept the
    # pair; "better together" gave no q below 1. All came short of the audit's level of 0.01.
    assert miss["q"] == {
        "pointflow": pytest.approx(0.40793213, rel=1e-6),
        "fed": pytest.approx(0.01501079, rel=1e-6),
        "kept": pytest.approx(0.52211641, rel=1e-6),
    }
    assert min(miss["q"].values()) > AuditParams().pair_q
