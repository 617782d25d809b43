"""The shared cache failing (issue 24, items 1, 2 and 7): a Redis that refuses connections or
accepts and never answers leaves reads served from the database and writes accepted, the
write throttle counting per process; ``/healthz`` names the cache within 5 s. The throttle
is atomic under 12 threads, and refused credentials count against it."""

import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from rest_framework.test import APIClient

from accounts.models import User
from tests.conftest import token_client
from tests.reliability.conftest import board_event, database_url, fail_soft
from tournaments.models import Game

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A local port that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def test_with_the_cache_down_reads_come_from_the_database_and_writes_are_accepted(
    settings: Any, closed_port: int, game_server: User
) -> None:
    code = board_event()
    settings.CACHES = fail_soft(f"redis://127.0.0.1:{closed_port}/0")
    server = token_client(game_server)
    games_before = Game.objects.count()

    started = time.monotonic()
    board = Client().get(f"/api/events/{code}/leaderboard/")
    page = Client().get(f"/events/{code}/")
    empty = server.post("/api/games/", [], format="json")
    health = Client().get("/healthz")
    elapsed = time.monotonic() - started

    assert board.status_code == 200
    assert [row["total"] for row in board.json()["results"]] == [30, 20, 10]
    assert page.status_code == 200
    assert empty.status_code == 400  # the empty batch's own refusal, not a 500
    assert Game.objects.count() == games_before
    assert health.status_code == 200
    assert health.json()["status"] == "degraded"
    assert health.json()["components"]["cache"]["status"] == "down"
    assert health.json()["components"]["database"]["status"] == "ok"
    assert elapsed < 5


def test_a_cache_that_never_answers_costs_one_timeout_then_none(
    settings: Any, silent_server: int
) -> None:
    code = board_event()
    settings.CACHES = fail_soft(f"redis://127.0.0.1:{silent_server}/0", timeout=1.0)

    started = time.monotonic()
    health = Client().get("/healthz")
    first = time.monotonic() - started
    started = time.monotonic()
    board = Client().get(f"/api/events/{code}/leaderboard/")
    second = time.monotonic() - started

    assert health.status_code == 200
    assert health.json()["components"]["cache"]["status"] == "down"
    assert first <= 5
    assert board.status_code == 200
    assert second < 1  # the process leaves Redis alone for a while: no timeout again


@pytest.mark.usefixtures("mid_window")
def test_with_the_cache_down_the_throttle_counts_per_process(
    settings: Any, closed_port: int, organiser: User
) -> None:
    settings.CACHES = fail_soft(f"redis://127.0.0.1:{closed_port}/0")
    settings.API_WRITE_RATE = "3/min"
    client = token_client(organiser)

    codes = [client.post("/api/seasons/", {}, format="json").status_code for _ in range(4)]

    assert codes == [400, 400, 400, 429]


@pytest.fixture
def empty_cache() -> Iterator[None]:
    cache.clear()
    yield
    cache.clear()


@pytest.mark.usefixtures("empty_cache", "mid_window")
def test_the_throttle_holds_its_budget_under_12_threads(settings: Any, organiser: User) -> None:
    settings.API_WRITE_RATE = "60/min"
    clients = [token_client(organiser) for _ in range(12)]

    def burst(client: APIClient) -> list[int]:
        return [client.post("/api/seasons/", {}, format="json").status_code for _ in range(10)]

    with ThreadPoolExecutor(12) as pool:
        codes = [code for answers in pool.map(burst, clients) for code in answers]

    assert len(codes) == 120
    assert codes.count(400) == 60  # through the throttle: exactly the budget
    assert codes.count(429) == 60


@pytest.mark.usefixtures("empty_cache", "mid_window")
def test_refused_credentials_count_against_the_budget(settings: Any) -> None:
    settings.API_WRITE_RATE = "5/min"
    client = Client(HTTP_AUTHORIZATION="Token not-a-token", REMOTE_ADDR="203.0.113.9")

    codes = [client.get("/api/seasons/").status_code for _ in range(7)]
    other = Client(REMOTE_ADDR="203.0.113.10").get("/api/seasons/")

    assert codes == [401] * 5 + [429] * 2
    assert other.status_code == 200


def test_with_the_database_down_the_api_and_the_site_answer_503_fast(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import psycopg
    from django.db import connection
    from django.db.backends.postgresql.base import DatabaseWrapper

    def refused(self: Any, params: Any) -> Any:
        raise psycopg.OperationalError("connection refused (injected)")

    connection.close()
    monkeypatch.setattr(DatabaseWrapper, "get_new_connection", refused)

    started = time.monotonic()
    api = Client().get("/api/seasons/")
    site = Client().get("/players/?q=abc")
    health = Client().get("/healthz")
    elapsed = time.monotonic() - started
    monkeypatch.undo()

    assert api.status_code == 503
    assert api.json()["code"] == "unavailable"
    assert site.status_code == 503
    assert "服务暂时不可用" in site.content.decode()
    assert health.status_code == 503
    assert health.json()["components"]["database"]["status"] == "down"
    assert elapsed < 5


def test_a_database_that_never_answers_gets_503_and_healthz_within_5_s(
    silent_server: int, ci_log: Any
) -> None:
    """PostgreSQL's address accepts the connection and never answers: ``connect_timeout``
    (``DATABASE_CONNECT_TIMEOUT``, 3 s) ends the wait, the API and the site answer 503 and
    ``/healthz`` names the database, each within 5 s."""
    from django.db import connection

    saved = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict.update(HOST="127.0.0.1", PORT=str(silent_server))
    try:
        timings = {}
        answers = {}
        for path in ("/healthz", "/api/seasons/", "/players/?q=abc"):
            started = time.monotonic()
            answers[path] = Client().get(path)
            timings[path] = time.monotonic() - started
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)

    assert connection.settings_dict["OPTIONS"]["connect_timeout"] == 3
    assert answers["/healthz"].status_code == 503
    assert answers["/healthz"].json()["components"]["database"]["status"] == "down"
    assert answers["/api/seasons/"].status_code == 503
    assert answers["/api/seasons/"].json()["code"] == "unavailable"
    assert answers["/players/?q=abc"].status_code == 503
    assert max(timings.values()) <= 5
    ci_log(
        "faults: database accepting and never answering; "
        + ", ".join(f"{path} 503 in {seconds:.1f} s" for path, seconds in timings.items())
    )


def test_the_web_process_stops_a_statement_after_30_s_and_commands_do_not() -> None:
    """gunicorn loads config.wsgi, which sets the web's statement_timeout; a job or command
    process (no config.wsgi) keeps none."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "DATABASE_STATEMENT_TIMEOUT"}
    env |= {"DATABASE_URL": database_url(), "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    show = (
        "from django.db import connection\n"
        "with connection.cursor() as c:\n"
        "    c.execute('SHOW statement_timeout'); print(c.fetchone()[0])\n"
    )

    def timeout_of(preamble: str) -> str:
        done = subprocess.run(  # noqa: S603 - this interpreter, fixed arguments
            [sys.executable, "-c", preamble + show],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        return done.stdout.strip()

    assert timeout_of("import config.wsgi\n") == "30s"
    assert timeout_of("import django; django.setup()\n") == "0"
