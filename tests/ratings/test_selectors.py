from datetime import timedelta

import pytest

from accounts.models import Player
from ratings.selectors import rating_history_points
from ratings.services import ratings_update
from tests.ratings.conftest import T0, GameMaker

pytestmark = pytest.mark.django_db


@pytest.fixture
def seven_games(make_game: GameMaker, players: list[Player]) -> Player:
    a, b, c, d = players[:4]
    for minute in range(7):
        make_game([(a, 30 - minute * 10), (b, -5), (c, -10), (d, -15)], minute=minute)
    ratings_update()
    return a


def test_history_points_oldest_first(seven_games: Player) -> None:
    from ratings.models import RatingHistory

    points = rating_history_points(player_id=seven_games.pk)

    assert points == list(
        RatingHistory.objects.filter(player=seven_games)
        .order_by("ended_at")
        .values_list("ended_at", "ordinal")
    )
    assert [at for at, _ in points] == [T0 + timedelta(minutes=m) for m in range(7)]


def test_history_points_downsampled_evenly_keeping_first_and_last(seven_games: Player) -> None:
    every = rating_history_points(player_id=seven_games.pk)

    assert rating_history_points(player_id=seven_games.pk, max_points=3) == [
        every[0],
        every[3],
        every[6],
    ]
    assert rating_history_points(player_id=seven_games.pk, max_points=4) == [
        every[0],
        every[2],
        every[4],
        every[6],
    ]
    assert rating_history_points(player_id=seven_games.pk, max_points=7) == every


def test_history_points_default_bound_is_500(make_game: GameMaker, players: list[Player]) -> None:
    a, b, c, d = players[:4]
    for minute in range(501):
        make_game([(a, 30), (b, -5), (c, -10), (d, -15)], minute=minute)
    ratings_update()

    points = rating_history_points(player_id=a.pk)

    assert len(points) == 500
    assert points[0][0] == T0
    assert points[-1][0] == T0 + timedelta(minutes=500)


def test_no_history(players: list[Player]) -> None:
    assert rating_history_points(player_id=players[0].pk) == []
