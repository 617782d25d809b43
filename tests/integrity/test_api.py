"""The integrity API (SPEC §7): reviewers only — organisers, game servers and the public get
403 and never see an IP address or a device; cases ranked by score with their evidence;
take, dismiss, sanction, appeals; audit runs listed and triggered."""

import json
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from accounts.models import Player, User
from flows.finalisation import event_finalise
from integrity.models import AuditRun, Case, CaseEvent
from tests.conftest import token_client
from tests.integrity.farm import monthly_with_a_farm
from tests.tournaments.factories import AFTER
from tournaments.models import Event

pytestmark = pytest.mark.django_db

IDENTIFIERS = ("198.51.100.7", "198.51.100.8", "d-farm", "203.0.113")


@pytest.fixture
def farm_case(
    reviewer_api: APIClient, django_capture_on_commit_callbacks: Any
) -> tuple[Case, Event, dict[str, Player]]:
    monthly, _, players = monthly_with_a_farm()
    event_finalise(event=monthly, by=None, now=AFTER)
    with django_capture_on_commit_callbacks(execute=True):
        response = reviewer_api.post(
            "/api/integrity/runs/trigger/", {"event": "2021-02-M"}, format="json"
        )
    assert response.status_code == 202, response.content
    body = response.json()
    assert (body["key"], body["queued"]) == ("event:2021-02-M", True)
    job = reviewer_api.get(f"/api/jobs/{body['job']}/").json()
    assert (job["task"], job["subject"], job["state"], job["attempts"]) == (
        "integrity.audit_event",
        "event:2021-02-M",
        "succeeded",
        1,
    )
    assert job["outcome"]["key"] == "event:2021-02-M"
    return Case.objects.get(key="b|h"), monthly, players


def _no_identifiers(body: bytes) -> None:
    text = body.decode()
    assert not any(value in text for value in IDENTIFIERS), text


PATHS = [
    ("get", "/api/integrity/cases/"),
    ("get", "/api/integrity/cases/{case}/"),
    ("post", "/api/integrity/cases/{case}/take/"),
    ("post", "/api/integrity/cases/{case}/dismiss/"),
    ("post", "/api/integrity/cases/{case}/sanction/"),
    ("post", "/api/integrity/cases/{case}/appeals/"),
    ("post", "/api/integrity/appeals/1/decide/"),
    ("get", "/api/integrity/runs/"),
    ("post", "/api/integrity/runs/trigger/"),
]


@pytest.mark.parametrize(("method", "path"), PATHS)
def test_reviewers_only(
    farm_case: tuple[Case, Event, dict[str, Player]],
    organiser_api: APIClient,
    game_server: User,
    method: str,
    path: str,
) -> None:
    case, _, _ = farm_case
    url = path.format(case=case.pk)
    events = CaseEvent.objects.count()
    for client in (organiser_api, token_client(game_server), APIClient()):
        response = getattr(client, method)(url, {}, format="json")
        assert response.status_code in (401, 403)
        _no_identifiers(response.content)
    assert CaseEvent.objects.count() == events
    assert Case.objects.get(pk=case.pk).version == case.version


def test_cases_are_ranked_and_carry_their_evidence(
    farm_case: tuple[Case, Event, dict[str, Player]], reviewer_api: APIClient
) -> None:
    case, _, _ = farm_case
    listing = reviewer_api.get("/api/integrity/cases/?status=open").json()
    scores = [row["score"] for row in listing["results"]]
    assert scores == sorted(scores, reverse=True)
    assert listing["results"][0]["id"] == case.pk
    assert [p["player"]["id"] for p in listing["results"][0]["players"]] == ["b", "h"]

    detail = reviewer_api.get(f"/api/integrity/cases/{case.pk}/").json()

    assert detail["case"]["families"] == ["coseating", "pointflow", "sessions"]
    assert {flag["detector"] for flag in detail["flags"]} == {
        "coseating",
        "pointflow",
        "sessions",
        "same_table",
    }
    [pair] = detail["pairs"]
    assert (pair["players"], pair["together"], pair["apart"]) == (["b", "h"], 15, [0, 0])
    assert pair["expected"] < 15
    flows = {(f["feeder"], f["beneficiary"]): f for f in detail["flows"]}
    assert flows["h", "b"] == {"feeder": "h", "beneficiary": "b", "wins": 15, "points": 1500,
                               "heaviest": 15}  # fmt: skip
    assert flows["b", "h"]["wins"] == 0
    assert {"kind": "device", "identifier": "d-farm", "players": ["b", "h"]} in detail[
        "identifiers"
    ]
    assert len(detail["games"]) == 15
    seats = detail["games"][0]["seats"]
    assert [(s["player"], s["ip"], s["device"]) for s in seats[:2]] == [
        ("b", "198.51.100.7", "d-farm"),
        ("h", "198.51.100.8", "d-farm"),
    ]
    assert [e["action"] for e in detail["log"]] == ["opened"]


def test_take_dismiss_with_the_version_seen(
    farm_case: tuple[Case, Event, dict[str, Player]], reviewer_api: APIClient
) -> None:
    case, _, _ = farm_case
    url = f"/api/integrity/cases/{case.pk}"
    taken = reviewer_api.post(f"{url}/take/", {"expected_version": 0}, format="json")
    assert taken.status_code == 200
    assert (taken.json()["assigned_to"], taken.json()["version"]) == ("rev", 1)

    stale = reviewer_api.post(
        f"{url}/dismiss/", {"expected_version": 0, "reason": "ok"}, format="json"
    )
    assert stale.status_code == 409
    assert stale.json()["fields"] == {"reason": "stale", "status": "open", "version": 1}

    dismissed = reviewer_api.post(
        f"{url}/dismiss/", {"expected_version": 1, "reason": "family tablet"}, format="json"
    )
    assert dismissed.status_code == 200
    assert dismissed.json()["status"] == "dismissed"


def test_sanction_and_appeals_over_the_api(
    farm_case: tuple[Case, Event, dict[str, Player]], reviewer_api: APIClient, reviewer2: User
) -> None:
    case, monthly, _ = farm_case
    body = {
        "expected_version": 0,
        "reason": "farm",
        "decisions": [
            {"player": "b", "role": "beneficiary", "void_games": True, "events": ["2021-02-M"],
             "revoke_titles": True},
            {"player": "h", "role": "helper", "revoke_titles": True},
        ],
    }  # fmt: skip
    response = reviewer_api.post(f"/api/integrity/cases/{case.pk}/sanction/", body, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "sanctioned"
    monthly.refresh_from_db()
    assert monthly.champion is not None
    assert monthly.champion.external_id == "a2"

    filed = reviewer_api.post(
        f"/api/integrity/cases/{case.pk}/appeals/",
        {"player": "b", "statement": "not me"},
        format="json",
    )
    assert filed.status_code == 201
    appeal = filed.json()["id"]
    refused = reviewer_api.post(
        f"/api/integrity/appeals/{appeal}/decide/",
        {"upheld": True, "reason": "x"},
        format="json",
    )
    assert refused.status_code == 403
    assert refused.json()["code"] == "same_reviewer"

    decided = token_client(reviewer2).post(
        f"/api/integrity/appeals/{appeal}/decide/",
        {"upheld": True, "reason": "accepted"},
        format="json",
    )
    assert decided.status_code == 200
    assert decided.json()["status"] == "upheld"
    monthly.refresh_from_db()
    assert monthly.champion is not None
    assert monthly.champion.external_id == "b"
    detail = reviewer_api.get(f"/api/integrity/cases/{case.pk}/").json()
    assert detail["case"]["status"] == "reversed"
    assert [s["reversed_at"] is not None for s in detail["sanctions"]] == [True, True]


def test_unknown_event_in_a_sanction_is_refused(
    farm_case: tuple[Case, Event, dict[str, Player]], reviewer_api: APIClient
) -> None:
    case, _, _ = farm_case
    response = reviewer_api.post(
        f"/api/integrity/cases/{case.pk}/sanction/",
        {
            "expected_version": 0,
            "reason": "farm",
            "decisions": [
                {"player": "b", "role": "beneficiary", "void_games": True, "events": ["nope"]}
            ],
        },
        format="json",
    )
    assert response.status_code == 404
    assert Case.objects.get(pk=case.pk).status == "open"


def test_runs_are_listed_and_windows_triggered(
    farm_case: tuple[Case, Event, dict[str, Player]],
    reviewer_api: APIClient,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = reviewer_api.post(
            "/api/integrity/runs/trigger/",
            {"first": "2021-02-15", "last": "2021-02-21"},
            format="json",
        )
    assert response.status_code == 202
    assert response.json()["key"] == "window:2021-02-15:2021-02-21"
    runs = reviewer_api.get("/api/integrity/runs/").json()["results"]
    assert sorted(run["key"] for run in runs) == ["event:2021-02-M", "window:2021-02-15:2021-02-21"]
    assert {run["status"] for run in runs} == {"completed"}
    assert AuditRun.objects.get(key="event:2021-02-M").stats["flags"]["same_table"] == 15
    bad = reviewer_api.post(
        "/api/integrity/runs/trigger/", {"event": "2021-02-M", "first": "2021-02-15"},
        format="json",
    )  # fmt: skip
    assert bad.status_code == 400


def test_the_schema_lists_the_integrity_paths() -> None:
    schema = json.loads(Client().get("/api/schema/?format=json").content)
    assert {
        "/api/integrity/cases/",
        "/api/integrity/cases/{id}/",
        "/api/integrity/cases/{id}/sanction/",
        "/api/integrity/appeals/{id}/decide/",
        "/api/integrity/runs/trigger/",
    } <= set(schema["paths"])
