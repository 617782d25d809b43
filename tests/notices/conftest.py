"""Fixtures for the notices tests: the titles tests' frozen tour day, players and grants; the
webhooks tests' real receiver on 127.0.0.1; a partner subscribed to ``notice.created``."""

from typing import Any

import pytest

from tests.titles import conftest as titles_fixtures
from tests.webhooks import conftest as webhooks_fixtures
from tests.webhooks.conftest import Receiver
from webhooks.models import Subscription

freeze, make_player, player = (
    titles_fixtures.freeze,
    titles_fixtures.make_player,
    titles_fixtures.player,
)
record, grant = titles_fixtures.record, titles_fixtures.grant
receiver = webhooks_fixtures.receiver

SECRET = "notices-s3cret"


@pytest.fixture
def game_partner(db: Any, receiver: Receiver) -> Subscription:
    """The game's endpoint, subscribed to players' notices only."""
    return Subscription.objects.create(
        name="game", url=receiver.url, secret=SECRET, events=["notice.created"]
    )
