"""Finalising an event (SPEC §4): frozen ranking (the board's order; ranks stored on the
advancing rows), champion, advancement by quotas (SPEC §2) into the fed event's entries, title
qualifications; idempotent, serialised, refused while open."""

import threading
from datetime import date, timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from accounts.models import Player, User
from core.errors import ConflictError
from flows.finalisation import event_finalise
from tests.tournaments.factories import (
    AFTER,
    QUOTAS,
    local,
    make_event,
    make_players,
    make_season,
    score_games,
)
from tournaments.models import Entry, Event, Standing
from tournaments.selectors.leaderboard import advancement_explain, leaderboard_rows
from tournaments.tasks import event_finalise_task

pytestmark = pytest.mark.django_db


def _final_and_monthly() -> tuple[Event, Event]:
    season = make_season(quotas=QUOTAS)
    monthly = make_event(
        season,
        "2021-02-M",
        "monthly_final",
        day=date(2021, 2, 16),
        champion_achievement="monthly_champion",
    )
    weekly = make_event(
        season,
        "2021-W05-F",
        "weekly_final",
        day=date(2021, 2, 8),
        feeds=monthly,
    )
    return weekly, monthly


def _field(event: Event) -> dict[str, Player]:
    """江苏 a1 a2 a3 (ranks 1, 2, 4), 浙江 b1 b2 (3, 5), 广东 c1 (6), and 广东 c0 with 14
    games and the best total (unranked)."""
    names = ["a1", "a2", "b1", "a3", "b2", "c1", "c0"]
    provinces = ["江苏", "江苏", "浙江", "江苏", "浙江", "广东", "广东"]
    players = [
        Player.objects.create(external_id=name, name=name.upper(), province=province)
        for name, province in zip(names, provinces, strict=True)
    ]
    totals = {"a1": 60, "a2": 50, "b1": 40, "a3": 30, "b2": 20, "c1": 10}
    scores = {p: [totals[p.external_id] // 15 * 1] * 15 for p in players if p.external_id != "c0"}
    for player in scores:  # exact totals: 15 games adding up to the total
        scores[player] = [totals[player.external_id] - 14] + [1] * 14
    scores[players[-1]] = [100] * 14
    score_games(event, scores)
    return {p.external_id: p for p in players}


def _entries(event: Event) -> dict[str, tuple[str, str]]:
    return {
        e.player.external_id: (e.basis, e.reason)
        for e in Entry.objects.filter(event=event).select_related("player")
    }


def test_finalising_freezes_ranks_records_the_champion_and_advances(organiser: User) -> None:
    weekly, monthly = _final_and_monthly()
    players = _field(weekly)

    result = event_finalise(event=weekly, by=organiser, now=AFTER)

    assert (result.changed, result.champion, result.entries) == (True, players["a1"], 4)
    weekly.refresh_from_db()
    assert (weekly.status, weekly.champion, weekly.finalised_by) == (
        "finalised",
        players["a1"],
        organiser,
    )
    # The frozen ranking is the board's order; only the advancing rows store their ranks,
    # the basis of their entry.
    board = [(r.player, r.rank, r.province_rank) for r in leaderboard_rows(weekly)[0:10]]
    assert board == [
        ("a1", 1, 1),
        ("a2", 2, 2),
        ("b1", 3, 1),
        ("a3", 4, 3),
        ("b2", 5, 2),
        ("c1", 6, 1),
        ("c0", None, None),
    ]
    stored = {
        s.player_key: (s.rank, s.province_rank, s.advanced, s.by_national, s.by_province)
        for s in Standing.objects.filter(event=weekly)
    }
    assert stored == {
        "a1": (1, 1, True, True, True),
        "a2": (2, 2, True, True, False),
        "b1": (3, 1, True, True, True),
        "a3": (None, None, False, False, False),
        "b2": (None, None, False, False, False),
        "c1": (6, 1, True, False, True),
        "c0": (None, None, False, False, False),
    }
    # National top 3 ∪ each province's top 1: four players, not six; the places a1 and b1
    # take on both lists are not passed down to a3 or b2.
    assert _entries(monthly) == {
        "a1": ("advanced", "national rank 1 ≤ 3; province rank 1 ≤ 1"),
        "a2": ("advanced", "national rank 2 ≤ 3; province rank 2 > 1"),
        "b1": ("advanced", "national rank 3 ≤ 3; province rank 1 ≤ 1"),
        "c1": ("advanced", "national rank 6 > 3; province rank 1 ≤ 1"),
    }
    assert set(Entry.objects.filter(event=monthly).values_list("source", flat=True)) == {weekly.pk}


def test_why_am_i_in_or_out() -> None:
    weekly, _ = _final_and_monthly()
    players = _field(weekly)

    live = advancement_explain(event=weekly, player=players["a3"])
    assert (live.finalised, live.feeds, live.verdict.advances) == (False, "2021-02-M", False)
    event_finalise(event=weekly, by=None, now=AFTER)
    weekly.refresh_from_db()

    reasons = {
        key: (verdict.advances, verdict.reason)
        for key in ("a2", "a3", "c0")
        for verdict in [advancement_explain(event=weekly, player=players[key]).verdict]
    }
    assert reasons == {
        "a2": (True, "national rank 2 ≤ 3; province rank 2 > 1"),
        "a3": (False, "below both cut-offs: national rank 4 > 3, province rank 3 > 1"),
        "c0": (False, "unranked: 14 games, 15 needed"),
    }
    (stranger,) = make_players(1)
    assert advancement_explain(event=weekly, player=stranger).verdict.reason == (
        "unranked: 0 games, 15 needed"
    )


def test_finalising_twice_changes_nothing_the_second_time() -> None:
    weekly, monthly = _final_and_monthly()
    _field(weekly)
    first = event_finalise(event=weekly, by=None, now=AFTER)
    weekly.refresh_from_db()
    state = (weekly.finalised_at, weekly.leaderboard_version, _entries(monthly))

    second = event_finalise(event=weekly, by=None, now=AFTER + timedelta(days=1))

    weekly.refresh_from_db()
    assert (first.changed, second.changed) == (True, False)
    assert (weekly.finalised_at, weekly.leaderboard_version, _entries(monthly)) == state


def test_an_open_window_is_refused_unless_forced() -> None:
    weekly, monthly = _final_and_monthly()
    _field(weekly)

    with pytest.raises(ConflictError, match="still open until 2021-02-08 23:00"):
        event_finalise(event=weekly, by=None, now=local(2021, 2, 8, 22))

    weekly.refresh_from_db()
    assert weekly.status == "scheduled"
    assert Standing.objects.filter(event=weekly, rank__isnull=False).count() == 0
    assert Entry.objects.count() == 0
    forced = event_finalise(event=weekly, by=None, force=True, now=local(2021, 2, 8, 22))
    assert forced.changed is True


def test_a_cancelled_event_cannot_be_finalised() -> None:
    weekly, _ = _final_and_monthly()
    Event.objects.filter(pk=weekly.pk).update(status="cancelled")
    with pytest.raises(ConflictError, match="cancelled"):
        event_finalise(event=weekly, by=None, now=AFTER)


def test_an_empty_event_has_no_champion_and_sends_nobody() -> None:
    weekly, monthly = _final_and_monthly()
    result = event_finalise(event=weekly, by=None, now=AFTER)
    assert (result.changed, result.champion, result.entries) == (True, None, 0)


def test_a_player_advancing_from_two_feeders_keeps_one_entry() -> None:
    weekly, monthly = _final_and_monthly()
    players = _field(weekly)
    other = make_event(
        weekly.season,
        "2021-W06-F",
        "weekly_final",
        day=date(2021, 2, 15),
        feeds=monthly,
    )
    score_games(other, {players["a1"]: [10] * 15})

    event_finalise(event=weekly, by=None, now=AFTER)
    event_finalise(event=other, by=None, now=AFTER)

    entry = Entry.objects.get(event=monthly, player=players["a1"])
    assert entry.source == weekly
    assert Entry.objects.filter(event=monthly).count() == 4


def test_the_monthly_champion_earns_a_title_qualification(organiser: User) -> None:
    from titles.models import Qualification

    weekly, monthly = _final_and_monthly()
    event_finalise(event=weekly, by=organiser, now=AFTER)
    players = _field(monthly)

    event_finalise(event=monthly, by=organiser, now=AFTER)

    qualification = Qualification.objects.get()
    assert (qualification.player, qualification.source, qualification.on) == (
        players["a1"],
        "event:2021-02-M:champion",
        date(2021, 2, 16),
    )
    assert qualification.evidence == {
        "event": "2021-02-M",
        "station": None,
        "rank": 1,
        "score": 60,
        "games": 15,
    }
    event_finalise(event=monthly, by=organiser, now=AFTER)
    assert Qualification.objects.count() == 1


def test_a_weekly_final_champion_earns_no_title() -> None:
    from titles.models import Qualification

    weekly, _ = _final_and_monthly()
    _field(weekly)
    event_finalise(event=weekly, by=None, now=AFTER)
    assert Qualification.objects.count() == 0


def test_the_task_and_the_command_finalise(organiser: User) -> None:
    weekly, monthly = _final_and_monthly()
    _field(weekly)
    Event.objects.filter(pk__in=[weekly.pk, monthly.pk]).update(
        starts_at=local(2020, 2, 8, 10), ends_at=local(2020, 2, 8, 23)
    )

    assert event_finalise_task.delay(weekly.pk, organiser.pk).get() == {
        "event": "2021-W05-F",
        "changed": True,
        "champion": "a1",
        "entries": 4,
    }
    out = StringIO()
    call_command("finalise_event", "2021-W05-F", stdout=out)
    assert out.getvalue() == "2021-W05-F was already finalised; nothing changed\n"
    call_command("finalise_event", "2021-02-M", "--by", "org", stdout=out)
    assert "2021-02-M finalised: 2021-02-M; 0 entries written" in out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_concurrent_finalisations_finalise_once() -> None:
    weekly, monthly = _final_and_monthly()
    _field(weekly)
    results: list[bool] = []
    barrier = threading.Barrier(2)

    def run() -> None:
        barrier.wait()
        try:
            results.append(event_finalise(event=weekly, by=None, now=AFTER).changed)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(results) == [False, True]
    assert Entry.objects.filter(event=monthly).count() == 4


def test_an_event_is_refused_while_a_feeder_is_not_finalised(organiser: User) -> None:
    """Issue 23 item 2: 2021-02-M is fed by two weekly finals; with one still scheduled it
    cannot be finalised, the error names the feeder, and nothing is written."""
    weekly, monthly = _final_and_monthly()
    other = make_event(
        monthly.season,
        "2021-W06-F",
        "weekly_final",
        day=date(2021, 2, 15),
        feeds=monthly,
    )
    event_finalise(event=weekly, by=organiser, now=AFTER)
    _field(monthly)
    entries = _entries(monthly)

    with pytest.raises(
        ConflictError, match="^2021-02-M cannot be finalised before 2021-W06-F is finalised$"
    ):
        event_finalise(event=monthly, by=organiser, now=AFTER, force=True)

    monthly.refresh_from_db()
    assert (monthly.status, monthly.champion, monthly.finalised_at) == ("scheduled", None, None)
    assert _entries(monthly) == entries
    assert not Standing.objects.filter(event=monthly, advanced=True).exists()
    event_finalise(event=other, by=organiser, now=AFTER)
    assert event_finalise(event=monthly, by=organiser, now=AFTER).changed is True
