"""The foundation: health, the OpenAPI schema, offline docs, settings, tokens, roles."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from accounts.models import ApiToken, User
from accounts.roles import ORGANISER, REVIEWER, has_role


@pytest.mark.django_db
def test_healthz_reports_each_component() -> None:
    response = Client().get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["components"]["database"]["status"] == "ok"
    assert body["components"]["cache"]["status"] == "ok"
    assert body["components"]["broker"]["status"] == "skipped"


@pytest.mark.django_db
def test_healthz_down_database_answers_503(monkeypatch: pytest.MonkeyPatch) -> None:
    from core import health

    def broken() -> str:
        raise ConnectionError("connection refused")

    monkeypatch.setattr(health, "_database", broken)
    response = Client().get("/healthz")
    assert response.status_code == 503
    assert response.json()["components"]["database"] == {
        "status": "down",
        "error": "ConnectionError: connection refused",
    }


@pytest.mark.django_db
def test_schema_validates_as_openapi_3(tmp_path: object) -> None:
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", f"{tmp_path}/s.yaml")
    response = Client().get("/api/schema/?format=json")
    assert response.status_code == 200
    assert response.json()["openapi"].startswith("3.")


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/docs/", "/api/redoc/"])
def test_api_docs_make_no_external_requests(path: str) -> None:
    html = Client().get(path).content.decode()
    assert "/static/drf_spectacular_sidecar/" in html
    external = re.findall(r"""(?:src|href)=["'](https?:)?//""", html)
    assert external == []


@pytest.mark.django_db
def test_sidecar_assets_are_served() -> None:
    response = Client().get("/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui.css")
    assert response.status_code == 200


def test_settings_tour_time_zone_and_languages() -> None:
    from django.conf import settings

    assert settings.TIME_ZONE == "Asia/Shanghai"
    assert settings.USE_TZ is True
    assert settings.LANGUAGE_CODE == "zh-hans"
    assert [code for code, _ in settings.LANGUAGES] == ["zh-hans", "en"]


def test_production_settings_refuse_to_start_without_broker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib
    import sys

    from django.core.exceptions import ImproperlyConfigured

    monkeypatch.setenv("DJANGO_SECRET_KEY", "x" * 50)
    monkeypatch.setenv("DJANGO_ALLOWED_HOSTS", "example.org")
    monkeypatch.setenv("CELERY_BROKER_URL", "")
    monkeypatch.setenv("DATABASE_URL", "postgres://tour@db:5432/tour")
    sys.modules.pop("config.settings.production", None)
    with pytest.raises(ImproperlyConfigured, match="CELERY_BROKER_URL is required"):
        importlib.import_module("config.settings.production")


def test_production_settings_refuse_to_start_without_database_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib
    import sys

    from django.core.exceptions import ImproperlyConfigured

    monkeypatch.setenv("DJANGO_SECRET_KEY", "x" * 50)
    monkeypatch.setenv("DJANGO_ALLOWED_HOSTS", "example.org")
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://127.0.0.1:6379/14")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    sys.modules.pop("config.settings.production", None)
    with pytest.raises(ImproperlyConfigured, match="DATABASE_URL is required"):
        importlib.import_module("config.settings.production")


def test_production_settings_refuse_to_start_without_a_credential_signing_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib
    import sys

    from django.core.exceptions import ImproperlyConfigured

    monkeypatch.setenv("DJANGO_SECRET_KEY", "x" * 50)
    monkeypatch.setenv("DJANGO_ALLOWED_HOSTS", "example.org")
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://127.0.0.1:6379/14")
    monkeypatch.setenv("DATABASE_URL", "postgres://tour@db:5432/tour")
    from config.settings import base

    # production takes both from base, imported once under the test environment.
    monkeypatch.setattr(base, "CELERY_BROKER_URL", "redis://127.0.0.1:6379/14")
    monkeypatch.setattr(base, "CREDENTIAL_SIGNING_KEY", "")
    sys.modules.pop("config.settings.production", None)
    with pytest.raises(ImproperlyConfigured, match="CREDENTIAL_SIGNING_KEY is required"):
        importlib.import_module("config.settings.production")


def test_a_unix_socket_database_url_reaches_django_as_host_and_port(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """libpq's socket form (the URL bin/pg exports) gives HOST and PORT, as a TCP URL does."""
    import importlib
    import sys

    import config.settings

    monkeypatch.setenv("DATABASE_URL", "postgres://postgres@/unotour?host=/srv/tour/pg&port=5433")
    monkeypatch.delitem(sys.modules, "config.settings.base")
    monkeypatch.setattr(config.settings, "base", config.settings.base)
    database = importlib.import_module("config.settings.base").DATABASES["default"]
    assert (database["HOST"], database["PORT"]) == ("/srv/tour/pg", 5433)
    assert database["NAME"] == "unotour"
    assert database["OPTIONS"] == {"connect_timeout": 3}  # the socket query keys moved out
    assert (database["CONN_MAX_AGE"], database["CONN_HEALTH_CHECKS"]) == (60, True)


@pytest.mark.django_db
def test_token_authenticates_until_revoked_or_expired(organiser: User) -> None:
    from datetime import timedelta

    from django.utils import timezone

    token, raw = ApiToken.issue(user=organiser, name="server-1")
    assert token.digest != raw
    assert raw not in token.digest
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    assert client.get("/api/me/").json() == {"username": "org", "roles": ["organiser"]}

    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = client.get("/api/me/")
    assert response.status_code == 401
    assert response.json()["message"] == "Token expired."

    ApiToken.objects.filter(pk=token.pk).update(
        expires_at=timezone.now() + timedelta(days=1), revoked_at=timezone.now()
    )
    assert client.get("/api/me/").json()["message"] == "Token revoked."


@pytest.mark.django_db
def test_unknown_token_is_refused() -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    assert client.get("/api/me/").status_code == 401


@pytest.mark.django_db
def test_roles(organiser: User, reviewer: User) -> None:
    assert has_role(organiser, ORGANISER)
    assert not has_role(organiser, REVIEWER)
    assert has_role(reviewer, REVIEWER)
    assert not has_role(reviewer, ORGANISER)
    admin = User.objects.create_superuser("root", password="pw-for-tests-only")
    assert has_role(admin, ORGANISER)
    assert has_role(admin, REVIEWER)


@pytest.mark.django_db
def test_chinese_by_default_english_on_request() -> None:
    client = Client()
    chinese = client.get("/masters/?province=%E6%B1%9F%E8%8B%8F").content.decode()
    assert "UNO 中国线上巡回赛" in chinese
    # The switch is a link to the same page under the other language's prefix (a link, not a
    # form: the page carries no per-visitor token and can be cached whole).
    assert 'href="/en/masters/?province=%E6%B1%9F%E8%8B%8F" hreflang="en"' in chinese
    english = client.get("/en/masters/?province=%E6%B1%9F%E8%8B%8F").content.decode()
    assert "China UNO Online Tour" in english
    assert '<html lang="en">' in english
    assert 'href="/masters/?province=%E6%B1%9F%E8%8B%8F" hreflang="zh-hans"' in english


def test_compose_describes_production() -> None:
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parent.parent
    compose = yaml.safe_load((root / "docker-compose.yml").read_text())
    services = compose["services"]
    assert sorted(services) == ["beat", "db", "redis", "web", "worker"]
    for name in ("web", "db", "redis", "worker"):
        assert "healthcheck" in services[name], name
    assert services["db"]["image"].startswith("postgres:")
    assert "celery -A config.celery_app worker" in services["worker"]["command"]
    assert "DatabaseScheduler" in services["beat"]["command"]
    example = (root / ".env.example").read_text()
    for key in ("DATABASE_URL=postgres://", "CELERY_BROKER_URL=redis://", "DJANGO_SECRET_KEY="):
        assert key in example


# --- /healthz answers the container's own healthcheck in production --------------------------

ROOT = Path(__file__).resolve().parent.parent

#: Requests made under ``config.settings.production`` with ``.env.example``'s settings:
#: (Host, REMOTE_ADDR, path) → the status each gets.
PRODUCTION_PROBE = """
import json, django
django.setup()
from django.test import Client
answers = {}
for host, addr, path in [
    ("127.0.0.1:8000", "127.0.0.1", "/healthz"),
    ("127.0.0.1:8000", "127.0.0.1", "/"),
    ("127.0.0.1:8000", "203.0.113.7", "/healthz"),
    ("tour.example.org", "203.0.113.7", "/healthz"),
]:
    response = Client(REMOTE_ADDR=addr).get(path, HTTP_HOST=host)
    answers[f"{host} {addr} {path}"] = response.status_code
print(json.dumps(answers))
"""


def _production_env() -> dict[str, str]:
    """The environment of ``.env.example``, its database, broker and cache on this machine."""
    import os

    from django.db import connection

    env = dict(
        line.split("=", 1)
        for line in (ROOT / ".env.example").read_text().splitlines()
        if line and not line.startswith("#")
    )
    db = connection.settings_dict
    host, port = db["HOST"] or "127.0.0.1", db["PORT"] or 5432
    if host.startswith("/"):  # the project-local server's unix socket (bin/pg)
        env["DATABASE_URL"] = f"postgres://{db['USER']}@/{db['NAME']}?host={host}&port={port}"
    else:
        env["DATABASE_URL"] = (
            f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@{host}:{port}/{db['NAME']}"
        )
    env["CELERY_BROKER_URL"] = "redis://127.0.0.1:6379/14"
    env["CACHE_URL"] = "redis://127.0.0.1:6379/15"
    env["CREDENTIAL_SIGNING_KEY"] = settings.CREDENTIAL_SIGNING_KEY  # the example leaves it empty
    return {**os.environ, **env}


def _compose_healthcheck() -> list[str]:
    """The web service's healthcheck command, as docker-compose.yml gives it."""
    import yaml

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    test: list[str] = compose["services"]["web"]["healthcheck"]["test"]
    assert test[0] == "CMD"
    return test[1:]


def test_production_answers_the_loopback_healthz_and_nothing_else_without_its_host(
    django_db_setup: None,
) -> None:
    """The compose healthcheck's request (Host 127.0.0.1:8000, plain http, from the machine
    itself) is answered; that Host on another path, or from elsewhere, is still refused, and
    the public name is still sent to https."""
    import json
    import subprocess
    import sys

    probe = subprocess.run(  # noqa: S603 - a fixed command line
        [sys.executable, "-c", PRODUCTION_PROBE],
        cwd=ROOT,
        env=_production_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert probe.returncode == 0, probe.stderr[-2000:]
    assert json.loads(probe.stdout.splitlines()[-1]) == {
        "127.0.0.1:8000 127.0.0.1 /healthz": 200,
        "127.0.0.1:8000 127.0.0.1 /": 400,
        "127.0.0.1:8000 203.0.113.7 /healthz": 400,
        "tour.example.org 203.0.113.7 /healthz": 301,
    }


def test_the_compose_healthcheck_passes_against_gunicorn_with_the_example_env(
    django_db_setup: None,
) -> None:
    """gunicorn under ``config.settings.production`` with ``.env.example``'s settings, and
    the compose healthcheck's exact command (its port moved to a free one) exits 0."""
    import socket
    import subprocess
    import sys
    import time

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(  # noqa: S603 - a fixed command line
        [sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=_production_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    command = [part.replace(":8000/", f":{port}/") for part in _compose_healthcheck()]
    command[0] = sys.executable if command[0] == "python" else command[0]
    try:
        for _ in range(100):
            with socket.socket() as attempt:
                if attempt.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        check = subprocess.run(  # noqa: S603 - the compose file's command
            command, capture_output=True, text=True, timeout=30, check=False
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert check.returncode == 0, check.stderr[-2000:]
