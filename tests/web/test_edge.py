"""The edge cache (``core.edge``): an anonymous GET of a cached public answer is served whole
from the process's memory before any middleware, no longer than the answer's stale bound,
and never to a request that may see what others do not.

One ``Client`` is one process's middleware chain here, so each test keeps its client."""

from types import SimpleNamespace
from typing import Any

import pytest
from django.core.cache.backends import base as cache_base
from django.core.cache.backends import locmem
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

import core.cache
import core.edge
from accounts.models import User
from core.cache import BUILD_SECONDS
from tests.tournaments.factories import make_players, score_games
from tests.web.test_cache import ids, qualifier

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("empty_cache")]


@pytest.fixture
def clock(settings: Any, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """A one-second bound and one clock for the edge, the answers and the caches' expiry."""
    settings.READ_STALE_SECONDS = 1
    clock = SimpleNamespace(now=1000.0)
    fake_time = SimpleNamespace(time=lambda: clock.now)
    for module in (core.edge, core.cache, locmem, cache_base):
        monkeypatch.setattr(module, "time", fake_time)
    return clock


def stack_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, any request that reaches a cached view fails the test."""

    def reached(*args: object) -> None:
        raise AssertionError("the request went through the stack")

    monkeypatch.setattr(core.cache, "_kept", reached)


def test_a_repeated_anonymous_get_is_served_whole_without_the_stack(
    clock: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, django_assert_num_queries: Any
) -> None:
    event = qualifier()
    browser = Client()
    built = browser.get(f"/events/{event.code}/")
    stack_refused(monkeypatch)

    clock.now += 0.5
    with django_assert_num_queries(0):
        kept = browser.get(f"/events/{event.code}/")

    assert kept.status_code == 200
    assert kept.content == built.content
    assert sorted(kept.items()) == sorted(built.items())
    assert len(ids(kept.content.decode())) == 3


def test_a_kept_answer_is_served_within_the_bound_and_rebuilt_after_it(
    clock: SimpleNamespace,
) -> None:
    event = qualifier()
    browser = Client()
    before = ids(browser.get(f"/events/{event.code}/").content.decode())
    (newcomer,) = make_players(1, ("江苏",), prefix="n")
    score_games(event, {newcomer: [25]})

    clock.now += 0.9
    stale = ids(browser.get(f"/events/{event.code}/").content.decode())
    clock.now += 0.2
    fresh = ids(browser.get(f"/events/{event.code}/").content.decode())

    assert stale == before
    assert fresh == [before[0], newcomer.external_id, *before[1:]]


def test_the_registry_is_kept_no_longer_than_the_bound(
    clock: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    browser = Client()
    browser.get("/masters/")
    stack_refused(monkeypatch)
    clock.now += 0.9
    assert browser.get("/masters/").status_code == 200

    clock.now += 0.2
    with pytest.raises(AssertionError, match="through the stack"):
        browser.get("/masters/")


def test_each_address_is_kept_apart(
    clock: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    event = qualifier()
    browser = Client()
    path = f"/events/{event.code}/"
    chinese = browser.get(path).content.decode()
    english = browser.get(f"/en{path}").content.decode()
    fragment = browser.get(path, headers={"HX-Request": "true"}).content.decode()
    stack_refused(monkeypatch)

    assert browser.get(path).content.decode() == chinese
    assert browser.get(f"/en{path}").content.decode() == english
    assert browser.get(path, headers={"HX-Request": "true"}).content.decode() == fragment
    assert "最佳单局" in chinese
    assert "最佳单局" not in english
    with pytest.raises(AssertionError, match="through the stack"):
        browser.get(f"{path}?page=2")
    with pytest.raises(AssertionError, match="through the stack"):
        browser.get(path, headers={"Accept": "application/json"})


def test_a_signed_in_visitor_always_goes_through_the_stack(clock: SimpleNamespace) -> None:
    event = qualifier()
    browser = Client()
    anonymous = browser.get(f"/events/{event.code}/").content.decode()
    browser.force_login(User.objects.create_user(username="r", password="pw-for-tests-only"))

    signed_in = browser.get(f"/events/{event.code}/").content.decode()

    assert 'action="/signout/"' not in anonymous
    assert 'action="/signout/"' in signed_in


def test_a_request_with_credentials_always_goes_through_the_stack(
    clock: SimpleNamespace,
) -> None:
    event = qualifier()
    browser = Client()
    browser.get(f"/events/{event.code}/")

    with CaptureQueriesContext(connection) as ran:
        browser.get(f"/events/{event.code}/", headers={"Authorization": "Token x"})

    assert len(ran) >= 1  # a kept answer is served with none


def test_a_disallowed_host_gets_its_400_after_an_answer_was_kept(
    clock: SimpleNamespace,
) -> None:
    event = qualifier()
    browser = Client()
    assert browser.get(f"/events/{event.code}/").status_code == 200

    assert browser.get(f"/events/{event.code}/", HTTP_HOST="evil.example").status_code == 400


def test_with_no_bound_nothing_is_kept(settings: Any, django_assert_num_queries: Any) -> None:
    settings.READ_STALE_SECONDS = 0
    event = qualifier()
    browser = Client()
    browser.get(f"/events/{event.code}/")

    with django_assert_num_queries(1):  # the version, read again: the stack ran
        browser.get(f"/events/{event.code}/")


def test_while_one_request_refreshes_an_answer_the_others_get_the_kept_one(
    clock: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    event = qualifier()
    browser = Client()
    path = f"/events/{event.code}/"
    before = browser.get(path).content
    edge = browser.handler._middleware_chain.__wrapped__  # type: ignore[attr-defined]
    assert isinstance(edge, core.edge.EdgeCacheMiddleware)
    (address,) = edge.kept
    edge.refreshing.add(address)  # another thread of the process is refreshing it
    stack_refused(monkeypatch)

    clock.now += 1.5  # past the bound, within one build
    assert browser.get(path).content == before
    clock.now += BUILD_SECONDS  # that refresh died: this one goes through the stack
    with pytest.raises(AssertionError, match="through the stack"):
        browser.get(path)
