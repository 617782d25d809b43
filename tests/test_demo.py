"""The demo data of ``bin/run``: built through the real services, deterministic, idempotent."""

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from accounts.models import Player
from demo.data import load_demo
from tournaments.models import Event, Game, Standing

NOW = datetime(2021, 3, 17, 15, 0, tzinfo=ZoneInfo("Asia/Shanghai"))  # a Wednesday


@pytest.mark.django_db
def test_demo_loads_a_season_with_played_and_live_events_and_is_idempotent() -> None:
    first = load_demo(players=120, now=NOW)

    events = Event.objects.filter(season__year=2021)
    assert events.exclude(station=None).count() == 69
    finalised = sorted(events.filter(status="finalised").values_list("code", flat=True))
    # the two weeks before this one: each qualifier and its Monday final.
    assert finalised == ["2021-W09-F", "2021-W09-Q", "2021-W10-F", "2021-W10-Q"]
    assert first["finalised"] == 4
    assert first["qualifications approved"] == 7
    live = Event.objects.get(code="2021-W11-Q")
    assert live.status == "scheduled"
    assert Game.objects.filter(event=live).exists()
    assert Game.objects.filter(event=live, ended_at__gt=NOW).count() == 0
    assert Standing.objects.filter(event__code="2021-W10-Q", eligible=True).count() > 24

    counts = (Player.objects.count(), Game.objects.count(), Standing.objects.count())
    second = load_demo(players=120, now=NOW)
    assert second["games"] == 0
    assert second["qualifications approved"] == 0
    assert (Player.objects.count(), Game.objects.count(), Standing.objects.count()) == counts
