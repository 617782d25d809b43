"""The title API (SPEC §9): public titles on a day, registry, verification; review."""

from collections.abc import Callable
from datetime import date
from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.models import Player, User
from titles import services
from titles.models import PlayerTitle, Qualification, TitleChange, TitleTerm
from titles.recompute import titles_recompute_all

pytestmark = pytest.mark.django_db


@pytest.fixture
def history(
    freeze: Callable[[date], None], player: Player, grant: Callable[..., Qualification]
) -> Player:
    """小猴子: Master 2021-03-01..2022-03-01, extended by 2021-12-01 to 2023-03-01."""
    freeze(date(2022, 6, 1))
    grant(player, "event:2021-03-M", date(2021, 3, 1))
    grant(player, "event:2021-12-M", date(2021, 12, 1))
    return player


def titles_on(api: APIClient, player: Player, day: str) -> dict[str, Any]:
    response = api.get(f"/api/players/{player.external_id}/titles/", {"as_of": day})
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def test_titles_on_days_before_inside_and_after_a_term(api: APIClient, history: Player) -> None:
    code = TitleTerm.objects.get(player=history).code
    assert titles_on(api, history, "2021-02-28") == {
        "player": {"id": history.external_id, "name": "小猴子", "province": "江苏"},
        "as_of": "2021-02-28",
        "status": "none",
        "term": None,
        "lifetime_since": None,
        "qualifications": [],
        "international_master": [],
    }
    inside = titles_on(api, history, "2021-06-01")
    assert inside["status"] == "master"
    assert inside["term"] == {"start": "2021-03-01", "valid_until": "2023-03-01", "code": code}
    assert inside["qualifications"] == [
        {
            "source": "event:2021-03-M",
            "on": "2021-03-01",
            "confers": "master",
            "rule": "monthly_champion",
            "description": "月赛冠军 — champion of a monthly final",
        },
        {
            "source": "event:2021-12-M",
            "on": "2021-12-01",
            "confers": "master",
            "rule": "monthly_champion",
            "description": "月赛冠军 — champion of a monthly final",
        },
    ]
    assert titles_on(api, history, "2023-03-01")["status"] == "master"
    after = titles_on(api, history, "2023-03-02")
    assert (after["status"], after["term"], after["qualifications"]) == ("none", None, [])


def test_titles_count_only_approved_data_and_default_to_today(
    api: APIClient, history: Player, record: Callable[..., Qualification]
) -> None:
    record(history, "event:2022-05-M", date(2022, 5, 1))  # pending
    today = api.get(f"/api/players/{history.external_id}/titles/").json()
    assert today["as_of"] == "2022-06-01"
    assert [q["source"] for q in today["qualifications"]] == [
        "event:2021-03-M",
        "event:2021-12-M",
    ]
    assert api.get("/api/players/nobody/titles/").status_code == 404
    assert api.get(f"/api/players/{history.external_id}/titles/?as_of=June").status_code == 400


def test_registry_lists_current_and_lifetime_masters_by_province(
    api: APIClient,
    freeze: Callable[[date], None],
    make_player: Callable[..., Player],
    grant: Callable[..., Qualification],
    django_assert_num_queries: Any,
) -> None:
    freeze(date(2022, 6, 1))
    js, zj, lapsed, lifetime = (
        make_player(province="江苏"),
        make_player(province="浙江"),
        make_player(province="江苏"),
        make_player(province="浙江"),
    )
    grant(js, "m", date(2022, 1, 1))
    grant(zj, "m", date(2022, 2, 1))
    grant(lapsed, "m", date(2021, 1, 1))
    grant(lifetime, "m", date(2021, 1, 1))
    grant(lifetime, "nc", date(2021, 11, 20), achievement="national_championship")

    body = api.get("/api/titles/registry/").json()
    assert body["count"] == 3
    assert [(r["player"]["id"], r["status"], r["valid_until"]) for r in body["results"]] == [
        (js.external_id, "master", "2023-01-01"),
        (zj.external_id, "master", "2023-02-01"),
        (lifetime.external_id, "lifetime", "2022-01-01"),
    ]
    by_province = api.get("/api/titles/registry/", {"province": "浙江"}).json()
    assert [r["player"]["id"] for r in by_province["results"]] == [
        zj.external_id,
        lifetime.external_id,
    ]
    lifetimes = api.get("/api/titles/registry/", {"status": "lifetime"}).json()
    assert [r["player"]["id"] for r in lifetimes["results"]] == [lifetime.external_id]
    assert api.get("/api/titles/registry/", {"province": "火星"}).status_code == 400

    with django_assert_num_queries(2):
        api.get("/api/titles/registry/")
    for n in range(5):
        grant(make_player(), f"m{n}", date(2022, 3, 1))
    with django_assert_num_queries(2):
        assert api.get("/api/titles/registry/").json()["count"] == 8


def test_verification_code_is_stable_across_recompute(
    api: APIClient, history: Player, reviewer: User
) -> None:
    code = TitleTerm.objects.get(player=history).code
    assert api.get(f"/api/titles/verify/{code}/").json() == {
        "code": code,
        "player": {"id": history.external_id, "name": "小猴子", "province": "江苏"},
        "start": "2021-03-01",
        "valid_until": "2023-03-01",
        "state": "current",
    }
    PlayerTitle.objects.all().delete()
    TitleTerm.objects.all().delete()
    TitleChange.objects.filter(retracts__isnull=False).delete()
    TitleChange.objects.all().delete()
    titles_recompute_all()
    assert TitleTerm.objects.get(player=history).code == code
    lower = f"{code[:4]}-{code[4:8]}-{code[8:]}".lower()
    assert api.get(f"/api/titles/verify/{lower}/").json()["state"] == "current"

    first = Qualification.objects.get(source="event:2021-03-M")
    services.qualification_reject(
        qualification=first, by=reviewer, reason="voided", expected_version=first.version
    )
    assert api.get(f"/api/titles/verify/{code}/").json()["state"] == "void"
    assert api.get("/api/titles/verify/NOPE/").status_code == 404


def test_queue_is_for_reviewers_with_evidence_and_integrity_status(
    api: APIClient,
    organiser_api: APIClient,
    reviewer_api: APIClient,
    player: Player,
    record: Callable[..., Qualification],
) -> None:
    pending = record(player, "event:2021-03-M", date(2021, 3, 1))
    assert api.get("/api/titles/queue/").status_code == 401
    assert organiser_api.get("/api/titles/queue/").status_code == 403
    body = reviewer_api.get("/api/titles/queue/").json()
    assert body["count"] == 1
    [item] = body["results"]
    assert (item["held"], item["audited"]) == (False, True)
    assert item["qualification"]["id"] == pending.pk
    assert item["qualification"]["version"] == 1
    assert item["qualification"]["evidence"] == {
        "event": "event:2021-03-M",
        "rank": 1,
        "score": 1234,
        "games": 15,
    }


def test_decisions_with_expected_version_and_409_on_conflict(
    freeze: Callable[[date], None],
    reviewer_api: APIClient,
    organiser_api: APIClient,
    player: Player,
    record: Callable[..., Qualification],
) -> None:
    freeze(date(2021, 6, 1))
    pending = record(player, "event:2021-03-M", date(2021, 3, 1))
    url = f"/api/titles/qualifications/{pending.pk}/"
    body = {"expected_version": 1, "reason": "checked"}
    assert organiser_api.post(url + "approve/", body, format="json").status_code == 403
    approved = reviewer_api.post(url + "approve/", body, format="json")
    assert approved.status_code == 200
    assert (approved.json()["status"], approved.json()["version"]) == ("approved", 2)

    conflict = reviewer_api.post(url + "reject/", body, format="json")
    assert conflict.status_code == 409
    assert conflict.json()["code"] == "conflict"
    assert conflict.json()["fields"] == {"reason": "stale", "status": "approved", "version": 2}
    assert reviewer_api.post(url + "reject/", {"expected_version": 2}, format="json").json()[
        "code"
    ] == ("invalid")
    rejected = reviewer_api.post(
        url + "reject/", {"expected_version": 2, "reason": "fraud"}, format="json"
    )
    assert rejected.json()["status"] == "rejected"
    assert (
        reviewer_api.post(
            "/api/titles/qualifications/999/approve/", body, format="json"
        ).status_code
        == 404
    )


def test_bulk_approve(
    reviewer_api: APIClient, player: Player, record: Callable[..., Qualification]
) -> None:
    a = record(player, "a", date(2021, 3, 1))
    b = record(player, "b", date(2021, 4, 1))
    response = reviewer_api.post(
        "/api/titles/qualifications/bulk-approve/",
        {"items": [{"id": a.pk, "expected_version": 1}, {"id": b.pk, "expected_version": 5}]},
        format="json",
    )
    assert response.status_code == 200
    assert response.json()["approved"] == [a.pk]
    assert [(r["id"], r["code"]) for r in response.json()["refused"]] == [(b.pk, "conflict")]


def test_manual_qualification_and_international_master_entry(
    freeze: Callable[[date], None],
    reviewer_api: APIClient,
    organiser_api: APIClient,
    player: Player,
) -> None:
    freeze(date(2021, 12, 31))
    manual = {
        "player": player.external_id,
        "rule": "china_masters",
        "on": "2021-12-20",
        "source": "china-masters-2021",
        "reason": "offline final, results sheet on file",
    }
    assert organiser_api.post("/api/titles/qualifications/", manual).status_code == 403
    created = reviewer_api.post("/api/titles/qualifications/", manual, format="json")
    assert created.status_code == 201
    assert (created.json()["source"], created.json()["status"]) == (
        "manual:china-masters-2021",
        "pending",
    )
    assert reviewer_api.post("/api/titles/qualifications/", manual, format="json").status_code == (
        409
    )
    unknown = reviewer_api.post(
        "/api/titles/qualifications/", {**manual, "rule": "nope"}, format="json"
    )
    assert unknown.status_code == 404

    international = reviewer_api.post(
        "/api/titles/international-masters/",
        {"player": player.external_id, "granted_on": "2021-05-01", "source": "WUF 2021"},
        format="json",
    )
    assert international.status_code == 201
    assert international.json()["valid_until"] is None
    on_day = reviewer_api.get(f"/api/players/{player.external_id}/titles/?as_of=2021-06-01")
    assert on_day.json()["status"] == "none"
    assert on_day.json()["international_master"] == [
        {"granted_on": "2021-05-01", "valid_until": None, "source": "WUF 2021"}
    ]


def test_world_cup_representatives_are_entered_by_organisers(
    freeze: Callable[[date], None],
    organiser_api: APIClient,
    reviewer_api: APIClient,
    player: Player,
) -> None:
    freeze(date(2021, 4, 2))
    body = {"year": 2021, "month": 3, "ranking": "1x", "player": player.external_id}
    assert reviewer_api.post("/api/titles/world-cup/representatives/", body).status_code == 403
    response = organiser_api.post("/api/titles/world-cup/representatives/", body, format="json")
    assert response.status_code == 200
    assert response.json()["ranking"] == "1x"
    assert list(Qualification.objects.values_list("source", "on", "status")) == [
        ("world_cup:2021-03:1x", date(2021, 3, 31), "pending")
    ]
    bad = organiser_api.post(
        "/api/titles/world-cup/representatives/", {**body, "ranking": "2x"}, format="json"
    )
    assert bad.status_code == 400


def test_an_as_of_that_is_not_a_date_is_a_400_naming_the_parameter(
    api: APIClient, player: Player
) -> None:
    for bad in ("yesterday", "2021-02-30", "2021-1-1x"):
        response = api.get(f"/api/players/{player.external_id}/titles/", {"as_of": bad})
        assert response.status_code == 400, bad
        body = response.json()
        assert body["code"] == "invalid"
        assert "as_of" in body["message"]
        assert "YYYY-MM-DD" in body["message"]
