"""Security controls: sign-in lockout (django-axes), write throttling, CSRF on every form,
bounded and strict JSON bodies, Argon2 passwords, security headers with a Content Security
Policy (and the API docs still working under it), no secret in the repository.

Token expiry and revocation are tested in tests/test_foundation.py; ``check --deploy`` runs
in .ci/run with the production settings.
"""

import json
import logging
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.hashers import check_password, make_password
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from accounts.models import User
from tests.accounts.signin import client_sign_in
from tests.reliability.conftest import Seeded
from tests.tournaments.conftest import make_record
from titles.models import Qualification
from tournaments.models import Entry, Event, Game, Season, SeatedRound

ROOT = Path(settings.BASE_DIR)
OPEN_EVENT = "2021-W06-Q"  # the tour's weekly qualifier open at NOW (open entry)


class AuthLog:
    """The ``unotour.auth`` lines of the shared ``event_log`` fixture, as (event, fields)."""

    def __init__(self, lines: list[tuple[str, str, dict[str, Any]]]) -> None:
        self.lines = lines

    def events(self) -> list[tuple[str, dict[str, Any]]]:
        return [(event, fields) for name, event, fields in self.lines if name == "unotour.auth"]


@pytest.fixture
def auth_log(event_log: list[tuple[str, str, dict[str, Any]]]) -> AuthLog:
    return AuthLog(event_log)


# --- sign-in lockout ------------------------------------------------------------------------


def _sign_in(client: Client, password: str, ip: str) -> Any:
    return client.post(
        "/signin/?next=/admin/",
        {"username": "staff", "password": password},
        REMOTE_ADDR=ip,
    )


@pytest.mark.django_db
def test_five_failed_sign_ins_lock_the_username_at_that_address(auth_log: AuthLog) -> None:
    User.objects.create_user(username="staff", password="right-horse-battery", is_staff=True)
    client = Client()

    failures = [_sign_in(client, f"wrong-{i}", "198.51.100.9").status_code for i in range(5)]
    locked = _sign_in(client, "right-horse-battery", "198.51.100.9")
    elsewhere = _sign_in(Client(), "right-horse-battery", "198.51.100.10")

    assert failures == [200, 200, 200, 200, 429]  # the form with its error; the 5th locks
    assert locked.status_code == 429  # even with the right password
    assert "_auth_user_id" not in client.session
    assert elsewhere.status_code == 302  # username + address: another address signs in
    events = auth_log.events()
    assert [name for name, _ in events].count("login_failed") == 6  # the 6th: locked out
    assert ("locked_out", {"username": "staff", "ip": "198.51.100.9"}) in events
    assert events[0][1] == {"username": "staff", "ip": "198.51.100.9", "path": "/signin/"}
    assert all("wrong" not in json.dumps(fields) for _, fields in events)


@pytest.mark.django_db
def test_client_login_in_tests_still_works_with_the_lockout_backend() -> None:
    User.objects.create_user(username="staff", password="right-horse-battery")

    assert Client().login(username="staff", password="right-horse-battery") is True
    assert Client().login(username="staff", password="wrong") is False


@pytest.mark.django_db
def test_a_refused_token_is_logged(auth_log: AuthLog) -> None:
    client = Client(HTTP_AUTHORIZATION="Token not-a-token", REMOTE_ADDR="203.0.113.50")

    assert client.get("/api/me/").status_code == 401
    assert auth_log.events() == [
        (
            "token_refused",
            {"reason": "Unknown token.", "ip": "203.0.113.50", "path": "/api/me/", "method": "GET"},
        )
    ]


def test_auth_events_are_one_json_object_a_line() -> None:

    from core.logs import JsonFormatter, log_event

    lines: list[str] = []
    handler = logging.Handler()
    handler.setFormatter(JsonFormatter())
    handler.emit = lambda record: lines.append(handler.format(record))  # type: ignore[method-assign]
    logger = logging.getLogger("unotour.auth")
    logger.addHandler(handler)
    try:
        log_event(logger, logging.WARNING, "login_failed", username="张三", ip="192.0.2.1")
    finally:
        logger.removeHandler(handler)

    body = json.loads(lines[0])
    assert {key: body[key] for key in ("level", "logger", "event", "username", "ip")} == {
        "level": "WARNING",
        "logger": "unotour.auth",
        "event": "login_failed",
        "username": "张三",
        "ip": "192.0.2.1",
    }


# --- throttling -----------------------------------------------------------------------------


@pytest.fixture
def clean_cache() -> Iterator[None]:
    cache.clear()
    yield
    cache.clear()


@pytest.mark.usefixtures("mid_window")
def test_writes_over_the_rate_get_429_and_reads_are_not_throttled(
    seeded: Seeded, settings: Any, clean_cache: None
) -> None:
    settings.API_WRITE_RATE = "3/min"
    organiser = seeded.client("organiser")
    path = f"/api/events/{seeded.params['event']}/entries/"

    writes = [organiser.post(path, {}, format="json").status_code for _ in range(4)]
    reads = [organiser.get(path).status_code for _ in range(5)]
    other = seeded.client("reviewer").post("/api/titles/qualifications/", {}, format="json")
    throttled = organiser.post(path, {}, format="json")

    assert writes == [400, 400, 400, 429]
    assert reads == [200] * 5
    assert other.status_code == 400  # each user has their own budget
    assert throttled.status_code == 429
    assert throttled["Retry-After"] == "30"  # the rest of the minute (mid_window)


def test_the_write_rate_comes_from_settings() -> None:
    from config.settings import base

    assert base.API_WRITE_RATE == "600/min"
    assert base.REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"] == ["core.throttling.WriteRateThrottle"]


# --- CSRF -----------------------------------------------------------------------------------

_FORM = re.compile(r"<form\b[^>]*>.*?</form>", re.S | re.I)
_ACTION = re.compile(r"""action="\{%\s*url\s+'([\w:-]+)'([^%]*)%\}\"""")


def post_forms() -> list[tuple[str, str, str]]:
    """(template, route name, url arguments) of every POST form in templates/."""
    found = []
    for template in sorted((ROOT / "templates").rglob("*.html")):
        for form in _FORM.findall(template.read_text()):
            opening = form.split(">", 1)[0]
            if 'method="post"' not in opening.lower():
                continue
            action = _ACTION.search(opening)
            assert action, f"{template}: a POST form without an {{% url %}} action"
            assert "{% csrf_token %}" in form, f"{template}: a POST form without csrf_token"
            found.append((str(template.relative_to(ROOT)), action[1], action[2].strip()))
    return found


def test_every_post_form_refuses_a_request_without_the_csrf_token(seeded: Seeded) -> None:
    forms = post_forms()
    pending = Qualification.objects.get(pk=seeded.params["qualification"])
    event = seeded.params["event"]
    game = Game.objects.filter(event__code=event).first()
    assert game is not None
    arguments: dict[str, list[Any]] = {
        "web:review-decide": [pending.pk, "approve"],
        "web:password-reset-confirm": ["MQ", "set-password"],
        "web:manage-upload": [event],
        "web:manage-finalise": [event],
        "web:manage-void": [event],
        "web:manage-change": [event],
        "web:manage-seat-round": [seeded.params["seated"]],
        "web:manage-invite": [seeded.params["seated"]],
        "web:manage-table-result": [seeded.params["seated"], 1, 1],
        "web:manage-table-game": [seeded.params["seated"], 1, 1],
        "web:manage-team": [seeded.params["seated"]],
        "web:review-case-take": [1],
        "web:review-case-sanction": [1],
        "web:review-case-dismiss": [1],
        "web:review-case-appeal": [1],
        "web:review-appeal-decide": [1, 1],
    }
    password = {"username": "matrix-admin", "password": "pw-for-tests-only"}
    new_password = {"new_password1": "a-new-pw-for-tests", "new_password2": "a-new-pw-for-tests"}
    data = {
        "web:review-decide": {"expected_version": pending.version, "reason": "ok"},
        "web:review-bulk": {
            "items": [f"{pending.pk}:{pending.version}"],
            "decision": "approve",
            "reason": "ok",
        },
        "admin:login": password,
        "web:signin": password,
        "web:signin-verify": {"token": "123456"},
        "web:signin-enrol": {"token": "123456"},
        "web:signout": {},
        "web:password-reset": {"email": "matrix-admin@example.org"},
        "web:password-reset-confirm": new_password,
        "web:manage-upload": {},
        "web:manage-finalise": {"force": "on"},
        "web:manage-void": {"game": game.record_id, "reason": "x", "confirm": "true"},
        "web:manage-change": {"action": "cancel", "reason": "x"},
        "web:manage-season-new": {"year": 2030, "start": "2030-01-07", "weeks": 52},
        "web:manage-seat-round": {"seed": "1"},
        "web:manage-invite": {"players": "p0000009", "reason": "x"},
        "web:manage-table-result": {},
        "web:manage-table-game": {"game": "1"},
        "web:manage-team": {"seed": "1", "games_per_round": "4"},
        "web:review-case-take": {"version": "0"},
        "web:review-case-sanction": {"version": "0", "reason": "x"},
        "web:review-case-dismiss": {"version": "0", "reason": "x"},
        "web:review-case-appeal": {"version": "0", "player": "p0000001", "statement": "x"},
        "web:review-appeal-decide": {"version": "0", "decision": "uphold", "reason": "x"},
    }
    routes = sorted({name for _, name, _ in forms} | {"admin:login"})
    assert routes == sorted(data)

    reviewer, organiser = seeded.users["reviewer"], seeded.users["organiser"]
    assert reviewer is not None
    assert organiser is not None
    refused = {}
    for name in routes:
        client = Client(enforce_csrf_checks=True)
        client_sign_in(client, organiser if name.startswith("web:manage") else reviewer)
        path = reverse(name, args=arguments.get(name, []))
        refused[name] = client.post(path, data[name]).status_code

    assert refused == dict.fromkeys(routes, 403)
    pending.refresh_from_db()
    assert (pending.status, pending.version) == ("pending", 1)
    game.refresh_from_db()
    assert not game.voided
    assert Event.objects.get(code=event).status == "scheduled"
    assert not Season.objects.filter(year=2030).exists()
    assert SeatedRound.objects.filter(event__code=seeded.params["seated"]).count() == 1
    assert not Entry.objects.filter(event__code=seeded.params["seated"], reason="x").exists()


def test_with_the_token_the_review_form_goes_through(seeded: Seeded) -> None:
    reviewer = seeded.users["reviewer"]
    assert reviewer is not None
    client = Client(enforce_csrf_checks=True)
    client_sign_in(client, reviewer)
    client.get("/review/")
    token = client.cookies["csrftoken"].value
    pending = Qualification.objects.get(pk=seeded.params["qualification"])

    response = client.post(
        f"/review/qualifications/{pending.pk}/reject/",
        {"expected_version": 1, "reason": "not proven", "csrfmiddlewaretoken": token},
    )

    assert response.status_code == 302
    pending.refresh_from_db()
    assert pending.status == "rejected"


# --- request bodies -------------------------------------------------------------------------


def test_a_body_over_the_limit_gets_413_and_writes_nothing(seeded: Seeded) -> None:
    games = Game.objects.count()
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    record = make_record("g-big", event=OPEN_EVENT)
    record["log"] = {"padding": "x" * (limit + 1)}
    body = json.dumps([record])

    response = seeded.client("organiser").post("/api/games/", body, content_type="application/json")

    assert limit == 8 * 1024 * 1024
    assert response.status_code == 413
    assert response.json() == {
        "code": "too_large",
        "message": f"The request body is over the limit of {limit:,} bytes.",
    }
    assert Game.objects.count() == games


def test_a_full_batch_of_records_fits_well_under_the_limit() -> None:
    batch = [
        make_record(f"g-2021w05-{i:07d}", log={"moves": ["R5", "draw", "WD4"] * 20})
        for i in range(1000)
    ]
    size = len(json.dumps(batch, ensure_ascii=False).encode())
    assert size * 4 < settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def test_json_is_strict_and_unknown_fields_are_refused(seeded: Seeded) -> None:
    games = Game.objects.count()
    organiser = seeded.client("organiser")
    extra = make_record(
        "g-extra",
        event=OPEN_EVENT,
        started_at="2021-02-08T14:00:00+08:00",
        ended_at="2021-02-08T14:02:00+08:00",
    )
    extra["seats"][0]["session"]["geo"] = "somewhere"

    not_a_number = organiser.post("/api/games/", '[{"id": NaN}]', content_type="application/json")
    unknown = organiser.post("/api/games/", [extra], format="json")

    assert not_a_number.status_code == 400
    assert "JSON parse error" in not_a_number.json()["message"]
    assert unknown.status_code == 200
    assert [(r["field"], r["index"]) for r in unknown.json()["rejected"]] == [
        ("seats[0].session.geo", 0)
    ]
    assert Game.objects.count() == games


# --- passwords ------------------------------------------------------------------------------


def test_passwords_are_hashed_with_argon2id_first(settings: Any) -> None:
    from config.settings import base

    settings.PASSWORD_HASHERS = base.PASSWORD_HASHERS  # the tests' own are fast MD5

    hashed = make_password("right-horse-battery")

    assert base.PASSWORD_HASHERS[0] == "django.contrib.auth.hashers.Argon2PasswordHasher"
    assert hashed.startswith("argon2$argon2id$")
    assert check_password("right-horse-battery", hashed)
    assert not check_password("wrong", hashed)


# --- headers and the Content Security Policy -------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/", "/masters/", "/api/seasons/", "/api/docs/", "/api/redoc/"])
def test_security_headers_and_csp(path: str) -> None:
    response = Client().get(path)

    assert response.status_code == 200
    policy = dict(
        part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";")
    )
    assert policy["default-src"] == "'self'"
    assert policy["script-src"] == "'self'"
    assert policy["object-src"] == "'none'"
    assert policy["frame-ancestors"] == "'none'"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"


_SCRIPT = re.compile(r"<script\b([^>]*)>", re.I)


def inline_scripts(html: str) -> list[str]:
    """Opening tags of scripts that would execute inline without a nonce."""
    return [
        tag
        for tag in _SCRIPT.findall(html)
        if "src=" not in tag and "application/json" not in tag and "nonce=" not in tag
    ]


def test_no_template_has_an_inline_script_without_a_nonce() -> None:
    found = {
        str(path.relative_to(ROOT)): inline_scripts(path.read_text())
        for path in (ROOT / "templates").rglob("*.html")
    }
    assert {name: tags for name, tags in found.items() if tags} == {}


@pytest.mark.django_db
def test_the_api_docs_have_no_inline_script() -> None:
    swagger = Client().get("/api/docs/")
    script = Client().get("/api/docs/?script=")

    assert inline_scripts(swagger.content.decode()) == []
    assert inline_scripts(Client().get("/api/redoc/").content.decode()) == []
    assert script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle" in script.content.decode()


# --- no secret in the repository ------------------------------------------------------------

SECRET_PATTERNS = {
    "private key": re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----"),
    "AWS access key": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "AWS secret": re.compile(r"aws_secret_access_key\s*[=:]\s*\S{20,}", re.I),
    "password": re.compile(r"""password["']?\s*[=:]\s*["']([^"'\s]{6,})["']""", re.I),
    "secret key": re.compile(r"""SECRET_KEY["']?\s*[=:]\s*["']([^"'\s]{20,})["']"""),
    "env secret": re.compile(r"^\w*(?:PASSWORD|SECRET|TOKEN)\w*=([^\s$]\S{5,})$", re.M),
    "URL credentials": re.compile(r"\w+://[\w.-]+:([^@/\s$]{4,})@"),
    "slack token": re.compile(r"\bxox[abpr]-[0-9A-Za-z-]{10,}"),
    "github token": re.compile(r"\bgh[pousr]_[0-9A-Za-z]{36}\b"),
}
#: Values that look like secrets but are documented as not being ones.
ALLOWED_VALUES = {
    "demo-password",  # demo.data.DEMO_PASSWORD, documented in the README (local demo only)
    "pw-for-tests-only",  # test fixtures
    "right-horse-battery",  # tests/reliability
    "insecure-local-key-change-me",  # base settings default, refused by check --deploy
}


#: Example files say where a secret goes with this placeholder (.env.example).
PLACEHOLDER = "change-me"


def tracked_files() -> list[Path]:
    listed = subprocess.run(  # noqa: S603 - fixed command
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],  # noqa: S607
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [ROOT / name for name in listed.split("\0") if name]


def test_no_secret_is_committed() -> None:
    findings = []
    files = tracked_files()
    for path in files:
        if not path.is_file() or path.stat().st_size > 2_000_000:
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for kind, pattern in SECRET_PATTERNS.items():
            for match in pattern.finditer(text):
                value = match.group(1) if pattern.groups else match.group(0)
                if value not in ALLOWED_VALUES and not value.startswith(PLACEHOLDER):
                    findings.append(f"{path.relative_to(ROOT)}: {kind}: {match.group(0)[:60]}")
    assert len(files) > 100
    assert findings == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("-----BEGIN OPENSSH " + "PRIVATE KEY-----", "private key"),
        ("key = 'AKIA" + "ABCDEFGHIJKLMNOP'", "AWS access key"),
        ("pass" + 'word="hunter2-hunter2"', "password"),
        ("POSTGRES_PASSWORD=hunter2hunter", "env secret"),
        ("DATABASE_URL=postgres://tour:s3cr3t" + "-pw@db/tour", "URL credentials"),
    ],
)
def test_the_scanner_finds_a_planted_secret(text: str, kind: str) -> None:
    """(Each sample is split in the source, so the scan of this file finds none.)"""
    assert [name for name, pattern in SECRET_PATTERNS.items() if pattern.search(text)] == [kind]
