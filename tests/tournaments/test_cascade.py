"""The whole correction chain (SPEC §4 "Corrections after finalisation"): a correction in a
weekly final reaches the monthly final's field; the monthly final, already played, is marked
and keeps its result until the organiser decides (replay or keep); the plan is shown before
anything is written."""

from datetime import date, timedelta
from typing import Any

import pytest

from accounts.models import Player, User
from core.errors import ConflictError, ServiceError
from flows.corrections import event_field_change_resolve, game_void, preview
from flows.finalisation import event_finalise
from tests.tournaments.factories import local, make_event, make_season, score_games
from titles.models import Qualification
from tournaments.models import Correction, Entry, Event, Game, Seat, Standing

pytestmark = pytest.mark.django_db
AFTER = local(2021, 3, 10, 12)
QUOTAS = {
    "weekly_qualifier": {"national": 0, "per_province": 2},
    "weekly_final": {"national": 3, "per_province": 0},
    "monthly_final": {"national": 1, "per_province": 0},
    "quarterly_final": {"national": 1, "per_province": 0},
    "annual_final": {"national": 0, "per_province": 0},
}


def _chain() -> tuple[Event, Event, Event]:
    """W01-F → 01-M → Q1-F, best 3 of at least 3 games."""
    season = make_season(quotas=QUOTAS, best_n=3, minimum_games=3)
    quarterly = make_event(
        season,
        "2021-Q1-F",
        "quarterly_final",
        day=date(2021, 3, 5),
        champion_achievement="quarterly_champion",
    )
    monthly = make_event(
        season,
        "2021-01-M",
        "monthly_final",
        day=date(2021, 2, 1),
        feeds=quarterly,
        champion_achievement="monthly_champion",
    )
    weekly = make_event(
        season,
        "2021-W01-F",
        "weekly_final",
        day=date(2021, 1, 11),
        feeds=monthly,
    )
    return weekly, monthly, quarterly


def _keys(event: Event) -> list[str]:
    return sorted(Entry.objects.filter(event=event).values_list("player__external_id", flat=True))


def _qualifications() -> dict[str, str]:
    return {q.player.external_id: q.status for q in Qualification.objects.select_related("player")}


def _played(organiser: User) -> tuple[Event, Event, Event, dict[str, Player], list[Game]]:
    """W01-F: a1 30 (6 games), a2 27, a3 24, a4 21 → a1 a2 a3 reach 01-M; there a1 wins
    (90), a2 60, a3 30; a1 reaches Q1-F and earns the monthly champion's qualification."""
    weekly, monthly, quarterly = _chain()
    players = {
        key: Player.objects.create(external_id=key, name=key.upper(), province="江苏")
        for key in ("a1", "a2", "a3", "a4")
    }
    games = score_games(
        weekly,
        {
            players["a1"]: [10] * 6,
            players["a2"]: [9] * 3,
            players["a3"]: [8] * 3,
            players["a4"]: [7] * 3,
        },
    )
    event_finalise(event=weekly, by=organiser, now=AFTER)
    assert _keys(monthly) == ["a1", "a2", "a3"]
    score_games(
        monthly,
        {players["a1"]: [30] * 3, players["a2"]: [20] * 3, players["a3"]: [10] * 3},
        start=monthly.starts_at + timedelta(minutes=1),
    )
    event_finalise(event=monthly, by=organiser, now=AFTER)
    monthly.refresh_from_db()
    assert monthly.champion == players["a1"]
    assert _keys(quarterly) == ["a1"]
    assert _qualifications() == {"a1": "pending"}
    a1_games = [g for g in games if Seat.objects.get(game=g).player == players["a1"]]
    return weekly, monthly, quarterly, players, a1_games


def _void_four(games: list[Game], organiser: User) -> list[Correction]:
    return [game_void(game=g, by=organiser, reason="desync") for g in games[:4]]


def test_the_plan_is_shown_before_anything_is_written(organiser: User) -> None:
    weekly, monthly, quarterly, players, games = _played(organiser)
    for game in games[:3]:
        game_void(game=game, by=organiser, reason="desync")
    logged = Correction.objects.count()

    plan = preview(lambda: [game_void(game=games[3], by=organiser, reason="desync")])

    assert plan == [
        {
            "action": "void_game",
            "event": "2021-W01-F",
            "diff": {
                "champion": {"before": "a1", "after": "a2"},
                "advanced": {"added": ["a4"], "removed": ["a1"]},
                "entries": {"added": ["a4"], "removed": ["a1"]},
                "fed": {"event": "2021-01-M", "played": True, "field_changed": True},
                "standings": [
                    {
                        "player": "a1",
                        "before": {
                            "total": 30,
                            "games": 3,
                            "eligible": True,
                            "rank": 1,
                            "province_rank": 1,
                            "advanced": True,
                        },
                        "after": {
                            "total": 20,
                            "games": 2,
                            "eligible": False,
                            "rank": None,
                            "province_rank": None,
                            "advanced": False,
                        },
                    }
                ],
            },
        }
    ]
    games[3].refresh_from_db()
    monthly.refresh_from_db()
    assert games[3].voided is False
    assert (Correction.objects.count(), monthly.field_changed_at) == (logged, None)
    assert _keys(monthly) == ["a1", "a2", "a3"]


def test_a_correction_marks_the_played_monthly_final_and_replay_moves_the_chain(
    organiser: User,
) -> None:
    """Issue 23 item 1: four of a1's W01-F games voided after 01-M was played and finalised."""
    weekly, monthly, quarterly, players, games = _played(organiser)

    last = _void_four(games, organiser)[-1]

    assert last.diff["entries"] == {"added": ["a4"], "removed": ["a1"]}
    assert last.diff["fed"] == {"event": "2021-01-M", "played": True, "field_changed": True}
    monthly.refresh_from_db()
    assert monthly.field_changed_by == last
    assert monthly.field_changed_at is not None
    assert monthly.champion == players["a1"]  # until the organiser decides
    assert _keys(monthly) == ["a2", "a3", "a4"]
    assert (_keys(quarterly), _qualifications()) == (["a1"], {"a1": "pending"})

    replay = event_field_change_resolve(
        event=monthly, decision="replay", by=organiser, reason="a1 did not qualify"
    )

    monthly = Event.objects.get(pk=monthly.pk)
    assert (monthly.champion, monthly.field_changed_at, monthly.field_changed_by) == (
        players["a2"],
        None,
        None,
    )
    assert not Standing.objects.filter(event=monthly, player=players["a1"]).exists()
    assert _keys(quarterly) == ["a2"]
    assert _qualifications() == {"a1": "voided", "a2": "pending"}
    assert (replay.action, replay.event, replay.by, replay.reason) == (
        "replay_field",
        monthly,
        organiser,
        "a1 did not qualify",
    )
    assert replay.diff == {
        "origin": last.pk,
        "standings_removed": ["a1"],
        "champion": {"before": "a1", "after": "a2"},
        "advanced": {"added": ["a2"], "removed": ["a1"]},
        "entries": {"added": ["a2"], "removed": ["a1"]},
        "fed": {"event": "2021-Q1-F", "played": False, "field_changed": False},
        "qualifications": {"withdrawn": "a1", "recorded": "a2"},
    }


def test_keep_logs_the_decision_and_changes_nothing_else(organiser: User) -> None:
    weekly, monthly, quarterly, players, games = _played(organiser)
    last = _void_four(games, organiser)[-1]

    kept = event_field_change_resolve(
        event=monthly, decision="keep", by=organiser, reason="played in good faith"
    )

    monthly.refresh_from_db()
    assert (monthly.champion, monthly.field_changed_at) == (players["a1"], None)
    assert Standing.objects.filter(event=monthly, player=players["a1"]).exists()
    assert (_keys(monthly), _keys(quarterly)) == (["a2", "a3", "a4"], ["a1"])
    assert _qualifications() == {"a1": "pending"}
    assert (kept.action, kept.reason, kept.diff) == (
        "keep_field",
        "played in good faith",
        {"origin": last.pk},
    )


def test_refused_decisions_write_nothing(organiser: User) -> None:
    weekly, monthly, quarterly, players, games = _played(organiser)
    logged = Correction.objects.count()
    with pytest.raises(ConflictError, match="^2021-01-M has no field change to decide$"):
        event_field_change_resolve(event=monthly, decision="keep", by=organiser, reason="x")
    _void_four(games, organiser)
    logged = Correction.objects.count()
    with pytest.raises(ServiceError, match="decision"):
        event_field_change_resolve(event=monthly, decision="redo", by=organiser, reason="x")
    with pytest.raises(ServiceError, match="reason"):
        event_field_change_resolve(event=monthly, decision="replay", by=organiser, reason=" ")
    monthly.refresh_from_db()
    assert Correction.objects.count() == logged
    assert (monthly.champion, monthly.field_changed_at is not None) == (players["a1"], True)


def test_an_unplayed_fed_event_just_gets_its_new_field(organiser: User) -> None:
    weekly, monthly, _ = _chain()
    players = [
        Player.objects.create(external_id=key, name=key, province="江苏")
        for key in ("b1", "b2", "b3", "b4")
    ]
    games = score_games(weekly, {p: [10 - i] * 3 for i, p in enumerate(players)})
    event_finalise(event=weekly, by=organiser, now=AFTER)

    correction = game_void(game=games[0], by=organiser, reason="desync")

    monthly.refresh_from_db()
    assert correction.diff["fed"] == {"event": "2021-01-M", "played": False, "field_changed": False}
    assert (monthly.field_changed_at, _keys(monthly)) == (None, ["b2", "b3", "b4"])


def test_the_api_previews_then_applies_and_the_organiser_decides(
    organiser: User, organiser_api: Any
) -> None:
    weekly, monthly, quarterly, players, games = _played(organiser)
    for game in games[:3]:
        game_void(game=game, by=organiser, reason="desync")
    body = {"game": games[3].record_id, "reason": "desync", "preview": True}

    planned = organiser_api.post("/api/corrections/game-void/", body, format="json")

    assert planned.status_code == 200
    assert planned.json()["plan"][0]["diff"]["fed"] == {
        "event": "2021-01-M",
        "played": True,
        "field_changed": True,
    }
    assert Game.objects.get(pk=games[3].pk).voided is False
    applied = organiser_api.post(
        "/api/corrections/game-void/", body | {"preview": False}, format="json"
    )
    assert applied.status_code == 201
    assert applied.json()["diff"] == planned.json()["plan"][0]["diff"]

    decide = {"decision": "replay", "reason": "a1 did not qualify"}
    replay_plan = organiser_api.post(
        "/api/events/2021-01-M/field-change/", decide | {"preview": True}, format="json"
    )
    assert replay_plan.json()["plan"][0]["diff"]["champion"] == {"before": "a1", "after": "a2"}
    assert Event.objects.get(pk=monthly.pk).champion == players["a1"]
    done = organiser_api.post("/api/events/2021-01-M/field-change/", decide, format="json")
    assert (done.status_code, done.json()["action"]) == (201, "replay_field")
    assert Event.objects.get(pk=monthly.pk).champion == players["a2"]
    again = organiser_api.post("/api/events/2021-01-M/field-change/", decide, format="json")
    assert again.status_code == 409
