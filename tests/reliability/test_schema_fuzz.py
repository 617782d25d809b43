"""The OpenAPI schema against the running app: schemathesis generates requests for every
operation of ``/api/schema/`` and sends them, in-process through Django's WSGI handler, as
an anonymous client and as an organiser (token). Two checks on every answer: no server
error (``not_a_server_error``) and a body that matches the schema for its status
(``response_schema_conformance``).

Bounded and reproducible: ``SCHEMA_FUZZ_EXAMPLES`` examples per operation and client
(default 20), ``derandomize=True`` (the same inputs every run), no deadline. Every request
runs in a savepoint rolled back afterwards, so the seeded tour is the same for each.
"""

import json
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from tests.reliability.conftest import Seeded

EXAMPLES = int(os.environ.get("SCHEMA_FUZZ_EXAMPLES", "20"))
CHECKS = [not_a_server_error, response_schema_conformance]


@pytest.fixture
def wsgi_app() -> Iterator[WSGIHandler]:
    """Django's WSGI handler, keeping the test's connection (and its transaction) open the
    way Django's own test client does."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield WSGIHandler()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def fuzz(schema: Any, app: WSGIHandler, headers: dict[str, str]) -> tuple[int, int, list[str]]:
    """Run every operation; returns (operations, cases sent, failures)."""
    sent = 0
    failures = []
    operations = 0

    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def run(case: Any) -> None:
            nonlocal sent
            with transaction.atomic():
                response = case.call(app=app, headers=headers)
                sent += 1
                case.validate_response(response, checks=CHECKS, headers=headers)
                transaction.set_rollback(True)

        try:
            run()
        except (Exception, BaseExceptionGroup) as exc:  # noqa: BLE001 - reported below
            failures.append(f"{operation.label}: {str(exc)[:3000]}")
    return operations, sent, failures


@pytest.mark.parametrize("role", ["anonymous", "organiser"])
def test_generated_requests_get_no_server_error_and_answers_match_the_schema(
    seeded: Seeded, wsgi_app: WSGIHandler, role: str, ci_log: Callable[[str], None]
) -> None:
    # drf-spectacular's generator is unannotated.
    document = SchemaGenerator().get_schema(request=None, public=True)  # type: ignore[no-untyped-call]
    schema = schemathesis.openapi.from_dict(document)
    headers = (
        {} if seeded.tokens[role] is None else {"Authorization": f"Token {seeded.tokens[role]}"}
    )

    started = time.perf_counter()
    operations, sent, failures = fuzz(schema, wsgi_app, headers)
    seconds = time.perf_counter() - started

    ci_log(
        f"schemathesis ({role}): {operations} operations, {sent} cases run "
        f"(up to {EXAMPLES} per operation), {len(failures)} failing, {seconds:.1f} s"
    )
    assert failures == [], "\n\n".join(failures)
    assert operations >= 40


# --- what the fuzzer found, and probing around it (fixed; kept as regressions) --------------


@pytest.mark.parametrize(
    "path",
    [
        "/api/events/a%00b/",
        "/api/players/%00/titles/",
        "/api/events/2021-W05-F/leaderboard/?player=%00",
        "/players/%00/",
        "/masters/?province=%00",
        "/exports/events/%00/leaderboard.csv",
    ],
)
def test_a_nul_in_the_path_or_query_is_a_400_not_a_server_error(seeded: Seeded, path: str) -> None:
    response = seeded.client("reviewer").get(path)

    assert response.status_code == 400
    assert response.json() == {
        "code": "invalid",
        "message": "The path or query holds a NUL character.",
    }


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({"cities": ["南京\x00"], "reason": "x"}, "cities[0] holds a NUL character"),
        ({"cities": ["南京\udc00"], "reason": "x"}, "cities[0] is not valid Unicode"),
        ({"card_table": {"R0\x00": 1}, "reason": "x"}, "card_table key 'R0\\x00' holds a NUL"),
    ],
)
def test_unstorable_text_in_a_json_body_is_a_400_naming_the_place(
    seeded: Seeded, body: dict[str, Any], where: str
) -> None:
    from tournaments.models import Season

    before = Season.objects.values("cities", "card_table").get(year=2021)

    response = seeded.client("organiser").patch(
        "/api/seasons/2021/", json.dumps(body), content_type="application/json"
    )

    assert response.status_code == 400
    assert where in response.json()["message"]
    assert Season.objects.values("cities", "card_table").get(year=2021) == before


def test_a_lone_surrogate_in_a_record_id_is_that_records_rejection(seeded: Seeded) -> None:
    from tests.tournaments.conftest import make_record
    from tournaments.models import Game

    games = Game.objects.count()
    body = json.dumps([make_record("g-\udc00", event="2021-W06-Q")])

    response = seeded.client("organiser").post("/api/games/", body, content_type="application/json")

    assert response.status_code == 200
    assert response.json()["rejected"] == [
        {
            "index": 0,
            "id": None,
            "field": "id",
            "reason": "holds text that is not valid Unicode (a lone surrogate U+DC00)",
        }
    ]
    assert Game.objects.count() == games


def test_a_nul_in_a_records_event_code_is_that_records_rejection(seeded: Seeded) -> None:
    from tests.tournaments.conftest import make_record
    from tournaments.models import Game

    games = Game.objects.count()

    response = seeded.client("organiser").post(
        "/api/games/", [make_record("g-nul", event="2021-W06-Q\x00")], format="json"
    )

    assert response.status_code == 200
    assert response.json()["rejected"] == [
        {"index": 0, "id": "g-nul", "field": "event", "reason": "holds a NUL character"}
    ]
    assert Game.objects.count() == games


@pytest.mark.parametrize("path", ["/api/seasons/", "/api/games/"])
def test_json_nested_too_deeply_to_decode_is_a_400(seeded: Seeded, path: str) -> None:
    body = "[" * 100_000 + "]" * 100_000

    response = seeded.client("organiser").post(path, body, content_type="application/json")

    assert response.status_code == 400
    assert response.json() == {
        "code": "parse_error",
        "message": "JSON parse error - nested too deeply.",
    }


def test_a_move_log_nested_too_deeply_is_that_records_rejection(seeded: Seeded) -> None:
    from tests.tournaments.conftest import make_record
    from tournaments.models import Game

    games = Game.objects.count()
    record = make_record(
        "g-deep",
        event="2021-W06-Q",
        started_at="2021-02-08T14:00:00+08:00",
        ended_at="2021-02-08T14:02:00+08:00",
        log=json.loads("[" * 65 + "]" * 65),
    )

    response = seeded.client("organiser").post("/api/games/", [record], format="json")

    assert response.status_code == 200
    assert response.json()["rejected"] == [
        {"index": 0, "id": "g-deep", "field": "log", "reason": "nested deeper than 64 levels"}
    ]
    assert Game.objects.count() == games
