"""Who may call what: the permission matrix of every endpoint under ``/api/``.

The routes come from the URL configuration itself (``get_resolver()`` walked recursively),
each with the methods its view answers (OPTIONS and HEAD left out: HEAD is GET, OPTIONS is
metadata). ``EXPECTED`` classifies every (route name, method) for the five roles; a route
the URLconf has and the table lacks fails the test, so a new endpoint must be classified
here. "denied" is 401 or 403; "allowed" is anything else (an empty body may well be 400,
404 or 409). Each request runs in a savepoint rolled back afterwards.

Personal data (session IP, device, client) is for reviewers only: no GET answer to any other
role holds the seeded strings, while a reviewer does see them in the case evidence.
"""

import re
from collections.abc import Callable, Iterator
from typing import Any

from django.db import transaction
from django.urls import URLPattern, URLResolver, get_resolver

from integrity.models import Case
from tests.reliability.conftest import ROLES, Seeded
from tests.tournaments.conftest import make_record
from tests.web.tour import SECRET_CLIENT, SECRET_DEVICE, SECRET_IP
from titles.models import Qualification
from tournaments.models import Event, Game

ALLOWED, DENIED = "allowed", "denied"


def only(*roles: str) -> dict[str, str]:
    """Allowed for ``roles`` and the superuser (who holds every role), denied to the rest."""
    return {role: ALLOWED if role in roles or role == "admin" else DENIED for role in ROLES}


PUBLIC = only(*ROLES)
SIGNED_IN = only("player", "organiser", "reviewer")
ORGANISERS = only("organiser")  # and game-server tokens for games-ingest (not a role here)
REVIEWERS = only("reviewer")
STAFF = only("organiser", "reviewer")

EXPECTED: dict[tuple[str, str], dict[str, str]] = {
    # schema and docs
    ("schema", "GET"): PUBLIC,
    ("swagger-ui", "GET"): PUBLIC,
    ("redoc", "GET"): PUBLIC,
    # accounts
    ("api-me", "GET"): SIGNED_IN,
    ("api-job", "GET"): STAFF,
    # tournaments: public reads, organiser writes
    ("games-ingest", "POST"): ORGANISERS,
    ("seasons", "GET"): PUBLIC,
    ("seasons", "POST"): ORGANISERS,
    ("season", "GET"): PUBLIC,
    ("season", "PATCH"): ORGANISERS,
    ("season-stations", "GET"): PUBLIC,
    ("events", "GET"): PUBLIC,
    ("events", "POST"): ORGANISERS,
    ("event", "GET"): PUBLIC,
    ("event", "PATCH"): ORGANISERS,
    ("event-leaderboard", "GET"): PUBLIC,
    ("event-advancement", "GET"): PUBLIC,
    ("event-finalise", "POST"): ORGANISERS,
    ("event-entries", "GET"): PUBLIC,
    ("event-entries", "POST"): ORGANISERS,
    ("event-field-change", "POST"): ORGANISERS,
    ("event-rounds", "GET"): PUBLIC,
    ("event-rounds", "POST"): ORGANISERS,
    ("event-table-result", "POST"): ORGANISERS,
    ("event-round-replay", "GET"): PUBLIC,
    ("event-table-games", "GET"): PUBLIC,
    ("event-table-games", "POST"): ORGANISERS,
    ("event-table-game-correction", "POST"): ORGANISERS,
    ("event-team-schedule", "GET"): PUBLIC,
    ("event-team-schedule", "POST"): ORGANISERS,
    ("event-team-standings", "GET"): PUBLIC,
    ("corrections", "GET"): STAFF,
    ("game-void", "POST"): ORGANISERS,
    ("game-restore", "POST"): ORGANISERS,
    ("game-fix", "POST"): ORGANISERS,
    ("player-void", "POST"): ORGANISERS,
    ("player-restore", "POST"): ORGANISERS,
    # titles: public reads, reviewer decisions, organiser World Cup entries
    ("api-player-titles", "GET"): PUBLIC,
    ("api-titles-registry", "GET"): PUBLIC,
    ("api-titles-verify", "GET"): PUBLIC,
    ("api-titles-term-credential", "GET"): PUBLIC,
    ("api-titles-status-list", "GET"): PUBLIC,
    ("api-titles-queue", "GET"): REVIEWERS,
    ("api-titles-qualification-enter", "POST"): REVIEWERS,
    ("api-titles-bulk-approve", "POST"): REVIEWERS,
    ("api-titles-approve", "POST"): REVIEWERS,
    ("api-titles-reject", "POST"): REVIEWERS,
    ("api-titles-international-master-enter", "POST"): REVIEWERS,
    ("api-titles-world-cup-representative-enter", "POST"): ORGANISERS,
    # integrity: reviewers only (personal data)
    ("api-integrity-cases", "GET"): REVIEWERS,
    ("api-integrity-case", "GET"): REVIEWERS,
    ("api-integrity-case-take", "POST"): REVIEWERS,
    ("api-integrity-case-dismiss", "POST"): REVIEWERS,
    ("api-integrity-case-sanction", "POST"): REVIEWERS,
    ("api-integrity-appeal-file", "POST"): REVIEWERS,
    ("api-integrity-appeal-decide", "POST"): REVIEWERS,
    ("api-integrity-runs", "GET"): REVIEWERS,
    ("api-integrity-run-trigger", "POST"): REVIEWERS,
}

#: Path parameter -> the seeded value it takes (``Seeded.params`` key), by route name where
#: the same parameter name means different things.
PARAMETER = {"year": "year", "code": "event", "player_id": "player", "number": "round"}
PARAMETER_BY_ROUTE = {
    "event-rounds": {"code": "seated"},
    "event-table-result": {"code": "seated", "table": "table"},
    "event-round-replay": {"code": "seated"},
    "event-table-games": {"code": "seated", "table": "table"},
    "event-table-game-correction": {"code": "seated", "table": "table", "game": "round"},
    "event-team-schedule": {"code": "seated"},
    "event-team-standings": {"code": "seated"},
    "api-titles-verify": {"code": "term"},
    "api-titles-term-credential": {"code": "term"},
    "api-titles-status-list": {"list": "status_list"},
    "api-titles-approve": {"pk": "qualification"},
    "api-titles-reject": {"pk": "qualification"},
    "api-integrity-case": {"pk": "case"},
    "api-integrity-case-take": {"pk": "case"},
    "api-integrity-case-dismiss": {"pk": "case"},
    "api-integrity-case-sanction": {"pk": "case"},
    "api-integrity-appeal-file": {"pk": "case"},
    "api-integrity-appeal-decide": {"pk": "appeal"},
    "api-job": {"pk": "job"},
}
SKIPPED_METHODS = {"options", "head"}
_PARAM = re.compile(r"<(?:\w+:)?(\w+)>")


def _walk(patterns: list[Any], prefix: str) -> Iterator[tuple[str, URLPattern]]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _walk(entry.url_patterns, prefix + str(entry.pattern))
        else:
            yield prefix + str(entry.pattern), entry


def api_routes() -> list[tuple[str, str, list[str]]]:
    """(route name or pattern, pattern, methods) of every endpoint under ``/api/``."""
    routes = []
    for pattern, entry in _walk(get_resolver().url_patterns, ""):
        if not pattern.startswith("api/"):
            continue
        view = getattr(entry.callback, "view_class", None) or getattr(entry.callback, "cls", None)
        names = getattr(view, "http_method_names", ["get"])
        methods = [m.upper() for m in names if m not in SKIPPED_METHODS and hasattr(view, m)]
        routes.append((entry.name or pattern, pattern, methods))
    return routes


def concrete_path(name: str, pattern: str, params: dict[str, Any]) -> str:
    chosen = {**PARAMETER, **PARAMETER_BY_ROUTE.get(name, {})}

    def fill(match: re.Match[str]) -> str:
        parameter = match.group(1)
        if parameter not in chosen:
            raise AssertionError(f"{name}: no seeded value for path parameter {parameter!r}")
        return str(params[chosen[parameter]])

    return "/" + _PARAM.sub(fill, pattern)


def call(seeded: Seeded, role: str, method: str, path: str) -> Any:
    client = seeded.client(role)
    with transaction.atomic():
        if method == "GET":
            response = client.get(path)
        else:
            response = getattr(client, method.lower())(path, {}, format="json")
        transaction.set_rollback(True)
    return response


def test_every_api_endpoint_answers_each_role_as_the_matrix_says(
    seeded: Seeded, ci_log: Callable[[str], None]
) -> None:
    routes = api_routes()
    found = {(name, method) for name, _, methods in routes for method in methods}
    assert sorted(found - set(EXPECTED)) == [], "classify the new endpoints in EXPECTED"
    assert sorted(set(EXPECTED) - found) == [], "EXPECTED lists endpoints that are gone"

    wrong = []
    checks = 0
    for name, pattern, methods in routes:
        path = concrete_path(name, pattern, seeded.params)
        for method in methods:
            for role in ROLES:
                status = call(seeded, role, method, path).status_code
                got = DENIED if status in (401, 403) else ALLOWED
                checks += 1
                if status >= 500 or got != EXPECTED[name, method][role]:
                    wrong.append(f"{method} {path} as {role}: {status}")

    assert wrong == []
    ci_log(
        f"permission matrix: {len({n for n, _, _ in routes})} endpoints, "
        f"{len(found)} endpoint-methods x {len(ROLES)} roles = {checks} checks"
    )
    assert checks == len(EXPECTED) * len(ROLES)


def test_personal_data_reaches_reviewers_only(
    seeded: Seeded, ci_log: Callable[[str], None]
) -> None:
    secrets = (SECRET_IP, SECRET_DEVICE, SECRET_CLIENT)
    leaks = []
    reviewer_saw: set[str] = set()
    answers = 0
    for name, pattern, methods in api_routes():
        if "GET" not in methods:
            continue
        path = concrete_path(name, pattern, seeded.params)
        for role in ROLES:
            body = call(seeded, role, "GET", path).content.decode()
            answers += 1
            shown = {secret for secret in secrets if secret in body}
            if role in ("reviewer", "admin"):
                reviewer_saw |= shown
            elif shown:
                leaks.append(f"GET {path} as {role} shows {sorted(shown)}")

    assert leaks == []
    # The seeded strings are reachable at all: a reviewer reads them in the case evidence.
    assert reviewer_saw >= {SECRET_IP, SECRET_DEVICE}
    ci_log(f"personal data: {answers} GET answers checked for {len(secrets)} session strings")


def test_organisers_cannot_decide_titles_or_integrity_cases(seeded: Seeded) -> None:
    pending = Qualification.objects.get(pk=seeded.params["qualification"])
    client = seeded.client("organiser")
    decision = {"expected_version": pending.version, "reason": "looks fine"}

    approve = client.post(
        f"/api/titles/qualifications/{pending.pk}/approve/", decision, format="json"
    )
    dismiss = client.post(
        f"/api/integrity/cases/{seeded.params['case']}/dismiss/",
        {"expected_version": 0, "reason": "nothing there"},
        format="json",
    )

    assert (approve.status_code, dismiss.status_code) == (403, 403)
    pending.refresh_from_db()
    assert (pending.status, pending.version) == ("pending", 1)
    case = Case.objects.get(pk=seeded.params["case"])
    assert (case.status, case.version, case.decided_by) == ("open", 0, None)


def test_reviewers_cannot_ingest_games_or_finalise(seeded: Seeded) -> None:
    games = Game.objects.count()
    client = seeded.client("reviewer")
    record = make_record(
        "g-reviewer-1",
        event=seeded.params["event"],
        players=["p0000001", "p0000002", "p0000003", "p0000005"],
        started_at="2021-02-08T14:00:00+08:00",
        ended_at="2021-02-08T14:02:00+08:00",
    )

    ingest = client.post("/api/games/", [record], format="json")
    finalise = client.post(
        f"/api/events/{seeded.params['event']}/finalise/", {"force": True}, format="json"
    )

    assert (ingest.status_code, finalise.status_code) == (403, 403)
    assert Game.objects.count() == games
    assert Event.objects.get(code=seeded.params["event"]).status == "scheduled"
