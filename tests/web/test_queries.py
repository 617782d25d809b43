"""List pages and list endpoints run the same number of queries for 5 rows as for 50."""

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client

from accounts.models import Player
from core.clock import tour_today
from tests.tournaments.factories import local, make_event, make_players, make_season, score_games
from titles.models import Qualification, QualificationRule, QualificationStatus
from titles.recompute import titles_recompute_all
from titles.services import rules_ensure_defaults
from tournaments.models import Event, EventStatus

pytestmark = pytest.mark.django_db

SIZES = (5, 50)


def board(rows: int) -> Event:
    """A live board of ``rows`` ranked players over three provinces (one game each ranks)."""
    season = make_season(minimum_games=1, best_n=1)
    event = make_event(season, "2021-W05-F", "weekly_final", starts_at=local(2021, 2, 8, 10))
    players = make_players(rows, provinces=("江苏", "浙江", "广东"))
    score_games(event, {p: [i] for i, p in enumerate(players)})
    return event


def stations(rows: int) -> int:
    """A season of ``rows`` finalised stations, each with its champion."""
    season = make_season()
    champions = make_players(rows)
    for i, champion in enumerate(champions):
        make_event(
            season,
            f"2021-W{i + 1:02d}-F",
            "weekly_final",
            starts_at=local(2021, 1, 4, 10) + timedelta(days=7 * i),
            ends_at=local(2021, 1, 4, 23) + timedelta(days=7 * i),
            station=i + 1,
            city="南京",
            status=EventStatus.FINALISED,
            champion=champion,
        )
    return season.year


def masters(rows: int) -> list[Player]:
    """``rows`` current Masters: approved qualifications, materialised by the recompute."""
    rules_ensure_defaults()
    rule = QualificationRule.objects.get(key="monthly_champion")
    players = make_players(rows, provinces=("江苏", "浙江"))
    Qualification.objects.bulk_create(
        [
            Qualification(
                player=player,
                source=f"event:test-{player.pk}",
                rule=rule,
                on=tour_today() - timedelta(days=30),
                confers=rule.confers,
                status=QualificationStatus.APPROVED,
            )
            for player in players
        ]
    )
    titles_recompute_all(reason="test data")
    return players


def consume(response: Any) -> bytes:
    assert response.status_code == 200
    body: bytes = response.getvalue()  # the streamed content joined, or the content
    return body


def pids(html: bytes) -> int:
    return html.count(b'class="pid"')


def csv_lines(csv: bytes) -> int:
    return csv.count(b"\n") - 1


#: (queries, build the data for n rows, the URL, how many rows the answer shows).
CASES: dict[str, tuple[int, Callable[[int], Any], Callable[[Any], str], Callable[[bytes], int]]] = {
    # event, count, eligible slice
    "leaderboard page": (3, board, lambda event: f"/events/{event.code}/", pids),
    "province leaderboard page": (
        3,
        lambda n: board(n * 3),
        lambda event: f"/events/{event.code}/?province=江苏",
        pids,
    ),
    # season, seasons, stations with their champions
    "calendar page": (
        3,
        stations,
        lambda year: f"/seasons/{year}/",
        lambda html: html.count(b'class="champion"'),
    ),
    # count, page with players
    "registry page": (2, masters, lambda _: "/masters/", pids),
    # event, ranks (window), eligible rows, other rows
    "leaderboard export": (
        4,
        board,
        lambda event: f"/exports/events/{event.code}/leaderboard.csv",
        csv_lines,
    ),
    # season, stations with their champions
    "champions export": (
        2,
        stations,
        lambda year: f"/exports/seasons/{year}/champions.json",
        lambda json: json.count(b'"champion_name"'),
    ),
    # current titles with their players
    "registry export": (1, masters, lambda _: "/exports/masters.csv", csv_lines),
}


@pytest.mark.parametrize("rows", SIZES)
@pytest.mark.parametrize("case", list(CASES))
def test_queries_do_not_grow_with_rows(
    django_assert_num_queries: Callable[..., Any], case: str, rows: int
) -> None:
    queries, build, url, shown = CASES[case]
    made = build(rows)
    with django_assert_num_queries(queries):
        content = consume(Client().get(url(made)))
    assert shown(content) == rows
