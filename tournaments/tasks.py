"""Tournament jobs (SPEC §8), thin: each re-fetches by id and calls its idempotent flow
(a task is an entry point, like a view: ``flows.finalisation`` for the finalisation)."""

from typing import Any

from celery import shared_task

from accounts.models import User
from core.jobs import job_enqueue
from core.models import Job
from flows.finalisation import event_finalise, events_auto_finalise
from tournaments.models import Event


@shared_task(name="tournaments.event_finalise", acks_late=True)
def event_finalise_task(event_id: int, user_id: int | None, force: bool = False) -> dict[str, Any]:
    """Finalise an event (``flows.finalisation.event_finalise``); a redelivery finds it done
    and changes nothing."""
    event = Event.objects.get(pk=event_id)
    by = User.objects.filter(pk=user_id).first() if user_id is not None else None
    result = event_finalise(event=event, by=by, force=force)
    return {
        "event": result.event.code,
        "changed": result.changed,
        "champion": result.champion.external_id if result.champion else None,
        "entries": result.entries,
    }


@shared_task(name="tournaments.events_auto_finalise", acks_late=True)
def events_auto_finalise_task() -> dict[str, list[str]]:
    """Finalise every online event closed past the grace (beat, every 5 minutes:
    ``flows.finalisation.events_auto_finalise``); idempotent, so a redelivery is harmless."""
    return {"finalised": events_auto_finalise()}


def event_finalise_enqueue(event: Event, *, by: User | None, force: bool) -> Job:
    """Queue :func:`event_finalise_task` for ``event`` (503 when the broker is down) and
    return its job."""
    return job_enqueue(
        event_finalise_task, event.pk, by and by.pk, force, subject=event.code, by=by
    )
