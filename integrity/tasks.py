"""Integrity jobs (SPEC §7 audits "after each event closes, and periodically over the season";
SPEC §8 every job idempotent), thin: each re-fetches by id and calls ``audit_run``, whose
``key`` makes a redelivery replace the run's flags instead of adding more (``acks_late``).

* :func:`audit_event_enqueue` — called when an event is finalised; the task is sent only
  once the caller's transaction commits (``transaction.on_commit``).
* :func:`audit_season_task` — weekly (``CELERY_BEAT_SCHEDULE`` at
  ``INTEGRITY_SEASON_AUDIT_CRONTAB``): splits the season into its weeks (Monday to Sunday,
  Asia/Shanghai) and sends one :func:`audit_window_task` per week that has ended and has no
  completed run (``redo=True``: every ended week), so the work spreads over the workers;
  each week is its own ``AuditRun`` key ``season:<year>:<monday>``, no chord.
* :func:`audit_runs_sweep_task` — every 15 minutes: a run still ``running`` after any
  attempt could have ended lost its worker and its message; it is marked failed with the
  reason and its audit sent again, which replaces the run (so it completes once).
"""

from datetime import date, datetime, timedelta
from typing import Any

from celery import shared_task
from django.db import transaction

from core.clock import TOUR_TZ, tour_today
from integrity.models import AuditRun
from integrity.services.audits import audit_event, audit_run, audit_runs_lost, day_window
from tournaments.models import Event, Season


def _today() -> date:
    return tour_today()


def season_week_key(year: int, monday: date) -> str:
    return f"season:{year}:{monday.isoformat()}"


@shared_task(name="integrity.audit_event", acks_late=True)
def audit_event_task(event_id: int) -> dict[str, Any]:
    """Audit one event over its window (key ``event:<code>``)."""
    run = audit_event(event=Event.objects.get(pk=event_id))
    return {"key": run.key, "status": run.status, "flags": run.stats.get("flags")}


def audit_event_enqueue(event: Event) -> None:
    """Send :func:`audit_event_task` for ``event`` once the current transaction commits; a
    broker outage is logged, not raised (the weekly season audit covers the window again)."""
    event_id = event.pk
    transaction.on_commit(lambda: audit_event_task.delay(event_id), robust=True)


@shared_task(name="integrity.audit_window", acks_late=True)
def audit_window_task(key: str, window_start: str, window_end: str) -> dict[str, Any]:
    """Audit one window (ISO datetimes) under ``key``."""
    run = audit_run(
        key=key,
        window_start=datetime.fromisoformat(window_start),
        window_end=datetime.fromisoformat(window_end),
    )
    return {"key": run.key, "status": run.status, "flags": run.stats.get("flags")}


def season_weeks(season: Season, *, today: date) -> list[tuple[str, datetime, datetime]]:
    """The ended weeks of the season's events: (key, start, end), Monday to Sunday."""
    bounds = season.events.exclude(status="cancelled").order_by("starts_at")
    first = bounds.values_list("starts_at", flat=True).first()
    last = bounds.order_by("-ends_at").values_list("ends_at", flat=True).first()
    if first is None or last is None:
        return []
    monday = first.astimezone(TOUR_TZ).date()
    monday -= timedelta(days=monday.weekday())
    end_day = min(last.astimezone(TOUR_TZ).date(), today - timedelta(days=1))
    weeks = []
    while monday + timedelta(days=6) <= end_day:
        start, end = day_window(monday, monday + timedelta(days=6))
        weeks.append((season_week_key(season.year, monday), start, end))
        monday += timedelta(days=7)
    return weeks


@shared_task(name="integrity.audit_season", acks_late=True)
def audit_season_task(year: int | None = None, redo: bool = False) -> list[str]:
    """Send a window audit for each ended week of the season not audited yet (module
    docstring); returns the keys sent. ``year`` defaults to the current tour year."""
    today = _today()
    season = Season.objects.filter(year=year or today.year).first()
    if season is None:
        return []
    weeks = season_weeks(season, today=today)
    done = set(
        AuditRun.objects.filter(
            key__in=[key for key, _, _ in weeks], status=AuditRun.Status.COMPLETED
        ).values_list("key", flat=True)
    )
    sent = []
    for key, start, end in weeks:
        if redo or key not in done:
            audit_window_task.delay(key, start.isoformat(), end.isoformat())
            sent.append(key)
    return sent


@shared_task(name="integrity.audit_runs_sweep", acks_late=True)
def audit_runs_sweep_task() -> list[str]:
    """Mark lost runs failed and send their audits again; returns their keys."""
    lost = audit_runs_lost()
    for run in lost:
        if run.event_id is not None:
            audit_event_task.delay(run.event_id)
        else:
            audit_window_task.delay(
                run.key, run.window_start.isoformat(), run.window_end.isoformat()
            )
    return [run.key for run in lost]
