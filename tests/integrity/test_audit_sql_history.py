"""The history read from the database (the ``history_days`` before the window) equals the
in-memory audit given the same games as its history: it lets boosting test an owner who lent
the account early in the window (SPEC §7: 代练代打), and the pair tests read the week before
of the window's pairs (串谋)."""

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import date, timedelta
from typing import Any

import pytest
from django.db.models import F

from accounts.models import Player
from flows.ingest import games_ingest
from integrity.domain.audit import AuditParams, audit, observations
from integrity.models import Flag
from integrity.services import audits
from integrity.simulation import simulate_season
from integrity.sql import audit_rows, window_players
from tests.integrity.conftest import busiest, event_window, weekly_qualifier
from tournaments.models import Event, Seat
from tournaments.models import Season as TourSeason

pytestmark = [pytest.mark.django_db]


def _last_of_weeks(weeks: int) -> Event:
    """``weeks`` weeks of the small simulated population ingested from 2021-W01, the earlier
    ones the last one's history; the last week's qualifier."""
    tour = TourSeason.objects.create(year=2021, name="2021", starts_on=date(2021, 1, 4))
    events = [
        weekly_qualifier(tour, date(2021, 1, 4) + timedelta(weeks=w), f"2021-W{w + 1:02d}-Q")
        for w in range(weeks)
    ]
    season = simulate_season(
        players=160, weeks=weeks, cheaters=0.04, seed=7, history_weeks=weeks - 1
    )
    report = games_ingest(records=list(season.records), source="test")
    assert report.rejected == []
    return events[-1]


@pytest.fixture
def second_week(db: Any) -> Event:
    """Weeks 2021-W01 and 2021-W02 ingested; the second week's qualifier."""
    return _last_of_weeks(2)


def _late_booster(event: Event) -> tuple[str, int]:
    """A hired player planted in the week's busiest account from its 4th game of the week: a
    new device, another address and 100 points a game better. Its own games the week before
    are returned with it."""
    booster = busiest(event)
    seats = Seat.objects.filter(player__external_id=booster, event=event).order_by("ended_at")
    later = Seat.objects.filter(pk__in=seats[3:].values("pk"))
    later.update(device="d-hired", ip="198.51.100.7", score=F("score") + 100)
    before = Seat.objects.filter(
        player__external_id=booster, ended_at__lt=event.starts_at, voided=False
    ).count()
    return booster, before


@pytest.mark.parametrize(
    "params",
    [
        AuditParams(),
        AuditParams(q=0.5, pair_q=0.5, min_segment=5, window=5, min_hour_shift=3.0),
    ],
)
def test_the_database_reads_the_history_the_in_memory_audit_is_given(
    second_week: Event, params: AuditParams
) -> None:
    event = second_week
    booster, owned = _late_booster(event)
    window = event_window(event)
    tables, sessions = observations(audit_rows(**window))
    history = observations(
        audit_rows(
            window_start=event.starts_at - timedelta(days=params.history_days),
            window_end=event.starts_at - timedelta(microseconds=1),
        )
    )
    memory = audit(tables, sessions, params, history=history)
    alone = audit(tables, sessions, params)

    sql = audits._audit_in_sql(window, params, None)

    assert sql.boosting == memory.boosting
    assert (sql.pointflow, sql.together, sql.fed, sql.kept) == (
        memory.pointflow,
        memory.together,
        memory.fed,
        memory.kept,
    )
    assert sql.flags == memory.flags
    # Point flow, "better together" and the fed accounts test the window's pairs on both
    # weeks: the three feeders' shared wins grow by the week before's, and two pairs (the
    # farm's, at either level) are flagged together only with it.
    assert memory.pointflow.family_size == alone.pointflow.family_size
    assert sorted(f.shared_wins for f in memory.pointflow.flags) == [22, 24, 24]
    assert sorted(f.shared_wins for f in alone.pointflow.flags) == (
        [] if params == AuditParams() else [9, 15, 15]
    )
    assert (len(memory.together.flags), len(alone.together.flags)) == (2, 0)
    # The database read the history of the players whose window holds two devices and two
    # address ranges, the booster among them.
    players = window_players(**window, params=params)
    assert Player.objects.get(external_id=booster).pk in players.history
    assert set(players.history) < set(players.boosting)
    [flag] = [f for f in memory.boosting.flags if f.player == booster]
    # The owner's 3 games of the week are too few on their own; the week before adds its own.
    assert owned >= params.min_segment
    assert (flag.history, flag.segment[0], flag.change_index) == (owned, owned + 3, owned + 3)
    assert booster not in {f.player for f in alone.boosting.flags}


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_pair_tests_tables_are_read_on_the_other_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    event = _last_of_weeks(2)
    window = event_window(event)
    params = AuditParams()
    read = audits._tables_of_feeders
    threads: list[int] = []

    def spy(*args: Any) -> Any:
        threads.append(threading.get_ident())
        return read(*args)

    monkeypatch.setattr(audits, "_tables_of_feeders", spy)
    here = audits._audit_in_sql(window, params, None)
    assert threads == [threading.get_ident()] * 2  # the window, then the week before
    threads.clear()

    with ThreadPoolExecutor(max_workers=1) as alongside:
        there = audits._audit_in_sql(window, params, alongside)

    assert len(threads) == 2
    assert threading.get_ident() not in threads
    assert replace(there, seconds={}) == replace(here, seconds={})  # every result alike
    # The week before was read: the three feeders' shared wins include it.
    assert sorted(f.shared_wins for f in there.pointflow.flags) == [22, 24, 24]


def test_no_history_days_reads_no_history(second_week: Event) -> None:
    event = second_week
    booster, _ = _late_booster(event)
    window = event_window(event)
    params = AuditParams(history_days=0)
    tables, sessions = observations(audit_rows(**window))

    sql = audits._audit_in_sql(window, params, None)

    assert sql.boosting == audit(tables, sessions, params).boosting
    assert booster not in {f.player for f in sql.boosting.flags}


def test_the_pair_flags_say_their_counts_include_the_days_before(second_week: Event) -> None:
    run = audits.audit_event(event=second_week)

    pair_flags = Flag.objects.filter(run=run, detector__in=["pointflow", "together", "fed"])
    assert sorted(pair_flags.values_list("detector", flat=True)) == [
        "fed",
        "fed",
        "pointflow",
        "pointflow",
        "pointflow",
        "together",
        "together",
    ]
    assert {flag.evidence["history_days"] for flag in pair_flags} == {7}
    others = Flag.objects.filter(run=run).exclude(pk__in=pair_flags.values("pk"))
    assert others.exists()
    assert not any("history_days" in flag.evidence for flag in others)


@pytest.fixture
def third_week(db: Any) -> Event:
    """Weeks 2021-W01 to 2021-W03 ingested; the third week's qualifier."""
    return _last_of_weeks(3)


def test_the_pair_tests_read_every_week_of_the_history(third_week: Event) -> None:
    """With two weeks before the window, the pair tests' samples hold both weeks' games: the
    database audit equals the in-memory audit given both, and each feeder's shared wins grow
    with the earlier week."""
    window = event_window(third_week)
    tables, sessions = observations(audit_rows(**window))
    results = {}
    for days in (7, 14):
        params = AuditParams(history_days=days)
        history = observations(
            audit_rows(
                window_start=third_week.starts_at - timedelta(days=days),
                window_end=third_week.starts_at - timedelta(microseconds=1),
            )
        )
        memory = audit(tables, sessions, params, history=history)
        sql = audits._audit_in_sql(window, params, None)
        pair_tests = ("pointflow", "together", "fed", "kept")
        assert [getattr(sql, t) for t in pair_tests] == [getattr(memory, t) for t in pair_tests]
        results[days] = memory
    week, fortnight = results[7].pointflow, results[14].pointflow
    assert (week.family_size, fortnight.family_size) == (21, 21)
    shared = {(f.feeder, f.beneficiary): f.shared_wins for f in week.flags}
    longer = {(f.feeder, f.beneficiary): f.shared_wins for f in fortnight.flags}
    # One feeder is flagged either way; the week two weeks before adds 17 shared wins.
    assert shared == {("p0000068", "p0000038"): 20}
    assert longer == {("p0000068", "p0000038"): 37}
