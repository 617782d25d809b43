"""Finalisation across apps (SPEC §4 "Finalising an event…", §6, §7)."""

from datetime import datetime

from accounts.models import User
from tournaments.models import Event
from tournaments.services import finalise
from tournaments.services.finalise import FinaliseResult


def event_finalise(
    *, event: Event, by: User | None, force: bool = False, now: datetime | None = None
) -> FinaliseResult:
    """Finalise ``event`` (SPEC §4); idempotent, one of concurrent calls does the work."""
    return finalise.event_finalise(event=event, by=by, force=force, now=now)
