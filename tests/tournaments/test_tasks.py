"""Tournament jobs (SPEC §8): thin tasks over their flows."""

from datetime import datetime, timedelta

import pytest
from django.test import override_settings

from core.domain.clock import TOUR_TZ
from tests.tournaments.factories import make_event, make_season
from tournaments.models import Event, EventStatus
from tournaments.tasks import events_auto_finalise_task

pytestmark = pytest.mark.django_db


@override_settings(TOUR_AUTO_FINALISE_GRACE=timedelta(minutes=30))
def test_the_auto_finalise_task_finalises_what_closed_and_is_idempotent() -> None:
    start = datetime(2021, 2, 1, 10, 0, tzinfo=TOUR_TZ)
    closed = make_event(make_season(), "2021-W05-Q", starts_at=start)  # closed long ago

    assert events_auto_finalise_task.delay().get() == {"finalised": ["2021-W05-Q"]}
    assert Event.objects.get(pk=closed.pk).status == EventStatus.FINALISED
    assert events_auto_finalise_task.delay().get() == {"finalised": []}
