"""Each audit SQL module (:mod:`integrity.sql`) equals its pure rule in
:mod:`integrity.domain` on random weeks: random sizes, cheaters and detector parameters,
seats voided at random and games left lone, for an event audit and a window audit. Co-seating
against ``detect_coseating``, shared sessions against ``detect_sessions``, the window
summary's skills against each player's mean score at the window's tables, and the whole
audit (boosting on the summary's testable players, point flow on the tables of the pairs
sharing enough) against the in-memory audit."""

import random
from typing import Any

import pytest

from accounts.models import Player
from flows.ingest import games_ingest
from integrity.domain.audit import AuditParams, audit, observations, window_skills
from integrity.domain.coseating import detect_coseating
from integrity.domain.sessions import detect_sessions
from integrity.services import audits
from integrity.simulation import simulate_season
from integrity.sql import audit_rows, coseating_sql, sessions_sql, window_players
from tournaments.models import Event, Seat

pytestmark = [pytest.mark.django_db]


def _random_week(seed: int) -> None:
    """A small simulated week of random size, ingested, with some seats voided at random
    (a sanction) and a few games left lone (every seat but one voided)."""
    rng = random.Random(seed)  # noqa: S311 - test data
    season = simulate_season(
        players=rng.randint(80, 160), weeks=1, cheaters=rng.choice([0.05, 0.1]), seed=seed
    )
    report = games_ingest(records=list(season.records), source="test")
    assert report.rejected == []
    seats = list(Seat.objects.order_by("pk").values_list("pk", "game_id"))
    voided = [pk for pk, _ in rng.sample(seats, len(seats) // 40)]
    games = sorted({game for _, game in seats})
    for game in rng.sample(games, 3):
        voided += list(
            Seat.objects.filter(game_id=game).order_by("seat").values_list("pk", flat=True)
        )[1:]
    Seat.objects.filter(pk__in=voided).update(voided=True)


@pytest.mark.parametrize("seed", [101, 202, 303, 404])
def test_each_sql_count_equals_its_pure_rule_on_random_weeks(week: Event, seed: int) -> None:
    _random_week(seed)
    rng = random.Random(seed)  # noqa: S311 - test data
    params = AuditParams(
        q=rng.choice([0.2, 0.5, 0.9]),
        max_degree=rng.choice([2, 8]),
        min_games=rng.choice([3, 5, 10]),
        min_common_hours=rng.choice([1, 2]),
        min_shared_wins=rng.choice([1, 2, 5]),
        min_segment=rng.choice([4, 6]),
        window=rng.choice([4, 8]),
        min_hour_shift=rng.choice([2.0, 6.0]),
    )
    cap = rng.choice([0, 5_000_000])
    window: dict[str, Any] = {
        "window_start": week.starts_at,
        "window_end": week.ends_at,
        "event": rng.choice([week, None]),
    }
    tables, sessions = observations(audit_rows(**window))

    # Co-seating's counts, shared sessions' graph: each against the pure detector.
    assert coseating_sql(**window, params=params, exact_family_cap=cap) == detect_coseating(
        tables,
        q=params.q,
        min_games=params.min_games,
        min_common_hours=params.min_common_hours,
        exact_family_cap=cap,
    )
    assert sessions_sql(**window, params=params) == detect_sessions(
        sessions, max_degree=params.max_degree
    )
    # The summary's skills: each player's mean game score at the window's tables.
    totals: dict[str, list[int]] = {}
    for table in tables:
        for player, score in zip(table.players, table.scores, strict=True):
            totals.setdefault(player, []).append(score)
    summary = window_players(**window, params=params)
    keys = dict(Player.objects.values_list("pk", "external_id"))
    assert {keys[pk]: skill for pk, skill in summary.skill.items()} == {
        player: sum(scores) / len(scores) for player, scores in totals.items()
    }
    assert summary.skill_by_external_id == window_skills(tables)
    # The whole audit (boosting on the summary's testable players, point flow on the tables
    # of the pairs sharing enough) against the in-memory audit.
    memory = audit(tables, sessions, params)
    sql = audits._audit_in_sql(window, params, None)
    assert (sql.coseating, sql.pointflow, sql.sessions, sql.boosting) == (
        memory.coseating,
        memory.pointflow,
        memory.sessions,
        memory.boosting,
    )
    assert sql.flags == memory.flags
    assert (sql.tables, sql.seats, sql.players) == (memory.tables, memory.seats, memory.players)
