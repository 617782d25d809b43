"""Tests for ``POST /api/games/`` (tournaments.api.games): SPEC §9 batch ingest."""

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.models import User
from tests.conftest import token_client
from tests.tournaments.conftest import RecordBuilder
from tournaments.models import Game

URL = "/api/games/"
Counts = Callable[[], dict[str, int]]


@pytest.fixture
def server_api(game_server: User) -> APIClient:
    return token_client(game_server)


@pytest.mark.django_db
@pytest.mark.parametrize("client", ["organiser_api", "server_api"])
def test_organisers_and_game_servers_ingest_a_batch(
    client: str, request: pytest.FixtureRequest, record: RecordBuilder
) -> None:
    api: APIClient = request.getfixturevalue(client)

    response = api.post(
        URL, [record("g-1"), record("g-2", players=("a", "b", "c", "d"))], format="json"
    )

    assert response.status_code == 200
    assert response.json() == {
        "ingested": 2,
        "duplicates": [],
        "conflicts": [],
        "rejected": [],
        "errors": False,
    }
    assert sorted(Game.objects.values_list("record_id", flat=True)) == ["g-1", "g-2"]


@pytest.mark.django_db
def test_a_mixed_batch_stores_the_good_records_and_reports_the_others(
    organiser_api: APIClient, record: RecordBuilder
) -> None:
    organiser_api.post(URL, [record("g-1")], format="json")
    batch = [
        record("g-1"),  # duplicate
        record("g-1", hands=([], ["R6"], ["G7"], ["WD4"])),  # conflict
        record("g-2", hands=([], ["R5"], ["G7", "R10"], ["WD4"])),  # rejected
        record("g-3", players=("a", "b", "c", "d")),  # ingested
        {"id": "g-4"},  # rejected
    ]

    response = organiser_api.post(URL, batch, format="json")

    assert response.status_code == 200
    assert response.json() == {
        "ingested": 1,
        "duplicates": ["g-1"],
        "conflicts": [
            {"index": 1, "id": "g-1", "reason": "id g-1 is already stored with a different record"}
        ],
        "rejected": [
            {"index": 2, "id": "g-2", "field": "seats[2].hand[1]", "reason": "unknown card 'R10'"},
            {"index": 4, "id": "g-4", "field": "event", "reason": "required"},
        ],
        "errors": True,
    }
    assert sorted(Game.objects.values_list("record_id", flat=True)) == ["g-1", "g-3"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"id": "g-1"}, "The body must be a JSON list of game records."),
        ([], "The batch is empty."),
        ([{"id": f"g-{i}"} for i in range(1001)], "A batch holds at most 1000 records, got 1001."),
    ],
    ids=["object", "empty", "too many"],
)
def test_a_malformed_batch_is_refused_whole(
    organiser_api: APIClient, record: RecordBuilder, db_counts: Counts, body: Any, message: str
) -> None:
    before = db_counts()

    response = organiser_api.post(URL, body, format="json")

    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert response.json()["message"] == message
    assert db_counts() == before


@pytest.mark.django_db
def test_a_batch_of_exactly_1000_is_accepted(
    organiser_api: APIClient, record: RecordBuilder
) -> None:
    batch = [record("g-1")] * 1000

    response = organiser_api.post(URL, batch, format="json")

    assert response.status_code == 200
    assert (response.json()["ingested"], len(response.json()["duplicates"])) == (1, 999)


@pytest.mark.django_db
def test_body_that_is_not_json_is_refused(
    organiser_api: APIClient, event: Any, db_counts: Counts
) -> None:
    response = organiser_api.post(URL, "[{", content_type="application/json")

    assert response.status_code == 400
    assert db_counts() == dict.fromkeys(db_counts(), 0)


@pytest.mark.django_db
def test_reviewers_may_not_ingest(
    reviewer_api: APIClient, record: RecordBuilder, db_counts: Counts
) -> None:
    response = reviewer_api.post(URL, [record("g-1")], format="json")

    assert response.status_code == 403
    assert response.json() == {
        "code": "permission_denied",
        "message": "Organisers and game-server tokens only.",
    }
    assert db_counts() == dict.fromkeys(db_counts(), 0)


@pytest.mark.django_db
def test_anonymous_clients_may_not_ingest(
    api: APIClient, record: RecordBuilder, db_counts: Counts
) -> None:
    response = api.post(URL, [record("g-1")], format="json")

    assert response.status_code == 401
    assert db_counts() == dict.fromkeys(db_counts(), 0)


@pytest.mark.django_db
def test_the_schema_documents_the_operation(api: APIClient) -> None:
    schema = api.get("/api/schema/?format=json").json()

    operation = schema["paths"]["/api/games/"]["post"]
    assert operation["operationId"] == "games_ingest"
    assert set(operation["responses"]) == {
        "200",
        *("400", "401", "403", "404", "409", "413", "415", "429", "500", "503"),
    }
    error = operation["responses"]["400"]["content"]["application/json"]["schema"]
    assert error == {"$ref": "#/components/schemas/ApiError"}
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert body == {
        "type": "array",
        "items": {"$ref": "#/components/schemas/GameRecordRequest"},
        "minItems": 1,
        "maxItems": 1000,
    }
    assert "the good records of a mixed batch are stored" in operation["description"]


@pytest.mark.django_db
def test_an_ingest_that_stores_games_updates_the_ratings(
    server_api: APIClient, record: RecordBuilder, django_capture_on_commit_callbacks: Any
) -> None:
    from ratings.models import Rating, RatingHistory

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert server_api.post(URL, [record("g-1")], format="json").status_code == 200
    assert len(callbacks) == 1
    assert RatingHistory.objects.filter(game__record_id="g-1").count() == 4
    assert Rating.objects.filter(games=1).count() == 4

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert server_api.post(URL, [record("g-1")], format="json").status_code == 200
    assert callbacks == []  # a duplicate enqueues nothing
    assert RatingHistory.objects.count() == 4
