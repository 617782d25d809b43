"""Faults injected for real: a Celery worker killed in the middle of an audit, the broker
down, a PostgreSQL backend terminated under the service.

* **Worker killed** (PostgreSQL + Redis): a real worker process
  (``tests/reliability/audit_worker.py``: ``celery worker -P solo`` on Redis db 13, the test
  database) runs ``integrity.audit_event`` (``acks_late``) with its detectors slowed down; it
  is SIGKILLed while the run row says ``running``. Nothing of the run is written; a second
  worker gets the message again once the broker's visibility timeout (5 s here) has passed,
  and the audit completes once, at attempt 2. A third delivery replaces the flags and never
  adds any.
* **Broker down**: pages and reads are still served; a write that needs a job is refused
  with 503 by ``core.broker.enqueue_or_fail`` before anything is written, and queued when
  the broker is back. The call sites that need a job (the finalise API, the audit trigger and
  the events admin's finalise action) are checked too.
* **PostgreSQL backend terminated** (PostgreSQL): ``pg_terminate_backend`` kills the
  service's connection; with ``CONN_HEALTH_CHECKS`` the next request reconnects and
  succeeds. Without them (the control), one request fails first.
"""

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any
from wsgiref.util import setup_testing_defaults

import pytest
from django.conf import settings as django_settings
from django.core.handlers.wsgi import WSGIHandler
from django.db import connection
from django.urls import path
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import Player
from config.urls import urlpatterns as site_urls
from core.broker import enqueue_or_fail
from core.tasks import ping
from flows.ingest import games_ingest
from integrity.models import AuditRun, Flag
from integrity.services.audits import audit_event, event_key
from integrity.simulation import simulate_season
from integrity.tasks import audit_event_task
from tests.accounts.signin import client_sign_in
from tests.conftest import _forget_connections, token_client
from tests.integrity.conftest import SMALL_WEEK, weekly_qualifier
from tests.reliability.conftest import board_event, database_url, fail_soft
from tests.tournaments.conftest import make_record
from tournaments.models import Game, Season

ROOT = Path(django_settings.BASE_DIR)
REDIS = os.environ.get("RELIABILITY_REDIS_URL", "redis://127.0.0.1:6379/13")
DEAD_BROKER = "redis://127.0.0.1:1/0"  # nothing listens on port 1: "Redis is down"
QUEUE = "reliability"


def redis_client() -> Any:
    import redis

    return redis.Redis.from_url(REDIS, socket_connect_timeout=1)


def redis_up() -> bool:
    try:
        return bool(redis_client().ping())
    except Exception:  # noqa: BLE001 - any failure means "not there"
        return False


needs_redis = pytest.mark.skipif(not redis_up(), reason=f"needs Redis at {REDIS}")


def wait_until(condition: Callable[[], Any], seconds: float, what: str) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


@pytest.fixture
def broker(settings: Any) -> Iterator[Any]:
    """The Celery app sending to a real broker (``broker.use(url)``), not in-process."""
    from config.celery_app import app

    def use(url: str) -> Any:
        settings.CELERY_BROKER_URL = url
        app.conf.update(
            broker_url=url,
            task_always_eager=False,
            broker_connection_retry_on_startup=False,
            broker_transport_options={"visibility_timeout": 5},
        )
        _forget_connections(app)
        return app

    settings.CELERY_TASK_ALWAYS_EAGER = False
    try:
        yield use
    finally:
        app.conf.update(
            task_always_eager=True, broker_url="", result_backend=None, broker_transport_options={}
        )
        _forget_connections(app)


# --- a worker killed in the middle of an audit ----------------------------------------------


def _worker(sleep: float, log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "RELIABILITY_BROKER": REDIS,
        "AUDIT_SLEEP": str(sleep),
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
    }
    return subprocess.Popen(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "tests.reliability.audit_worker", QUEUE],
        cwd=ROOT,
        env=env,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
    )


def _stop(worker: subprocess.Popen[bytes]) -> None:
    if worker.poll() is None:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


def _flags(run: AuditRun) -> list[tuple[str, tuple[str, ...], str]]:
    """The run's flags: detector, players and evidence (a multiset, duplicates kept)."""
    return sorted(
        (detector, tuple(players), json.dumps(evidence, sort_keys=True))
        for detector, players, evidence in Flag.objects.filter(run=run).values_list(
            "detector", "player_keys", "evidence"
        )
    )


@pytest.mark.redis
@needs_redis
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_audit_is_replaced_and_the_audit_completes_once(
    broker: Any, tmp_path: Path, ci_log: Callable[[str], None]
) -> None:
    season = Season.objects.create(year=2021, name="2021", starts_on=date(2021, 1, 4))
    event = weekly_qualifier(season, date(2021, 1, 4), "2021-W01-Q")
    report = games_ingest(records=list(simulate_season(**SMALL_WEEK).records), source="test")
    assert (report.rejected, report.conflicts) == ([], [])
    redis_client().flushdb()
    app = broker(REDIS)
    key = event_key(event)
    log = tmp_path / "workers.log"

    first = _worker(sleep=120, log=log)
    second = None
    try:
        audit_event_task.apply_async(args=[event.pk], queue=QUEUE)
        wait_until(
            lambda: AuditRun.objects.filter(key=key, status="running").exists(), 60, "the audit"
        )
        first.send_signal(signal.SIGKILL)  # fault 1: the worker dies mid-audit
        first.wait(timeout=10)
        killed = AuditRun.objects.get(key=key)
        assert (killed.status, killed.attempts, Flag.objects.count()) == ("running", 1, 0)

        second = _worker(sleep=0, log=log)
        started = time.monotonic()
        run = wait_until(
            lambda: AuditRun.objects.filter(key=key, status="completed").first(),
            90,
            f"the redelivered audit (log: {log.read_text()[-3000:]})",
        )
        redelivered_after = time.monotonic() - started
        assert run.attempts == 2
        flags = _flags(run)
        assert flags, "the simulated week has cheaters: the audit flags them"
        assert len(flags) == run.stats["flag_rows"] == Flag.objects.count()

        # A further delivery (redelivered after completing, or sent twice) replaces the flags.
        audit_event_task.apply_async(args=[event.pk], queue=QUEUE)
        wait_until(
            lambda: AuditRun.objects.filter(key=key, status="completed", attempts=3).exists(),
            60,
            "the third delivery",
        )
        assert _flags(run) == flags
    finally:
        _stop(first)
        if second is not None:
            _stop(second)
        app.conf.update(broker_url="")

    # The same audit in-process finds exactly the same flags: none lost, none doubled.
    assert _flags(audit_event(event=event)) == flags
    assert Flag.objects.count() == len(flags)
    ci_log(
        f"faults: worker SIGKILLed mid-audit; redelivered and completed {redelivered_after:.1f} s "
        f"after a new worker started (attempt 2), {len(flags)} flags, unchanged at attempt 3"
    )


# --- the broker down ------------------------------------------------------------------------


class QueuedWriteView(APIView):
    """A write that needs a job: the broker is checked before anything is written."""

    permission_classes: list[Any] = []

    def post(self, request: Any) -> Response:
        from django.db import transaction

        with transaction.atomic():
            enqueue_or_fail(ping)
            player = Player.objects.create(external_id="queued", name="排队", province="江苏")
        return Response({"player": player.external_id}, status=202)


urlpatterns = [path("queued-write/", QueuedWriteView.as_view()), *site_urls]


@pytest.mark.urls(__name__)
@pytest.mark.django_db
def test_broker_down_reads_served_and_a_write_needing_a_job_refused_503(
    broker: Any, ci_log: Callable[[str], None]
) -> None:
    from django.test import Client

    broker(DEAD_BROKER)  # fault 2: Redis is down
    client = Client()

    assert client.get("/").status_code == 200
    assert client.get("/api/seasons/").status_code == 200
    health = client.get("/healthz")
    assert health.status_code == 503
    assert health.json()["components"]["broker"]["status"] == "down"
    refused = client.post("/queued-write/")

    assert refused.status_code == 503
    body = refused.json()
    assert body["code"] == "unavailable"
    assert body["message"] == (
        "job queue unavailable: core.ping was not queued, nothing was changed; try again"
    )
    assert body["fields"]["task"] == "core.ping"
    assert not Player.objects.filter(external_id="queued").exists()
    ci_log("faults: broker down; reads 200, /healthz 503 (broker down), queued write 503, 0 rows")


@pytest.mark.urls(__name__)
@pytest.mark.django_db
def test_cache_and_broker_both_down_reads_served_ingest_stored_once_a_job_write_refused(
    broker: Any,
    settings: Any,
    closed_port: int,
    game_server: Any,
    ci_log: Callable[[str], None],
) -> None:
    """docker-compose puts the cache and the broker on one Redis: it going down takes both."""
    from django.test import Client

    code = board_event()
    settings.CACHES = fail_soft(f"redis://127.0.0.1:{closed_port}/0")
    broker(DEAD_BROKER)
    server = token_client(game_server)
    record = make_record("g-both-down")
    games = Game.objects.count()

    started = time.monotonic()
    board = Client().get(f"/api/events/{code}/leaderboard/")
    page = Client().get(f"/events/{code}/")
    first = server.post("/api/games/", [record], format="json")
    again = server.post("/api/games/", [record], format="json")
    refused = Client().post("/queued-write/")
    health = Client().get("/healthz")
    elapsed = time.monotonic() - started

    assert board.status_code == 200
    assert [row["total"] for row in board.json()["results"]] == [30, 20, 10]
    assert page.status_code == 200
    assert (first.status_code, first.json()["ingested"]) == (200, 1)
    assert (again.status_code, again.json()["duplicates"]) == (200, ["g-both-down"])
    assert Game.objects.count() == games + 1
    assert Game.objects.filter(record_id="g-both-down").count() == 1
    assert refused.status_code == 503
    assert refused.json()["code"] == "unavailable"
    assert not Player.objects.filter(external_id="queued").exists()
    assert health.status_code == 503
    components = health.json()["components"]
    assert (components["cache"]["status"], components["broker"]["status"]) == ("down", "down")
    assert components["database"]["status"] == "ok"
    assert elapsed < 5
    ci_log(
        f"faults: cache and broker down; board API and page 200, a game stored once (re-sent: "
        f"duplicate), queued write 503 with 0 rows, /healthz 503 naming both; {elapsed:.2f} s"
    )


@pytest.mark.redis
@needs_redis
@pytest.mark.urls(__name__)
@pytest.mark.django_db
def test_once_the_broker_is_back_the_write_goes_through_and_its_job_is_queued(
    broker: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from django.test import Client

    redis_client().flushdb()
    broker(REDIS)

    with django_capture_on_commit_callbacks(execute=True):
        response = Client().post("/queued-write/")

    assert response.status_code == 202
    assert Player.objects.filter(external_id="queued").count() == 1
    assert redis_client().llen("celery") == 1  # the ping job, waiting for a worker


@pytest.mark.django_db
def test_enqueue_or_fail_runs_the_job_in_process_when_jobs_are_eager(
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        enqueue_or_fail(ping)
    assert len(callbacks) == 1


@pytest.mark.parametrize("call_site", ["finalise", "audit-trigger"])
@pytest.mark.django_db(transaction=True)
def test_the_api_call_sites_needing_a_job_answer_503_when_the_broker_is_down(
    broker: Any, call_site: str
) -> None:
    from django.contrib.auth.models import Group
    from rest_framework.test import APIClient

    from accounts.models import ApiToken, User
    from accounts.roles import ORGANISER, REVIEWER, ensure_roles
    from tests.tournaments.factories import local, make_event, make_season

    ensure_roles()
    user = User.objects.create_user(username="staff")
    user.groups.add(*Group.objects.filter(name__in=[ORGANISER, REVIEWER]))
    event = make_event(make_season(), "2021-W05-Q", ends_at=local(2021, 2, 7, 23))
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.issue(user=user, name='t')[1]}")
    broker(DEAD_BROKER)

    if call_site == "finalise":
        response = client.post(f"/api/events/{event.code}/finalise/", {}, format="json")
    else:
        response = client.post("/api/integrity/runs/trigger/", {"event": event.code}, format="json")

    assert response.status_code == 503
    assert response.json()["message"].startswith("job queue unavailable")


@pytest.mark.django_db(transaction=True)
def test_the_admin_finalise_action_shows_the_error_and_queues_nothing_when_the_broker_is_down(
    broker: Any,
) -> None:
    from django.contrib.messages import get_messages
    from django.test import Client

    from accounts.models import User
    from tests.tournaments.factories import local, make_event, make_season
    from tournaments.models import Event

    admin = User.objects.create_superuser(username="boss", password="pw-for-tests-only")
    event = make_event(make_season(), "2021-W05-Q", ends_at=local(2021, 2, 7, 23))
    client = Client()
    client_sign_in(client, admin)
    broker(DEAD_BROKER)

    response = client.post(
        "/admin/tournaments/event/", {"action": "finalise", "_selected_action": [event.pk]}
    )

    assert response.status_code == 302
    shown = [m.message for m in get_messages(response.wsgi_request)]
    assert shown == [
        "job queue unavailable: tournaments.event_finalise was not queued, nothing was changed;"
        " try again"
    ]
    assert Event.objects.get(pk=event.pk).status == event.status


# --- a PostgreSQL backend terminated --------------------------------------------------------


def _get(handler: WSGIHandler, url: str) -> int:
    environ: dict[str, Any] = {
        "PATH_INFO": url,
        "REQUEST_METHOD": "GET",
        "SERVER_NAME": "localhost",
    }
    setup_testing_defaults(environ)
    status: list[str] = []

    def start_response(
        line: str, headers: list[tuple[str, str]], exc_info: Any = None
    ) -> Callable[[bytes], object]:
        status.append(line)
        return lambda data: None  # the write() callable, unused by Django

    response = handler(environ, start_response)
    b"".join(response)
    response.close()  # request_finished: the service's connection management
    return int(status[0].split()[0])


def _terminate_backend() -> int:
    import psycopg

    connection.ensure_connection()
    pid: int = connection.connection.info.backend_pid
    db = connection.settings_dict
    with psycopg.connect(
        host=db["HOST"], port=db["PORT"] or 5432, user=db["USER"], dbname=db["NAME"]
    ) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
    return pid


@pytest.mark.django_db(transaction=True)
def test_after_the_database_backend_is_terminated_the_next_request_succeeds(
    ci_log: Callable[[str], None],
) -> None:
    handler = WSGIHandler()
    assert connection.settings_dict["CONN_HEALTH_CHECKS"] is True
    assert connection.settings_dict["CONN_MAX_AGE"] > 0  # a persistent connection
    assert _get(handler, "/api/seasons/") == 200

    killed = _terminate_backend()  # fault 3: the database drops the service's connection
    assert _get(handler, "/api/seasons/") == 200
    assert connection.connection.info.backend_pid != killed

    # The control: without health checks the first request after the fault fails.
    connection.settings_dict["CONN_HEALTH_CHECKS"] = False
    # As if connected without them (an attribute the stubs lack).
    connection.health_check_enabled = False  # type: ignore[attr-defined]
    try:
        _terminate_backend()
        statuses = [_get(handler, "/api/seasons/") for _ in range(2)]
    finally:
        connection.settings_dict["CONN_HEALTH_CHECKS"] = True
        connection.close()
    assert statuses == [503, 200]  # lost the database: 503 (core.middleware), then reconnected
    ci_log(
        "faults: PostgreSQL backend terminated twice; with CONN_HEALTH_CHECKS 0 failed "
        "requests, without them 1 failed request before reconnecting"
    )
