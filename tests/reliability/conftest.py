"""Fixtures for the reliability tests: a seeded tour, one signed-in client per role, and a
way to write figures to CI's log.

The tour is ``tests.web.tour.build_tour`` (a season with finalised and live stations, titles
in every state, an open integrity case whose evidence and seats carry the session strings
``SECRET_IP`` / ``SECRET_DEVICE`` / ``SECRET_CLIENT``), plus what the API's other paths
need: a seated event with a round, an appeal, and a player's own account. It is built once
per module inside a transaction rolled back afterwards.
"""

import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.db import transaction
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import ApiToken, User
from accounts.roles import ORGANISER
from core import throttling
from core.models import Job
from integrity.models import Appeal, Case
from tests.tournaments.factories import make_event, make_players, make_season, score_games
from tests.web.tour import NOW, Tour, build_tour, seated_final
from titles.models import TitleTerm

ROLES = ("anonymous", "player", "organiser", "reviewer", "admin")


@dataclass
class Seeded:
    tour: Tour
    users: dict[str, User | None]
    tokens: dict[str, str | None]
    params: dict[str, Any]  # path parameters by kind: year, event, seated, player, ...

    def client(self, role: str) -> APIClient:
        client = APIClient()
        token = self.tokens[role]
        if token is not None:
            client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        return client


def seed() -> Seeded:
    """Build the tour and the extras (the clock must stand at ``NOW``)."""
    tour = build_tour()
    seated = seated_final(tour)
    case = Case.objects.get()
    accused = case.caseplayer_set.first()
    assert accused is not None
    appeal = Appeal.objects.create(case=case, player=accused.player, statement="not me")
    organiser = User.objects.create_user(username="matrix-org", password="pw-for-tests-only")
    organiser.groups.add(Group.objects.get(name=ORGANISER))
    own = User.objects.create_user(username="matrix-player", password="pw-for-tests-only")
    player = tour.players["p0000001"]
    player.user = own
    player.save(update_fields=["user"])
    admin = User.objects.create_superuser("matrix-admin", password="pw-for-tests-only")
    users: dict[str, User | None] = {
        "anonymous": None,
        "player": own,
        "organiser": organiser,
        "reviewer": tour.reviewer,
        "admin": admin,
    }
    tokens = {
        role: None if user is None else ApiToken.issue(user=user, name=role)[1]
        for role, user in users.items()
    }
    term = TitleTerm.objects.filter(player=player).order_by("start").first()
    assert term is not None
    params = {
        "year": tour.season.year,
        "event": tour.live.code,
        "seated": seated.code,
        "round": 1,
        "table": 1,
        "player": player.external_id,
        "qualification": tour.pending.pk,
        "case": case.pk,
        "appeal": appeal.pk,
        "term": term.code,
        "status_list": "master-0",
        "job": Job.objects.create(task="core.ping", subject="matrix").pk,
    }
    return Seeded(tour=tour, users=users, tokens=tokens, params=params)


@pytest.fixture(scope="module")
def seeded_module(django_db_setup: Any, django_db_blocker: Any) -> Iterator[Seeded]:
    with pytest.MonkeyPatch.context() as patch, django_db_blocker.unblock():
        patch.setattr(timezone, "now", lambda: NOW)
        with transaction.atomic():
            yield seed()
            transaction.set_rollback(True)


@pytest.fixture
def seeded(seeded_module: Seeded, db: Any, monkeypatch: pytest.MonkeyPatch) -> Seeded:
    monkeypatch.setattr(timezone, "now", lambda: NOW)
    return seeded_module


#: 30 s into a minute (1,800,000,000 s is a whole number of minutes): the write throttle's
#: fixed window runs another 30 s, so a test's burst never straddles its end.
THROTTLE_NOW = 1_800_000_030.0


@pytest.fixture
def mid_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """The write throttle's clock pinned at :data:`THROTTLE_NOW`."""
    monkeypatch.setattr(throttling, "time", SimpleNamespace(time=lambda: THROTTLE_NOW))


@pytest.fixture
def ci_log(capsys: pytest.CaptureFixture[str]) -> Callable[[str], None]:
    """``ci_log(line)``: print past pytest's capture, so the figure shows in CI's log."""

    def write(line: str) -> None:
        with capsys.disabled():
            print(f"\n[reliability] {line}")

    return write


def fail_soft(location: str, timeout: float = 1.0) -> dict[str, Any]:
    """CACHES with the shared cache at ``location`` (a Redis that may be down)."""
    return {
        "default": {
            "BACKEND": "core.redis_cache.FailSoftRedisCache",
            "LOCATION": location,
            "OPTIONS": {"socket_connect_timeout": timeout, "socket_timeout": timeout},
        },
        "local": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    }


@pytest.fixture
def closed_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def board_event() -> str:
    """A weekly qualifier with a board of three: totals 30, 20, 10."""
    event = make_event(make_season(minimum_games=1, best_n=1))
    players = make_players(3, ("江苏", "浙江"), prefix="c")
    score_games(event, {player: [10 * (3 - i)] for i, player in enumerate(players)})
    return event.code


def database_url() -> str:
    """The test database as a ``DATABASE_URL`` for another process (a TCP host or the
    embedded server's socket directory alike)."""
    from django.db import connection

    db = connection.settings_dict
    return f"postgres://{db['USER']}@/{db['NAME']}?host={db['HOST']}&port={db['PORT'] or 5432}"
