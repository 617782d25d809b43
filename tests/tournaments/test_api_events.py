"""The seasons, events, leaderboard, finalisation, corrections and seated endpoints: public
reads, organiser-only writes, errors that name what is wrong, constant query counts."""

from datetime import date, timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import User
from flows.finalisation import event_finalise
from tests.conftest import token_client
from tests.tournaments.factories import local, make_event, make_players, make_season, score_games
from tests.tournaments.test_finalise import _field, _final_and_monthly
from tournaments.models import CalendarChange, Correction, Entry, Event, Season
from tournaments.services.seasons import season_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def season_2021() -> Season:
    return season_create(year=2021, start=date(2021, 1, 4))


# --- seasons ---------------------------------------------------------------------------------


def test_seasons_are_public_and_created_by_organisers(
    api: APIClient, organiser_api: APIClient, reviewer_api: APIClient
) -> None:
    body = {"year": 2021, "start": "2021-01-04"}
    assert api.post("/api/seasons/", body, format="json").status_code == 401
    assert reviewer_api.post("/api/seasons/", body, format="json").status_code == 403
    assert Season.objects.count() == 0

    created = organiser_api.post("/api/seasons/", body, format="json")

    assert created.status_code == 201
    assert created.json()["ruleset"]["best_n"] == 15
    listing = api.get("/api/seasons/").json()
    assert listing["count"] == 1
    assert listing["results"] == [
        {
            "year": 2021,
            "name": "2021 中国UNO线上巡回赛",
            "starts_on": "2021-01-04",
            "time_zone": "Asia/Shanghai",
            "events": 121,
            "stations": 69,
        }
    ]
    again = organiser_api.post("/api/seasons/", body, format="json")
    assert (again.status_code, again.json()["message"]) == (409, "season 2021 already exists")
    assert Event.objects.count() == 121


def test_a_bad_ruleset_is_refused_naming_the_field(
    organiser_api: APIClient, season_2021: Season
) -> None:
    response = organiser_api.patch(
        "/api/seasons/2021/",
        {"tiebreak_order": ["games"], "reason": "try"},
        format="json",
    )

    assert response.status_code == 400
    assert list(response.json()["fields"]) == ["tiebreak_order"]
    ok = organiser_api.patch(
        "/api/seasons/2021/", {"minimum_games": 10, "reason": "shorter"}, format="json"
    )
    assert (ok.status_code, ok.json()["ruleset"]["minimum_games"]) == (200, 10)


def test_stations_list_numbers_cities_dates_and_champions(
    api: APIClient, season_2021: Season, django_assert_num_queries: Any
) -> None:
    (champion,) = make_players(1)
    Event.objects.filter(code="2021-01-M").update(champion=champion, status="finalised")

    with django_assert_num_queries(2):
        stations = api.get("/api/seasons/2021/stations/").json()

    assert len(stations) == 69
    assert stations[0] == {
        "number": 1,
        "city": "北京",
        "date": "2021-01-11",
        "kind": "weekly_final",
        "event": "2021-W01-F",
        "status": "scheduled",
        "champion": None,
        "title": "第1站 北京站",
    }
    monthly = next(s for s in stations if s["event"] == "2021-01-M")
    assert monthly["champion"] == {"id": champion.external_id, "name": champion.name}
    assert api.get("/api/seasons/1999/stations/").status_code == 404


# --- events ----------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [5, 40])
def test_events_list_filters_and_costs_constant_queries(
    api: APIClient, season_2021: Season, django_assert_num_queries: Any, size: int
) -> None:
    with django_assert_num_queries(2):
        page = api.get(f"/api/events/?season=2021&kind=monthly_final&page_size={size}").json()

    assert page["count"] == 12
    assert len(page["results"]) == min(size, 12)
    assert page["results"][0]["code"] == "2021-01-M"
    assert page["results"][0]["feeds"] == "2021-Q1-F"
    assert api.get("/api/events/?kind=nonsense").status_code == 400


def test_organisers_add_move_and_cancel_events(
    organiser_api: APIClient, reviewer_api: APIClient, season_2021: Season
) -> None:
    add = {
        "season": 2021,
        "code": "2021-NC",
        "kind": "championship",
        "format": "seated",
        "starts_at": "2021-12-01T10:00:00+08:00",
        "ends_at": "2021-12-02T23:00:00+08:00",
        "champion_achievement": "national_championship",
        "reason": "全国锦标赛",
    }
    assert reviewer_api.post("/api/events/", add, format="json").status_code == 403
    created = organiser_api.post("/api/events/", add, format="json")
    assert (created.status_code, created.json()["format"], created.json()["station"]) == (
        201,
        "seated",
        None,
    )
    assert organiser_api.post("/api/events/", add, format="json").status_code == 409

    moved = organiser_api.patch(
        "/api/events/2021-W01-F/",
        {
            "starts_at": "2021-01-19T10:00:00+08:00",
            "ends_at": "2021-01-19T23:00:00+08:00",
            "reason": "maintenance",
        },
        format="json",
    )
    assert (moved.status_code, moved.json()["station"]) == (200, 2)
    cancelled = organiser_api.patch(
        "/api/events/2021-W02-F/", {"status": "cancelled", "reason": "holiday"}, format="json"
    )
    assert (cancelled.json()["status"], cancelled.json()["station"]) == ("cancelled", None)
    both = organiser_api.patch(
        "/api/events/2021-W03-F/",
        {"status": "cancelled", "starts_at": "2021-01-19T10:00:00+08:00", "reason": "x"},
        format="json",
    )
    assert both.status_code == 400
    assert list(CalendarChange.objects.values_list("action", flat=True).order_by("id")) == [
        "season_create",
        "add",
        "move",
        "cancel",
    ]


# --- leaderboards ----------------------------------------------------------------------------


def _qualifier_with_field(n: int = 30) -> Event:
    event = make_event(make_season())
    players = make_players(n, ("江苏", "浙江"))
    score_games(event, {p: [i + 1] * (15 if i % 5 else 14) for i, p in enumerate(players)})
    return event


@pytest.mark.parametrize("size", [3, 20])
def test_leaderboard_pages_cost_constant_queries(
    api: APIClient, django_assert_num_queries: Any, size: int
) -> None:
    _qualifier_with_field()

    with django_assert_num_queries(3):
        page = api.get(f"/api/events/2021-W05-Q/leaderboard/?page_size={size}").json()

    assert page["count"] == 30
    assert [row["rank"] for row in page["results"]] == list(range(1, size + 1))
    first = page["results"][0]
    assert first == {
        "rank": 1,
        "province_rank": None,
        "player": first["player"],
        "name": first["name"],
        "province": "浙江",
        "total": 30 * 15,
        "games": 15,
        "best": 30,
        "eligible": True,
        "advanced": False,
    }


def test_leaderboard_by_province_and_player(api: APIClient) -> None:
    _qualifier_with_field()

    jiangsu = api.get("/api/events/2021-W05-Q/leaderboard/?province=江苏&page_size=500").json()
    assert jiangsu["count"] == 15
    ranked = [r for r in jiangsu["results"] if r["eligible"]]
    assert [r["province_rank"] for r in ranked] == list(range(1, 13))
    assert {r["province"] for r in jiangsu["results"]} == {"江苏"}

    player = ranked[1]["player"]
    mine = api.get(f"/api/events/2021-W05-Q/leaderboard/?player={player}").json()
    assert [(r["rank"], r["province_rank"]) for r in mine["results"]] == [(4, 2)]
    assert api.get("/api/events/2021-W05-Q/leaderboard/?province=火星").status_code == 400
    assert api.get("/api/events/NOPE/leaderboard/").status_code == 404


def test_page_size_is_bounded(api: APIClient) -> None:
    _qualifier_with_field()
    page = api.get("/api/events/2021-W05-Q/leaderboard/?page_size=100000").json()
    assert len(page["results"]) == 30  # capped at 500, the field is 30


def test_advancement_reason(api: APIClient) -> None:
    weekly, _ = _final_and_monthly()
    _field(weekly)
    event_finalise(event=weekly, by=None, force=True)

    response = api.get("/api/events/2021-W05-F/players/c1/advancement/")

    assert response.json() == {
        "player": "c1",
        "advances": True,
        "reason": "national rank 6 > 3; province rank 1 ≤ 1",
        "national_rank": 6,
        "province_rank": 1,
        "by_national": False,
        "by_province": True,
        "finalised": True,
        "feeds": "2021-02-M",
    }
    out = api.get("/api/events/2021-W05-F/players/c0/advancement/").json()
    assert (out["advances"], out["reason"], out["national_rank"]) == (
        False,
        "unranked: 14 games, 15 needed",
        None,
    )
    assert api.get("/api/events/2021-W05-F/players/zz/advancement/").status_code == 404


# --- finalisation ----------------------------------------------------------------------------


def test_finalise_endpoint_queues_the_job_and_is_idempotent(
    api: APIClient,
    organiser_api: APIClient,
    django_capture_on_commit_callbacks: Any,
) -> None:
    weekly, monthly = _final_and_monthly()
    _field(weekly)
    url = "/api/events/2021-W05-F/finalise/"
    assert api.post(url, {}, format="json").status_code == 401
    Event.objects.filter(pk=weekly.pk).update(ends_at=timezone.now() + timedelta(days=1))

    refused = organiser_api.post(url, {}, format="json")
    assert (refused.status_code, refused.json()["code"]) == (409, "conflict")
    assert "still open" in refused.json()["message"]

    with django_capture_on_commit_callbacks(execute=True):
        queued = organiser_api.post(url, {"force": True}, format="json")
    body = queued.json()
    assert (queued.status_code, body["event"], body["status"]) == (202, "2021-W05-F", "queued")
    job = organiser_api.get(f"/api/jobs/{body['job']}/").json()
    assert (job["task"], job["subject"], job["state"], job["error"]) == (
        "tournaments.event_finalise",
        "2021-W05-F",
        "succeeded",
        "",
    )
    assert (job["outcome"]["event"], job["outcome"]["entries"]) == ("2021-W05-F", 4)
    assert api.get(f"/api/jobs/{body['job']}/").status_code == 401
    weekly.refresh_from_db()
    assert weekly.status == "finalised"
    assert Entry.objects.filter(event=monthly).count() == 4

    again = organiser_api.post(url, {"force": True}, format="json")
    assert (again.status_code, again.json()["status"]) == (200, "finalised")
    board = api.get("/api/events/2021-W05-F/leaderboard/").json()["results"]
    assert [(r["player"], r["rank"], r["province_rank"], r["advanced"]) for r in board[:3]] == [
        ("a1", 1, 1, True),
        ("a2", 2, 2, True),
        ("b1", 3, 1, True),
    ]


def test_entries_list_and_invitations(
    api: APIClient, organiser_api: APIClient, season_2021: Season
) -> None:
    players = make_players(2)
    url = "/api/events/2021-01-M/entries/"
    body = {"players": [p.external_id for p in players], "reason": "wild card"}

    assert api.post(url, body, format="json").status_code == 401
    created = organiser_api.post(url, body, format="json")
    missing = organiser_api.post(url, {"players": ["zz"], "reason": "x"}, format="json")

    assert created.status_code == 201
    assert [e["basis"] for e in created.json()] == ["invited", "invited"]
    assert (missing.status_code, missing.json()["fields"]) == (400, {"players": ["zz"]})
    listing = api.get(url).json()
    assert listing["count"] == 2
    assert listing["results"][0]["reason"] == "wild card"


# --- corrections -----------------------------------------------------------------------------


def test_corrections_endpoints(
    api: APIClient, organiser_api: APIClient, reviewer: User, organiser: User
) -> None:
    weekly, monthly = _final_and_monthly()
    players = _field(weekly)
    event_finalise(event=weekly, by=None, force=True)
    game = weekly.games.filter(seats__player=players["a1"]).order_by("-seats__score").first()
    assert game is not None

    assert api.post("/api/corrections/game-void/", {}, format="json").status_code == 401
    voided = organiser_api.post(
        "/api/corrections/game-void/", {"game": game.record_id, "reason": "desync"}, format="json"
    )
    assert voided.status_code == 201
    assert voided.json()["diff"]["champion"] == {"before": "a1", "after": "a2"}
    assert voided.json()["by"] == "org"
    restored = organiser_api.post(
        "/api/corrections/game-restore/", {"game": game.record_id, "reason": "ok"}, format="json"
    )
    assert restored.json()["diff"]["champion"] == {"before": "a2", "after": "a1"}
    sanction = organiser_api.post(
        "/api/corrections/player-void/",
        {"player": "b1", "events": ["2021-W05-F"], "reason": "case 7"},
        format="json",
    )
    assert [c["action"] for c in sanction.json()] == ["void_player"]
    unknown = organiser_api.post(
        "/api/corrections/player-void/",
        {"player": "b1", "events": ["NOPE"], "reason": "x"},
        format="json",
    )
    assert unknown.status_code == 400

    log = token_client(reviewer).get("/api/corrections/?event=2021-W05-F").json()
    assert [c["action"] for c in log["results"]] == ["void_player", "restore_game", "void_game"]
    assert api.get("/api/corrections/").status_code == 401
    assert Correction.objects.count() == 3


def test_fix_endpoint_names_the_bad_card(organiser_api: APIClient) -> None:
    from tests.tournaments.factories import play

    event = make_event(make_season())
    a, b = make_players(2)
    game = play(event, [(a, []), (b, ["R5"])], ended_at=local(2021, 2, 2, 12))

    response = organiser_api.post(
        "/api/corrections/game-fix/",
        {
            "game": game.record_id,
            "hands": {a.external_id: [], b.external_id: ["Q7"]},
            "reason": "x",
        },
        format="json",
    )

    assert response.status_code == 400
    assert "unknown card 'Q7'" in response.json()["message"]


# --- seated ----------------------------------------------------------------------------------


def test_seated_endpoints(api: APIClient, organiser_api: APIClient) -> None:
    event = make_event(make_season(), "2021-NC", "championship", format="seated")
    players = make_players(8)
    Entry.objects.bulk_create([Entry(event=event, player=p, basis="invited") for p in players])

    assert api.post("/api/events/2021-NC/rounds/", {"seed": 5}, format="json").status_code == 401
    seated = organiser_api.post("/api/events/2021-NC/rounds/", {"seed": 5}, format="json").json()
    assert (seated["number"], seated["seed"], len(seated["tables"])) == (1, 5, 2)
    table = seated["tables"][0]
    places = {s["player"]: i for i, s in enumerate(table["seats"], start=1)}

    result = organiser_api.post(
        "/api/events/2021-NC/rounds/1/tables/1/result/", {"places": places}, format="json"
    )
    assert [s["points"] for s in result.json()["seats"]] == [4, 2, 1, 0]
    replay = api.get("/api/events/2021-NC/rounds/1/replay/").json()
    assert (replay["reproduced"], replay["seed"]) == (True, 5)
    rounds = api.get("/api/events/2021-NC/rounds/").json()
    assert [t["result_entered_at"] is not None for t in rounds[0]["tables"]] == [True, False]
    assert api.get("/api/events/2021-NC/rounds/9/replay/").status_code == 404
    too_early = organiser_api.post("/api/events/2021-NC/rounds/", {}, format="json")
    assert (too_early.status_code, too_early.json()["fields"]) == (409, {"tables": [2]})


def test_the_schema_validates(tmp_path: Any) -> None:
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", f"{tmp_path}/s.yaml")


def test_the_finalise_api_refuses_an_event_before_its_feeders(organiser_api: APIClient) -> None:
    _, monthly = _final_and_monthly()

    refused = organiser_api.post("/api/events/2021-02-M/finalise/", {"force": True}, format="json")

    assert (refused.status_code, refused.json()["message"]) == (
        409,
        "2021-02-M cannot be finalised before 2021-W05-F is finalised",
    )
    assert refused.json()["fields"] == {"feeders": ["2021-W05-F"]}
    monthly.refresh_from_db()
    assert monthly.status == "scheduled"


def test_an_event_shows_a_field_changed_by_a_correction(api: APIClient) -> None:
    _, monthly = _final_and_monthly()

    answer = api.get("/api/events/2021-02-M/").json()

    assert (answer["field_changed_at"], answer["field_changed_by"]) == (None, None)


@pytest.mark.parametrize("code", ["2021/NC", "../NC", "2021 NC", "2021-N\u200bC"])
def test_an_event_code_outside_the_pattern_is_refused_and_nothing_written(
    organiser_api: APIClient, season_2021: Season, code: str
) -> None:
    before = Event.objects.count()
    add = {
        "season": 2021,
        "code": code,
        "kind": "championship",
        "starts_at": "2021-12-01T10:00:00+08:00",
        "ends_at": "2021-12-02T23:00:00+08:00",
        "reason": "全国锦标赛",
    }

    refused = organiser_api.post("/api/events/", add, format="json")

    assert refused.status_code == 400
    assert refused.json()["code"] == "invalid"
    assert "may hold only letters" in refused.json()["fields"]["code"][0]
    assert Event.objects.count() == before


@pytest.mark.parametrize(
    ("starts_at", "ends_at"),
    [
        ("0105-11-30T10:00:00+08:00", "0105-11-30T23:00:00+08:00"),
        ("2020-12-31T10:00:00+08:00", "2020-12-31T23:00:00+08:00"),
        ("2022-04-10T10:00:00+08:00", "2022-04-10T23:00:00+08:00"),
    ],
)
def test_an_event_window_outside_its_season_is_refused_and_nothing_written(
    organiser_api: APIClient, season_2021: Season, starts_at: str, ends_at: str
) -> None:
    before = Event.objects.values_list("starts_at", "ends_at").get(code="2021-W01-F")
    changes = CalendarChange.objects.count()

    moved = organiser_api.patch(
        "/api/events/2021-W01-F/",
        {"starts_at": starts_at, "ends_at": ends_at, "reason": "typo"},
        format="json",
    )

    assert moved.status_code == 400
    assert "is outside season 2021 (2021-01-04 to 2022-04-09)" in moved.json()["message"]
    assert Event.objects.values_list("starts_at", "ends_at").get(code="2021-W01-F") == before
    assert CalendarChange.objects.count() == changes
