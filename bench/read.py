"""Bench stage ``read``: the public read path of a live weekly qualifier under load, against
the bare endpoint of the same server (PostgreSQL only; SPEC §4, §5, §9).

Scale 1.0 is 200,000 players on one live board (``--scale 0.01``: 2,000, the minimum). The
bench season (year 2998), the live event ``bench-read-q`` and its players (``br-0000001`` …)
and eligible standings are generated in SQL (``generate_series``) and kept between runs:
a rerun adds only what a larger scale needs. Then, in the same run:

* the service is started as in production: gunicorn ``config.wsgi`` with
  ``config.settings.production`` (Redis cache and broker), 2 × cores workers of
  ``THREADS`` threads each (as docker-compose.yml runs it), on a free port
  of 127.0.0.1; its static files are collected first (the manifest storage needs them);
* **service** — locust, headless, 50 users without think time, over the live board page
  (national, 江苏), the leaderboard API (national, 江苏), a player's page and the Master
  registry (``bench/locustfile.py``). Meanwhile a thread writes to the event as ingest
  would: SQL updates of ~50 standings a second (a game more, a higher total), each batch
  bumping ``Event.leaderboard_version`` in the same transaction;
* **baseline** — the same locust run against ``/healthz?checks=0`` of the same server.

Goals (the budget): p99 at 50 users on each endpoint and overall <= 4 × the bare endpoint's
p99, and service rps >= 0.4 × the bare endpoint's rps. A request that does not answer 200
counts as a failure and fails its row. The server is always stopped.
"""

import csv
import os
import random
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path
from typing import TextIO

from django.conf import settings
from django.db import connection, connections, transaction
from django.utils import timezone

from accounts.provinces import PROVINCES
from bench.registry import Result, stage
from titles.credentials.keys import generate_secret_multikey
from tournaments.models import Event, EventKind, EventStatus, Season

PLAYERS_AT_SCALE_1 = 200_000
MIN_PLAYERS = 2_000
BENCH_YEAR = 2998
EVENT = "bench-read-q"
PREFIX = "br-"
USERS = 50
SPAWN_RATE = 25
#: Threads per gunicorn worker: a request waiting on PostgreSQL or Redis does not hold its
#: worker (docker-compose.yml and the Dockerfile run the same).
THREADS = 4
#: Budgets (issue 22): p99 at most 4 x the bare endpoint's p99; at least 40 % of its rps.
P99_GOAL_RATIO = 4.0
RPS_GOAL = 0.4
UPDATES_PER_SECOND = 50
BATCHES_PER_SECOND = 10
LOCUSTFILE = Path(__file__).with_name("locustfile.py")
BIN = Path(sys.executable).parent


def _event(players: int) -> Event:
    """The live bench event with ``players`` eligible standings (created once, then grown)."""
    season, _ = Season.objects.get_or_create(
        year=BENCH_YEAR, defaults={"name": "bench read", "starts_on": date(BENCH_YEAR, 1, 1)}
    )
    now = timezone.now()
    event, _ = Event.objects.update_or_create(
        code=EVENT,
        defaults={
            "season": season,
            "kind": EventKind.WEEKLY_QUALIFIER,
            "name": "bench read qualifier",
            "starts_at": now - timedelta(days=1),
            "ends_at": now + timedelta(days=6),
            "open_entry": True,
            "status": EventStatus.SCHEDULED,
        },
    )
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO accounts_player (external_id, name, province, created_at, updated_at)
            SELECT %s || lpad(i::text, 7, '0'), 'Bench ' || i,
                   (%s::text[])[1 + i %% cardinality(%s::text[])], now(), now()
            FROM generate_series(1, %s) AS i
            ON CONFLICT (external_id) DO NOTHING
            """,
            [PREFIX, list(PROVINCES), list(PROVINCES), players],
        )
        # 15 kept scores per player (best N), 15..60 games, reached within the last day.
        cursor.execute(
            """
            INSERT INTO tournaments_standing
                (event_id, player_id, player_key, province, games, kept, total, best,
                 reached_at, eligible, advanced, by_national, by_province, updated_at)
            SELECT %s, p.id, p.external_id, p.province, 15 + (p.id %% 46), k.kept, k.total,
                   k.best, now() - (p.id %% 86400) * interval '1 second', true,
                   false, false, false, now()
            FROM accounts_player p
            CROSS JOIN LATERAL (
                SELECT jsonb_agg(s ORDER BY s DESC) AS kept, sum(s) AS total, max(s) AS best
                FROM (
                    SELECT (random() * 120 + (p.id %% 7) * 10)::int AS s
                    FROM generate_series(1, 15)
                ) AS scores
            ) AS k
            WHERE p.external_id LIKE %s AND p.external_id <= %s || lpad(%s::text, 7, '0')
            ON CONFLICT (player_id, event_id) DO NOTHING
            """,
            [event.id, PREFIX + "%", PREFIX, players],
        )
        cursor.execute("ANALYZE tournaments_standing")
        cursor.execute("ANALYZE accounts_player")
    return event


class _Writer(threading.Thread):
    """Ingest-like writes while the readers run: ``UPDATES_PER_SECOND`` standings a second,
    in ``BATCHES_PER_SECOND`` transactions, each bumping the event's leaderboard version."""

    def __init__(self, event_id: int) -> None:
        super().__init__(daemon=True)
        self.event_id = event_id
        self.stop = threading.Event()
        self.updates = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        per_batch = UPDATES_PER_SECOND // BATCHES_PER_SECOND
        period = 1 / BATCHES_PER_SECOND
        try:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT min(id), max(id) FROM tournaments_standing WHERE event_id = %s",
                    [self.event_id],
                )
                low, high = cursor.fetchone()
            rng = random.Random(2998)  # noqa: S311 - bench data, not security
            next_at = time.monotonic()
            while not self.stop.is_set():
                ids = [rng.randint(low, high) for _ in range(per_batch)]
                with transaction.atomic(), connection.cursor() as cursor:
                    cursor.execute(
                        """
                        UPDATE tournaments_standing
                        SET games = games + 1, total = total + (random() * 20)::int,
                            reached_at = now(), updated_at = now()
                        WHERE id = ANY(%s) AND event_id = %s
                        """,
                        [ids, self.event_id],
                    )
                    self.updates += cursor.rowcount
                    cursor.execute(
                        "UPDATE tournaments_event SET leaderboard_version = "
                        "leaderboard_version + 1 WHERE id = %s",
                        [self.event_id],
                    )
                next_at += period
                self.stop.wait(max(0.0, next_at - time.monotonic()))
        except BaseException as exc:  # noqa: BLE001 - reported by the stage
            self.error = exc
        finally:
            connections["default"].close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _server_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(48)[:64],
            "CREDENTIAL_SIGNING_KEY": generate_secret_multikey(),
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
            "DJANGO_SECURE_SSL_REDIRECT": "false",
            "CELERY_BROKER_URL": "redis://127.0.0.1:6379/12",
            "CACHE_URL": "redis://127.0.0.1:6379/11",
            "DATABASE_URL": os.environ["DATABASE_URL"],
            "LOG_LEVEL": "WARNING",
        }
    )
    return env


def _wait_healthy(url: str, server: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {server.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - http://127.0.0.1
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer 200 within {timeout:.0f} s")


def _locust(host: str, tag: str, seconds: int, prefix: str) -> dict[str, dict[str, float]]:
    """One headless locust run; its per-name rows and ``Aggregated`` from ``*_stats.csv``."""
    subprocess.run(  # noqa: S603 - fixed arguments
        [
            str(BIN / "locust"),
            "-f",
            str(LOCUSTFILE),
            "--headless",
            "-u",
            str(USERS),
            "-r",
            str(SPAWN_RATE),
            "-t",
            f"{seconds}s",
            "--host",
            host,
            "--tags",
            tag,
            "--csv",
            prefix,
            "--only-summary",
            "--loglevel",
            "WARNING",
        ],  # fmt: skip
        check=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=seconds + 60,
    )
    rows: dict[str, dict[str, float]] = {}
    with open(f"{prefix}_stats.csv", encoding="utf-8") as stats:
        for row in csv.DictReader(stats):
            rows[row["Name"]] = {
                "count": float(row["Request Count"]),
                "failures": float(row["Failure Count"]),
                "p50": float(row["50%"]),
                "p95": float(row["95%"]),
                "p99": float(row["99%"]),
                "rps": float(row["Requests/s"]),
            }
    return rows


def _table(rows: dict[str, dict[str, float]]) -> str:
    header = ("endpoint", "requests", "fail", "p50 ms", "p95 ms", "p99 ms", "rps")
    lines = [header] + [
        (
            name,
            f"{r['count']:,.0f}",
            f"{r['failures']:,.0f}",
            f"{r['p50']:,.0f}",
            f"{r['p95']:,.0f}",
            f"{r['p99']:,.0f}",
            f"{r['rps']:,.1f}",
        )
        for name, r in rows.items()
    ]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in lines
    )


@contextmanager
def _server(env: dict[str, str]) -> Iterator[tuple[str, int]]:
    """gunicorn ``config.wsgi`` on a free port of 127.0.0.1, healthy; yields its URL and
    worker count, and is always stopped."""
    subprocess.run(  # noqa: S603 - fixed arguments
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
        cwd=settings.BASE_DIR,
        env=env,
        check=True,
    )
    port = _free_port()
    host = f"http://127.0.0.1:{port}"
    workers = 2 * (os.cpu_count() or 1)
    server = subprocess.Popen(  # noqa: S603 - fixed arguments
        [
            str(BIN / "gunicorn"),
            "config.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--threads",
            str(THREADS),
            "--log-level",
            "warning",
        ],  # fmt: skip
        cwd=settings.BASE_DIR,
        env=env,
    )
    try:
        _wait_healthy(f"{host}/healthz", server)
        yield host, workers
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _results(
    service: dict[str, dict[str, float]], bare: dict[str, dict[str, float]], size: str
) -> list[Result]:
    """One p99 row per endpoint and overall (against the bare endpoint's p99), and the rps
    row; a row with a failed request fails."""
    bare_all = bare["Aggregated"]
    results = []
    for name, row in service.items():
        label = "all" if name == "Aggregated" else name
        ratio = row["p99"] / bare_all["p99"] if bare_all["p99"] else 0.0
        results.append(
            Result(
                stage=f"read p99 {label}",
                size=size,
                value=row["p99"],
                unit="ms",
                baseline=bare_all["p99"],
                ratio=ratio,
                goal=f"ratio <= {P99_GOAL_RATIO:.0f}",
                passed=row["failures"] == 0 and bool(bare_all["p99"]) and ratio <= P99_GOAL_RATIO,
            )
        )
    total = service["Aggregated"]
    ratio = total["rps"] / bare_all["rps"] if bare_all["rps"] else 0.0
    results.append(
        Result(
            stage="read rps all",
            size=size,
            value=total["rps"],
            unit="req/s",
            baseline=bare_all["rps"],
            ratio=ratio,
            goal=f"ratio >= {RPS_GOAL}",
            passed=total["failures"] == 0 and bare_all["failures"] == 0 and ratio >= RPS_GOAL,
        )
    )
    return results


@stage("read")
def bench_read(scale: float, out: TextIO) -> list[Result]:
    players = max(MIN_PLAYERS, round(PLAYERS_AT_SCALE_1 * scale))
    seconds = 20 if scale <= 0.01 else 60
    size = f"{players:,} players, {USERS} users, {seconds} s"
    started = time.perf_counter()
    event = _event(players)
    out.write(f"data: {players:,} standings ready in {time.perf_counter() - started:.1f} s")
    workdir = tempfile.mkdtemp(prefix="bench-read-")
    writer = _Writer(event.id)
    try:
        with _server(_server_env()) as (host, workers):
            writer.start()
            service = _locust(host, "service", seconds, f"{workdir}/service")
            writer.stop.set()
            writer.join()
            bare = _locust(host, "bare", seconds, f"{workdir}/bare")
    finally:
        writer.stop.set()
        shutil.rmtree(workdir, ignore_errors=True)
    if writer.error is not None:
        raise writer.error
    out.write(
        f"server: gunicorn, {workers} workers x {THREADS} threads;"
        f" writes during the load: {writer.updates:,}"
    )
    out.write("service:\n" + _table(service))
    out.write("bare:\n" + _table(bare))
    return _results(service, bare, size)
