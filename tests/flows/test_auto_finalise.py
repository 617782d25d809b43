"""The auto-finalisation beat job (SPEC §8 jobs, §4 events finalised in order): every
online event whose window closed more than the grace ago is finalised, feeders first, its
audit queued; seated events are left to the organiser; a second run does nothing."""

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.test import override_settings

from core.domain.clock import TOUR_TZ
from flows.finalisation import events_auto_finalise
from integrity.tasks import audit_event_task
from tests.tournaments.factories import make_event, make_season
from tournaments.models import Event, EventStatus, Season

pytestmark = pytest.mark.django_db

NOW = datetime(2021, 2, 9, 12, 0, tzinfo=TOUR_TZ)
GRACE = timedelta(minutes=30)


def _day(season: Season, code: str, kind: str, day: int, **fields: Any) -> Event:
    start = datetime(2021, 2, day, 10, 0, tzinfo=TOUR_TZ)
    return make_event(
        season, code, kind, starts_at=start, ends_at=start + timedelta(hours=14), **fields
    )


def _season_week() -> dict[str, Event]:
    season = make_season()
    final = _day(season, "2021-W05-F", "weekly_final", 8)
    qualifier = make_event(
        season,
        "2021-W05-Q",
        "weekly_qualifier",
        starts_at=datetime(2021, 2, 1, 10, 0, tzinfo=TOUR_TZ),
        ends_at=datetime(2021, 2, 7, 23, 59, 59, 999999, tzinfo=TOUR_TZ),
        feeds=final,
    )
    return {
        "qualifier": qualifier,
        "final": final,
        "cup": _day(season, "2021-CUP", "custom", 3),
        "open": make_event(
            season, "2021-W06-Q", "weekly_qualifier", starts_at=NOW - timedelta(days=1)
        ),
        "seated": _day(season, "2021-NC", "championship", 5, format="seated"),
        "in_grace": make_event(
            season,
            "2021-LATE",
            "custom",
            starts_at=NOW - timedelta(hours=2),
            ends_at=NOW - GRACE + timedelta(minutes=1),
        ),
    }


def _status(events: dict[str, Event]) -> dict[str, str]:
    return {name: Event.objects.get(pk=event.pk).status for name, event in sorted(events.items())}


@override_settings(TOUR_AUTO_FINALISE_GRACE=GRACE)
def test_closed_online_events_finalise_in_window_order_once(
    django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = _season_week()
    queued: list[int] = []
    monkeypatch.setattr(audit_event_task, "delay", queued.append)

    with django_capture_on_commit_callbacks(execute=True):
        done = events_auto_finalise(now=NOW)

    assert done == ["2021-CUP", "2021-W05-Q", "2021-W05-F"]
    assert queued == [events["cup"].pk, events["qualifier"].pk, events["final"].pk]
    assert _status(events) == {
        "cup": EventStatus.FINALISED,
        "final": EventStatus.FINALISED,
        "in_grace": EventStatus.SCHEDULED,
        "open": EventStatus.SCHEDULED,
        "qualifier": EventStatus.FINALISED,
        "seated": EventStatus.SCHEDULED,
    }
    assert Event.objects.get(pk=events["final"].pk).finalised_by is None

    with django_capture_on_commit_callbacks(execute=True) as again:
        assert events_auto_finalise(now=NOW) == []
    assert (again, len(queued)) == ([], 3)


@override_settings(TOUR_AUTO_FINALISE_GRACE=GRACE)
def test_an_event_whose_feeder_waits_for_the_organiser_is_skipped_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    season = make_season()
    after = _day(season, "2021-NC-F", "custom", 6)
    seated = _day(season, "2021-NC", "championship", 5, format="seated", feeds=after)
    cup = _day(season, "2021-CUP", "custom", 7)

    with caplog.at_level("WARNING", logger="flows.finalisation"):
        done = events_auto_finalise(now=NOW)

    assert done == ["2021-CUP"]
    assert Event.objects.get(pk=after.pk).status == EventStatus.SCHEDULED
    assert Event.objects.get(pk=seated.pk).status == EventStatus.SCHEDULED
    assert Event.objects.get(pk=cup.pk).status == EventStatus.FINALISED
    assert "2021-NC-F" in caplog.text
    assert "2021-NC" in caplog.text


def test_the_grace_is_a_declared_setting_and_the_beat_runs_the_job() -> None:
    from django.conf import settings

    assert isinstance(settings.TOUR_AUTO_FINALISE_GRACE, timedelta)
    entry = settings.CELERY_BEAT_SCHEDULE["tournaments-auto-finalise"]
    assert entry["task"] == "tournaments.events_auto_finalise"
