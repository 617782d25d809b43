"""Integrity jobs (SPEC §7, §8): the event audit is sent on commit; the season audit splits
into one window task per ended week, each its own run key, and sends nothing twice (the
weekly schedule: tests/integrity/test_beat.py)."""

from datetime import date
from typing import Any

import pytest
from django.db import transaction

from integrity.models import AuditRun
from integrity.simulation import Season
from integrity.tasks import audit_event_enqueue, audit_season_task, season_weeks
from tournaments.models import Event

pytestmark = pytest.mark.django_db


def test_the_event_audit_is_sent_once_the_transaction_commits(
    simulated: tuple[Season, Event], django_capture_on_commit_callbacks: Any
) -> None:
    _, event = simulated
    with django_capture_on_commit_callbacks(execute=True) as callbacks, transaction.atomic():
        audit_event_enqueue(event)
        assert AuditRun.objects.count() == 0
    assert len(callbacks) == 1
    run = AuditRun.objects.get()
    assert (run.key, run.status, run.event) == (f"event:{event.code}", "completed", event)


def test_the_season_audit_sends_one_task_per_ended_week(
    simulated: tuple[Season, Event], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, event = simulated
    monkeypatch.setattr("integrity.tasks._today", lambda: date(2021, 1, 12))
    weeks = season_weeks(event.season, today=date(2021, 1, 12))
    assert [key for key, _, _ in weeks] == ["season:2021:2021-01-04"]

    sent = audit_season_task.delay(2021).get()

    assert sent == ["season:2021:2021-01-04"]
    run = AuditRun.objects.get()
    assert (run.key, run.status, run.event) == ("season:2021:2021-01-04", "completed", None)
    assert run.stats["tables"] > 0
    # Idempotent: the completed week is not sent again (unless redone); a redo replaces.
    assert audit_season_task.delay(2021).get() == []
    assert audit_season_task.delay(2021, redo=True).get() == ["season:2021:2021-01-04"]
    run.refresh_from_db()
    assert (AuditRun.objects.count(), run.attempts) == (1, 2)


def test_no_week_has_ended_before_the_sunday(week: Event, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("integrity.tasks._today", lambda: date(2021, 1, 10))
    assert audit_season_task.delay(2021).get() == []
    assert audit_season_task.delay(1999).get() == []
    assert AuditRun.objects.count() == 0
