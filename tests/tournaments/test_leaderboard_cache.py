"""The leaderboard API and the board count are cached under ``Event.leaderboard_version``
(``core.cache``): a repeated page costs the version's query alone (``READ_STALE_SECONDS`` is
0 in the test settings), and a standings write is seen by the very next read. The views run
outside any transaction here (``transactional_db``), as in production: inside one the cache
is bypassed."""

from typing import Any

import pytest
from django.core.cache import cache
from django.db import transaction
from rest_framework.test import APIClient

from core.cache import cached_by_version
from tests.tournaments.factories import make_event, make_players, make_season, score_games
from tournaments.models import Event
from tournaments.selectors.leaderboard import leaderboard_rows

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("empty_cache")]

URL = "/api/events/2021-W05-Q/leaderboard/"


def qualifier() -> Event:
    """Three ranked players (one game each ranks) and their standings."""
    event = make_event(make_season(minimum_games=1, best_n=1))
    first, second, third = make_players(3, ("江苏", "浙江"))
    score_games(event, {first: [30], second: [20], third: [10]})
    return event


def totals(page: dict[str, Any]) -> list[tuple[int | None, int]]:
    return [(row["rank"], row["total"]) for row in page["results"]]


def test_a_repeated_page_is_served_from_the_cache(
    api: APIClient, django_assert_num_queries: Any
) -> None:
    qualifier()
    with django_assert_num_queries(4):  # the version, the event, count, page
        built = api.get(URL).json()
    with django_assert_num_queries(1):  # the version
        cached = api.get(URL).json()

    assert cached == built
    assert built["count"] == 3
    assert totals(built) == [(1, 30), (2, 20), (3, 10)]


def test_a_standings_write_is_seen_by_the_next_read(
    api: APIClient, django_assert_num_queries: Any
) -> None:
    event = qualifier()
    api.get(URL)
    api.get(f"{URL}?province=江苏")
    (newcomer,) = make_players(1, ("江苏",))

    score_games(event, {newcomer: [25]})

    with django_assert_num_queries(4):
        national = api.get(URL).json()
    assert national["count"] == 4
    assert totals(national) == [(1, 30), (2, 25), (3, 20), (4, 10)]
    jiangsu = api.get(f"{URL}?province=江苏").json()
    assert [(row["province_rank"], row["total"]) for row in jiangsu["results"]] == [
        (1, 30),
        (2, 25),
        (3, 10),
    ]


def test_pages_and_sizes_are_cached_apart(api: APIClient) -> None:
    qualifier()

    first = api.get(f"{URL}?page_size=2").json()
    second = api.get(f"{URL}?page_size=2&page=2").json()
    whole = api.get(URL).json()

    assert totals(first) == [(1, 30), (2, 20)]
    assert (
        first["next"] == "http://testserver/api/events/2021-W05-Q/leaderboard/?page=2&page_size=2"
    )
    assert first["previous"] is None
    assert totals(second) == [(3, 10)]
    assert second["next"] is None
    assert second["previous"] == "http://testserver/api/events/2021-W05-Q/leaderboard/?page_size=2"
    assert totals(whole) == [(1, 30), (2, 20), (3, 10)]
    assert api.get(f"{URL}?page_size=2&page=3").status_code == 404
    assert api.get(f"{URL}?page_size=2&page=last").json() == second


def test_the_count_is_cached_by_version(django_assert_num_queries: Any) -> None:
    event = qualifier()
    with django_assert_num_queries(1):
        assert leaderboard_rows(event).count() == 3
    with django_assert_num_queries(0):
        assert leaderboard_rows(event).count() == 3
    (newcomer,) = make_players(1)

    score_games(event, {newcomer: [5]})

    event.refresh_from_db()
    with django_assert_num_queries(1):
        assert leaderboard_rows(event).count() == 4


def test_nothing_is_cached_inside_a_transaction() -> None:
    built: list[int] = []

    def build() -> int:
        built.append(1)
        return 7

    with transaction.atomic():
        assert cached_by_version(("k",), 1, build) == 7
        assert cached_by_version(("k",), 1, build) == 7
    assert cache.get("v:1:k") is None
    assert len(built) == 2
    assert cached_by_version(("k",), 1, build) == 7
    assert cached_by_version(("k",), 1, build) == 7
    assert cache.get("v:1:k") == 7
    assert len(built) == 3
