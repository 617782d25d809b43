"""The public pages cache what they built (``core.cache``): a leaderboard page whole, under
``Event.leaderboard_version`` read at most ``READ_STALE_SECONDS`` ago (0 in the test
settings: every request reads it), a player's page under the versions of their events, a
registry page for ``REGISTRY_CACHE_SECONDS``. The views run outside any transaction here
(``transactional_db``), as in production: inside one the cache is bypassed."""

from types import SimpleNamespace
from typing import Any

import pytest
from django.core.cache import cache
from django.core.cache.backends import base as cache_base
from django.core.cache.backends import locmem
from django.test import Client

from accounts.models import User
from tests.tournaments.factories import make_event, make_players, make_season, score_games
from tournaments.models import Event

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("empty_cache")]


def qualifier() -> Event:
    event = make_event(make_season(minimum_games=1, best_n=1))
    players = make_players(3, ("江苏", "浙江"), prefix="c")
    score_games(event, {player: [10 * (3 - i)] for i, player in enumerate(players)})
    return event


def main(html: str) -> str:
    """The page's content, without the site's header and footer."""
    return html.split("<main", 1)[1].split(">", 1)[1].split("</main>", 1)[0]


def ids(html: str) -> list[str]:
    return [part.split("<", 1)[0] for part in html.split('class="pid">')[1:]]


def test_a_repeated_board_page_is_served_from_the_cache(
    django_assert_num_queries: Any,
) -> None:
    event = qualifier()
    with django_assert_num_queries(4):  # the version, the event, count, page
        built = Client().get(f"/events/{event.code}/").content.decode()
    with django_assert_num_queries(1):  # the version
        cached = Client().get(f"/events/{event.code}/").content.decode()

    assert ids(cached) == ids(built)
    assert len(ids(built)) == 3
    english = Client().get(f"/en/events/{event.code}/").content.decode()
    assert ids(english) == ids(built)
    assert "最佳单局" in cached  # the table is cached per language
    assert "最佳单局" not in english


def test_a_standings_write_is_seen_by_the_next_board_read() -> None:
    event = qualifier()
    before = ids(Client().get(f"/events/{event.code}/").content.decode())
    (newcomer,) = make_players(1, ("江苏",), prefix="n")

    score_games(event, {newcomer: [25]})

    after = ids(Client().get(f"/events/{event.code}/").content.decode())
    assert after == [before[0], newcomer.external_id, *before[1:]]
    refreshed = Client().get(f"/events/{event.code}/board/").content.decode()
    assert ids(refreshed) == after


def national_rank(player_page: str) -> str:
    """The national rank in the first row of a player's events."""
    row = player_page.split('<table class="events">', 1)[1].split("<tbody>", 1)[1]
    return row.split('<td class="num">', 1)[1].split("<", 1)[0]


def test_a_player_page_is_cached_under_their_events_versions(
    django_assert_num_queries: Any,
) -> None:
    event = qualifier()
    third = ids(Client().get(f"/events/{event.code}/").content.decode())[2]
    first = Client().get(f"/players/{third}/").content.decode()
    with django_assert_num_queries(1):  # the versions of their events
        again = Client().get(f"/players/{third}/").content.decode()
    assert main(again) == main(first)
    (newcomer,) = make_players(1, prefix="n")

    score_games(event, {newcomer: [25]})

    assert national_rank(first) == "3"
    assert national_rank(Client().get(f"/players/{third}/").content.decode()) == "4"


def test_a_registry_page_is_cached(django_assert_num_queries: Any) -> None:
    first = Client().get("/masters/").content.decode()
    with django_assert_num_queries(0):
        again = Client().get("/masters/").content.decode()
    assert "没有符合条件的记录。" in first
    assert main(again) == main(first)


def test_within_the_staleness_bound_a_board_is_served_without_a_query_then_refreshed(
    settings: Any, monkeypatch: pytest.MonkeyPatch, django_assert_num_queries: Any
) -> None:
    settings.READ_STALE_SECONDS = 1
    clock = SimpleNamespace(now=1000.0)
    fake_time = SimpleNamespace(time=lambda: clock.now)
    monkeypatch.setattr(locmem, "time", fake_time)  # the cache's expiry clock
    monkeypatch.setattr(cache_base, "time", fake_time)
    event = qualifier()
    before = ids(Client().get(f"/events/{event.code}/").content.decode())
    (newcomer,) = make_players(1, ("江苏",), prefix="n")
    score_games(event, {newcomer: [25]})

    clock.now += 0.9  # within the bound: the version read 0.9 s ago still stands
    with django_assert_num_queries(0):
        stale = ids(Client().get(f"/events/{event.code}/").content.decode())
    clock.now += 0.2  # past it: the version is read again, and the new game shows
    fresh = ids(Client().get(f"/events/{event.code}/").content.decode())

    assert stale == before
    assert fresh == [before[0], newcomer.external_id, *before[1:]]


def test_a_signed_in_visitor_is_never_served_a_cached_page() -> None:
    event = qualifier()
    anonymous = Client().get(f"/events/{event.code}/").content.decode()
    reviewer = Client()
    reviewer.force_login(User.objects.create_user(username="r", password="pw-for-tests-only"))

    signed_in = reviewer.get(f"/events/{event.code}/").content.decode()

    assert 'action="/signout/"' not in anonymous
    assert 'action="/signout/"' in signed_in


def test_while_one_request_builds_a_new_version_the_others_get_the_latest_answer(
    django_assert_num_queries: Any,
) -> None:
    from core.cache import _digest

    event = qualifier()
    path = f"/events/{event.code}/"
    before = ids(Client().get(path).content.decode())
    (newcomer,) = make_players(1, ("江苏",), prefix="n")
    score_games(event, {newcomer: [25]})
    building = _digest("newest", ("testserver", path, "", "")) + ":building"
    cache.add(building, 1, 5)  # another request is building the new version's answer

    with django_assert_num_queries(1):  # the version only: nothing is built
        meanwhile = ids(Client().get(path).content.decode())
    cache.delete(building)  # that build is over (here: it never stored anything)
    after = ids(Client().get(path).content.decode())

    assert meanwhile == before
    assert after == [before[0], newcomer.external_id, *before[1:]]
