from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command

from accounts.models import Player
from flows import corrections
from ratings.models import Rating, RatingHistory
from ratings.tasks import ratings_replay_task, ratings_update_task
from tests.ratings.conftest import GameMaker

pytestmark = pytest.mark.django_db


def test_update_task_rates_and_is_idempotent(make_game: GameMaker, players: list[Player]) -> None:
    a, b, c, d = players[:4]
    make_game([(a, 30), (b, -5), (c, -10), (d, -15)], minute=1)

    assert ratings_update_task.delay().get() == 1
    assert ratings_update_task.delay().get() == 0
    assert Rating.objects.count() == 4


def test_replay_task_and_command(make_game: GameMaker, players: list[Player]) -> None:
    a, b, c, d = players[:4]
    make_game([(a, 30), (b, -5), (c, -10), (d, -15)], minute=1)
    make_game([(a, -5), (b, 30), (c, -10), (d, -15)], minute=2)

    assert ratings_replay_task.delay().get() == 2
    out = StringIO()
    call_command("ratings_replay", stdout=out)

    assert out.getvalue() == "Rated 2 games.\n"
    assert Rating.objects.get(player=a).games == 2
    assert ratings_update_task.acks_late is True


def test_a_void_or_restore_through_the_corrections_flow_rerates_at_once(
    make_game: GameMaker, players: list[Player], django_capture_on_commit_callbacks: Any
) -> None:
    """The ratings drop a voided game when the correction commits, not at the nightly
    replay, and take it back when it is restored."""
    a, b, c, d = players[:4]
    first = make_game([(a, 30), (b, -5), (c, -10), (d, -15)], minute=1)
    make_game([(a, -5), (b, 30), (c, -10), (d, -15)], minute=2)
    assert ratings_update_task.delay().get() == 2
    rated = dict(Rating.objects.values_list("player_id", "mu"))

    with django_capture_on_commit_callbacks(execute=True):
        corrections.game_void(game=first, by=None, reason="duplicate record")
    assert not RatingHistory.objects.filter(game=first).exists()
    assert Rating.objects.get(player=a).games == 1
    assert dict(Rating.objects.values_list("player_id", "mu")) != rated

    with django_capture_on_commit_callbacks(execute=True):
        corrections.game_restore(game=first, by=None, reason="not a duplicate")
    assert RatingHistory.objects.filter(game=first).count() == 4
    assert dict(Rating.objects.values_list("player_id", "mu")) == rated
