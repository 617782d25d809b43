"""Integrity jobs (SPEC §7, §8): the event audit is sent on commit; the season audit splits
into one window task per ended week, each its own run key, and sends nothing twice (the
weekly schedule: tests/integrity/test_beat.py)."""

from datetime import date, timedelta
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone

from integrity.models import AuditRun
from integrity.simulation import Season
from integrity.tasks import (
    audit_event_enqueue,
    audit_event_task,
    audit_runs_sweep_task,
    audit_season_task,
    season_weeks,
)
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


def test_a_run_whose_worker_died_is_marked_failed_and_its_audit_sent_again_once(
    simulated: tuple[Season, Event], settings: Any
) -> None:
    _, event = simulated
    lifetime = (
        settings.CELERY_TASK_TIME_LIMIT
        + settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    )
    now = timezone.now()
    lost = AuditRun.objects.create(
        key=f"event:{event.code}",
        event=event,
        window_start=event.starts_at,
        window_end=event.ends_at,
        started_at=now - timedelta(seconds=lifetime + 60),
        attempts=1,
    )
    alive = AuditRun.objects.create(
        key="season:2021:2021-01-04",
        window_start=event.starts_at,
        window_end=event.ends_at,
        started_at=now - timedelta(seconds=lifetime - 60),
        attempts=1,
    )

    with pytest.MonkeyPatch.context() as patch:
        sent: list[tuple[str, int]] = []
        patch.setattr(audit_event_task, "delay", lambda pk: sent.append(("event", pk)))
        assert audit_runs_sweep_task.delay().get() == [f"event:{event.code}"]

    lost.refresh_from_db()
    alive.refresh_from_db()
    assert (lost.status, lost.attempts) == ("failed", 1)
    assert lost.error.startswith("worker lost: running since ")
    assert f"({lifetime} s); sent again" in lost.error
    assert sent == [("event", event.pk)]
    assert (alive.status, alive.error) == ("running", "")
    assert audit_runs_sweep_task.delay().get() == []  # nothing left to sweep

    # The audit sent again completes the same run, once.
    audit_event_task.delay(event.pk).get()
    lost.refresh_from_db()
    assert (lost.status, lost.attempts, AuditRun.objects.count()) == ("completed", 2, 2)
