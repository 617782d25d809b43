"""Shared fixtures: users with roles, API clients, a real Celery worker on Redis."""

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.core.cache import cache, caches
from django.test import Client
from hypothesis import settings as hypothesis_settings
from rest_framework.test import APIClient

from accounts.models import ApiToken, User
from accounts.roles import GAME_SERVER, ORGANISER, REVIEWER, ensure_roles
from tests.accounts.signin import client_sign_in

# No per-example deadline: the machines are shared and a loaded one makes a fast property
# look slow (a failure then says nothing about the property). Timing lives in `bench`.
hypothesis_settings.register_profile("tour", deadline=None)
hypothesis_settings.load_profile("tour")


@pytest.fixture
def empty_cache() -> Iterator[None]:
    """Both caches (the shared one and each process's copy of public answers) empty before
    and after the test."""
    cache.clear()
    caches["local"].clear()
    yield
    cache.clear()
    caches["local"].clear()


@pytest.fixture
def roles(db: Any) -> None:
    ensure_roles()


def _user(username: str, role: str | None) -> User:
    user = User.objects.create_user(username=username, password="pw-for-tests-only")
    if role:
        user.groups.add(Group.objects.get(name=role))
    return user


@pytest.fixture
def organiser(roles: None) -> User:
    return _user("org", ORGANISER)


@pytest.fixture
def reviewer(roles: None) -> User:
    return _user("rev", REVIEWER)


@pytest.fixture
def game_server(roles: None) -> User:
    return _user("server", GAME_SERVER)


@pytest.fixture
def admin_client(client: Client, admin_user: User) -> Client:
    """pytest-django's superuser client, its second factor confirmed (the admin needs it)."""
    return client_sign_in(client, admin_user)


@pytest.fixture
def api() -> APIClient:
    return APIClient()


def token_client(user: User) -> APIClient:
    _, raw = ApiToken.issue(user=user, name="test")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    return client


@pytest.fixture
def organiser_api(organiser: User) -> APIClient:
    return token_client(organiser)


@pytest.fixture
def reviewer_api(reviewer: User) -> APIClient:
    return token_client(reviewer)


def _forget_connections(app: Any) -> None:
    """Drop what tasks run eagerly earlier in the session cached on the app: the producer
    pool (bound to the broker configured then) and the result backend (disabled then)."""
    app._after_fork()
    app._backend_cache = None
    app._local.__dict__.pop("backend", None)


@pytest.fixture
def celery_worker_app(settings: Any) -> Iterator[Any]:
    """A real Celery worker (thread, solo pool) consuming from Redis at REDIS_URL."""
    import os

    from celery.contrib.testing.worker import start_worker

    from config.celery_app import app

    broker = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    settings.CELERY_TASK_ALWAYS_EAGER = False
    app.conf.update(
        broker_url=broker,
        result_backend=broker,
        task_always_eager=False,
        broker_connection_retry_on_startup=False,
    )
    _forget_connections(app)
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
            yield app
    finally:
        app.conf.update(task_always_eager=True, broker_url="", result_backend=None)
        _forget_connections(app)


@pytest.fixture
def event_log() -> Iterator[list[tuple[str, str, dict[str, Any]]]]:
    """The structured log lines (``core.logs``) written during the test, as
    ``(logger, event, fields)``; the ``unotour`` loggers do not propagate to the root."""
    import logging

    lines: list[tuple[str, str, dict[str, Any]]] = []

    class Lines(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append((record.name, record.getMessage(), getattr(record, "fields", {})))

    handler = Lines()
    logger = logging.getLogger("unotour")
    logger.addHandler(handler)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)
