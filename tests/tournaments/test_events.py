"""Organisers move, add and cancel events, and invite players (SPEC §1, §2)."""

from datetime import date, timedelta

import pytest
from django.test import Client
from pytest_django import DjangoCaptureOnCommitCallbacks

from accounts.models import User
from core.errors import ConflictError, ServiceError
from tests.accounts.signin import client_sign_in
from tests.tournaments.factories import local, make_players, score_games
from tournaments.models import CalendarChange, Entry, Event, Season
from tournaments.selectors.events import station_title
from tournaments.services.entries import entry_invite
from tournaments.services.events import event_add, event_cancel, event_move
from tournaments.services.seasons import season_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def season() -> Season:
    return season_create(year=2021, start=date(2021, 1, 4))


def _stations(season: Season) -> list[tuple[int | None, str]]:
    return list(
        Event.objects.filter(season=season, station__isnull=False)
        .order_by("station")
        .values_list("station", "code")
    )


def test_moving_a_final_renumbers_the_stations_in_date_order(
    season: Season, organiser: User
) -> None:
    # Move the weekly final of week 1 (station 1) after the week 2 final (station 2).
    event = Event.objects.get(code="2021-W01-F")
    moved = event_move(
        event=event,
        starts_at=local(2021, 1, 19, 10),
        ends_at=local(2021, 1, 19, 23),
        by=organiser,
        reason="server maintenance",
    )

    assert moved.station == 2
    assert _stations(season)[:3] == [(1, "2021-W02-F"), (2, "2021-W01-F"), (3, "2021-W03-F")]
    assert (moved.city, Event.objects.get(code="2021-W02-F").city) == ("北京", "上海")
    change = CalendarChange.objects.get(action="move")
    assert (change.event, change.by, change.reason) == (moved, organiser, "server maintenance")
    assert change.diff["stations"] == {"2021-W01-F": [1, 2], "2021-W02-F": [2, 1]}
    assert change.diff["starts_at"][1] == "2021-01-19T10:00:00+08:00"


def test_a_move_needs_a_reason_and_a_window(season: Season) -> None:
    event = Event.objects.get(code="2021-W01-F")
    with pytest.raises(ServiceError, match="reason"):
        event_move(
            event=event, starts_at=event.starts_at, ends_at=event.ends_at, by=None, reason=""
        )
    with pytest.raises(ServiceError, match="must end after it starts"):
        event_move(
            event=event, starts_at=event.ends_at, ends_at=event.starts_at, by=None, reason="x"
        )
    assert CalendarChange.objects.filter(action="move").count() == 0


def test_a_move_that_would_leave_games_outside_is_refused(season: Season) -> None:
    event = Event.objects.get(code="2021-W05-Q")
    (player,) = make_players(1)
    score_games(event, {player: [10]}, start=local(2021, 2, 3, 12))

    with pytest.raises(ConflictError, match="1 games outside the new window"):
        event_move(
            event=event,
            starts_at=local(2021, 2, 4, 10),
            ends_at=local(2021, 2, 7, 23),
            by=None,
            reason="shorter",
        )
    event.refresh_from_db()
    assert event.starts_at == local(2021, 2, 1, 10)


def test_a_finalised_event_cannot_move_or_be_cancelled(season: Season) -> None:
    event = Event.objects.get(code="2021-W01-F")
    Event.objects.filter(pk=event.pk).update(status="finalised")

    with pytest.raises(ConflictError, match="finalised and cannot be moved"):
        event_move(
            event=event, starts_at=event.starts_at, ends_at=event.ends_at, by=None, reason="x"
        )
    with pytest.raises(ConflictError, match="finalised and cannot be cancelled"):
        event_cancel(event=event, by=None, reason="x")
    assert CalendarChange.objects.exclude(action="season_create").count() == 0


def test_cancelling_frees_the_station_number(season: Season, organiser: User) -> None:
    event = Event.objects.get(code="2021-W02-F")

    cancelled = event_cancel(event=event, by=organiser, reason="holiday")
    again = event_cancel(event=event, by=organiser, reason="holiday")

    assert (cancelled.status, cancelled.station) == ("cancelled", None)
    assert again.status == "cancelled"
    assert _stations(season)[:2] == [(1, "2021-W01-F"), (2, "2021-W03-F")]
    assert len(_stations(season)) == 68
    change = CalendarChange.objects.get(action="cancel")
    assert change.diff["stations"]["2021-W02-F"] == [2, None]
    assert change.diff["stations"]["2021-A"] == [66, 65]


def test_adding_a_custom_final_makes_it_a_station(season: Season, organiser: User) -> None:
    event = event_add(
        season=season,
        code="2021-SPRING",
        kind="monthly_final",
        starts_at=local(2021, 1, 12, 10),
        ends_at=local(2021, 1, 12, 23),
        city="苏州",
        by=organiser,
        reason="spring festival special",
    )

    assert (event.station, event.name, event.champion_achievement) == (
        2,
        "苏州站 月赛",
        "monthly_champion",
    )
    assert _stations(season)[:3] == [(1, "2021-W01-F"), (2, "2021-SPRING"), (3, "2021-W02-F")]
    assert CalendarChange.objects.get(action="add").diff["code"] == "2021-SPRING"


def test_adding_a_championship_is_not_a_station(season: Season) -> None:
    event = event_add(
        season=season,
        code="2021-NC",
        kind="championship",
        event_format="seated",
        starts_at=local(2021, 12, 1, 10),
        ends_at=local(2021, 12, 2, 23),
        champion_achievement="national_championship",
        by=None,
        reason="全国锦标赛",
    )
    assert (event.station, event.format, event.champion_achievement) == (
        None,
        "seated",
        "national_championship",
    )


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("2021-W01-Q", "event 2021-W01-Q already exists"),
        ("bad code", "may hold only letters A-Z a-z, digits and - _ ."),
    ],
)
def test_adding_a_taken_or_bad_code_is_refused(season: Season, code: str, message: str) -> None:
    before = Event.objects.count()
    with pytest.raises(ServiceError, match=message):
        event_add(
            season=season,
            code=code,
            kind="custom",
            starts_at=local(2021, 3, 1, 10),
            ends_at=local(2021, 3, 1, 23),
            by=None,
            reason="x",
        )
    assert Event.objects.count() == before


def test_station_title() -> None:
    # The tour's record: "第十三站：南京站（2020年8月17日）" — the 2020 season opened 2020-06-01.
    season_create(year=2020, start=date(2020, 6, 1), weeks=30)
    (champion,) = make_players(1)
    champion.name = "小猴子"
    event = Event.objects.get(season__year=2020, station=13)

    assert (event.code, event.starts_at) == ("2020-W33-F", local(2020, 8, 17, 10))
    assert station_title(event) == "第13站 南京站"
    event.champion = champion
    assert station_title(event) == "第13站 南京站 冠军：小猴子"
    assert station_title(Event.objects.get(code="2020-W33-Q")) == "2020-W33-Q 周预赛"


# --- entries -------------------------------------------------------------------------------


def test_invitations_enter_players_once_and_are_logged(season: Season, organiser: User) -> None:
    event = Event.objects.get(code="2021-01-M")
    players = make_players(3)
    Entry.objects.create(
        event=event, player=players[0], basis="advanced", source=event.fed_by.first()
    )

    created = entry_invite(event=event, players=players, by=organiser, reason="wild card")
    again = entry_invite(event=event, players=players, by=organiser, reason="wild card")

    assert [e.player for e in created] == players[1:]
    assert again == []
    bases = dict(Entry.objects.filter(event=event).values_list("player", "basis"))
    assert bases == {players[0].pk: "advanced", players[1].pk: "invited", players[2].pk: "invited"}
    change = CalendarChange.objects.get(action="invite")
    assert change.diff == {"players": [p.external_id for p in players[1:]]}


def test_open_events_and_closed_events_take_no_invitations(season: Season) -> None:
    players = make_players(1)
    with pytest.raises(ServiceError, match="open to every player"):
        entry_invite(
            event=Event.objects.get(code="2021-W01-Q"), players=players, by=None, reason="x"
        )
    final = Event.objects.get(code="2021-W01-F")
    final.status = "finalised"
    final.save()
    with pytest.raises(ConflictError, match="entries are closed"):
        entry_invite(event=final, players=players, by=None, reason="x")
    assert Entry.objects.count() == 0


def test_window_end_is_after_start(season: Season) -> None:
    qualifier = Event.objects.get(code="2021-W01-Q")
    assert qualifier.ends_at - qualifier.starts_at == timedelta(days=6, hours=14) - timedelta(
        microseconds=1
    )


# --- the admin -----------------------------------------------------------------------------


@pytest.fixture
def boss(client: Client) -> Client:
    user = User.objects.create_superuser("boss", password="pw-for-tests-only")
    client_sign_in(client, user)
    return client


def test_the_admin_lists_moves_and_cancels_events(boss: Client, season: Season) -> None:
    assert boss.get("/admin/tournaments/event/?kind__exact=monthly_final").status_code == 200
    event = Event.objects.get(code="2021-W01-F")
    url = f"/admin/tournaments/event/{event.pk}/change/"
    assert boss.get(url).status_code == 200

    moved = boss.post(
        url,
        {
            "starts_at_0": "2021-01-19",
            "starts_at_1": "10:00:00",
            "ends_at_0": "2021-01-19",
            "ends_at_1": "23:00:00",
            "reason": "maintenance",
        },
    )
    assert moved.status_code == 302
    event.refresh_from_db()
    assert (event.station, event.starts_at) == (2, local(2021, 1, 19, 10))
    cancelled = boss.post(
        url,
        {
            "starts_at_0": "2021-01-19",
            "starts_at_1": "10:00:00",
            "ends_at_0": "2021-01-19",
            "ends_at_1": "23:00:00",
            "cancel": "on",
            "reason": "holiday",
        },
    )
    assert cancelled.status_code == 302
    assert list(
        CalendarChange.objects.exclude(action="season_create").values_list("action", "reason")
    ) == [("cancel", "holiday"), ("move", "maintenance")]


def test_the_admin_refuses_a_bad_window_on_the_form(boss: Client, season: Season) -> None:
    event = Event.objects.get(code="2021-W01-F")
    response = boss.post(
        f"/admin/tournaments/event/{event.pk}/change/",
        {
            "starts_at_0": "2021-01-19",
            "starts_at_1": "10:00:00",
            "ends_at_0": "2021-01-18",
            "ends_at_1": "23:00:00",
            "reason": "oops",
        },
    )
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["ends_at"] == [
        "the window must end after it starts (2021-01-19T10:00:00+08:00 → "
        "2021-01-18T23:00:00+08:00)"
    ]
    assert CalendarChange.objects.exclude(action="season_create").count() == 0


def test_the_admin_adds_an_event(boss: Client, season: Season) -> None:
    response = boss.post(
        "/admin/tournaments/event/add/",
        {
            "season": season.pk,
            "code": "2021-NC",
            "kind": "championship",
            "format": "seated",
            "name": "",
            "city": "南京",
            "starts_at_0": "2021-12-01",
            "starts_at_1": "10:00:00",
            "ends_at_0": "2021-12-02",
            "ends_at_1": "23:00:00",
            "champion_achievement": "national_championship",
            "reason": "全国锦标赛",
        },
    )
    assert response.status_code == 302
    event = Event.objects.get(code="2021-NC")
    assert (event.format, event.name, event.champion_achievement) == (
        "seated",
        "南京站 锦标赛",
        "national_championship",
    )
    taken = boss.post(
        "/admin/tournaments/event/add/",
        {
            "season": season.pk,
            "code": "2021-NC",
            "kind": "custom",
            "format": "leaderboard",
            "starts_at_0": "2021-12-01",
            "starts_at_1": "10:00:00",
            "ends_at_0": "2021-12-02",
            "ends_at_1": "23:00:00",
            "reason": "again",
        },
    )
    assert taken.context["adminform"].form.errors["code"] == ["event 2021-NC already exists"]


def test_the_admin_finalise_action_queues_the_job(
    boss: Client, season: Season, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    event = Event.objects.get(code="2021-W01-Q")
    with django_capture_on_commit_callbacks(execute=True):
        response = boss.post(
            "/admin/tournaments/event/",
            {"action": "finalise", "_selected_action": [event.pk]},
        )
    assert response.status_code == 302
    event.refresh_from_db()
    assert event.status == "finalised"


@pytest.mark.parametrize(
    "page", ["entry", "correction", "calendarchange", "game", "seat", "seatedround", "seatedtable"]
)
def test_the_read_only_admin_pages_load(boss: Client, page: str) -> None:
    assert boss.get(f"/admin/tournaments/{page}/").status_code == 200
    assert boss.get(f"/admin/tournaments/{page}/add/").status_code == 403
