"""Fixtures for the page tests: the clock frozen at ``tests.web.tour.NOW`` and the tour.

The tour is built once per test module, inside a transaction rolled back after the module;
each test runs in a savepoint inside it (pytest-django's ``db``), so what a test writes is
undone, and gets the tour's rows freshly read. Browser tests (a live server needs committed
data) build their own with ``build_tour``.
"""

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone

from tests.web.tour import NOW, Tour, build_tour


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on it is 2021-02-08 15:00 in Asia/Shanghai (the live server thread too)."""
    monkeypatch.setattr(timezone, "now", lambda: NOW)


@pytest.fixture(scope="module")
def built_tour(django_db_setup: Any, django_db_blocker: Any) -> Iterator[Tour]:
    with pytest.MonkeyPatch.context() as patch, django_db_blocker.unblock():
        patch.setattr(timezone, "now", lambda: NOW)
        with transaction.atomic():
            yield build_tour()
            transaction.set_rollback(True)


@pytest.fixture
def tour(built_tour: Tour, db: Any, frozen: None) -> Tour:
    return built_tour.reloaded()
