"""Finalisation across apps (SPEC §4 "Finalising an event…", §6 titles, §7 audits):
finalise → champion → title qualification → advancement notices → audit → webhook, in one
transaction.

``tournaments.services.finalise`` fixes the ranking, the champion and who advances and
says what changed; this flow then records the champion's qualification when the event
names one (``Event.champion_achievement``: the monthly, quarterly and annual finals and any
championship the organiser adds), dated the final's last day in the season's time zone,
source ``event:<code>:champion`` (``titles.services.achievement_record``); queues the
event's integrity audit once the transaction commits (SPEC §7: after each event closes) and
the partners' ``event.finalised`` webhook; and tells each player who advanced
(``flows.notices.advancement_notices``). A second finalisation changes nothing and
announces nothing.

``champion_title_move`` is the titles side of a changed champion, shared with the
corrections flow: the old champion's qualification is withdrawn and the new one's recorded.

``events_auto_finalise`` is the beat job's (SPEC §8): it finalises, through this flow, every
online event whose window closed more than ``settings.TOUR_AUTO_FINALISE_GRACE`` ago.
"""

import logging
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import Player, User
from core.errors import ServiceError
from core.jobs import job_progress
from flows.notices import advancement_notices
from integrity.tasks import audit_event_enqueue
from titles.services import achievement_record, achievement_withdraw
from tournaments.models import Event, EventStatus
from tournaments.services import finalise
from tournaments.services.finalise import FinaliseResult, champion_evidence, champion_source
from webhooks.services import webhook_emit

__all__ = ["champion_title_move", "event_finalise", "events_auto_finalise"]

logger = logging.getLogger(__name__)


def champion_title_move(
    *, event: Event, before: Player | None, after: Player | None, by: User | None, reason: str
) -> None:
    """Move the champion's title qualification of ``event`` from ``before`` to ``after``;
    nothing when the event names none or the champion is unchanged."""
    achievement = event.champion_achievement
    if not achievement or before == after:
        return
    source = champion_source(event)
    if before is not None:
        achievement_withdraw(source=source, player=before, by=by, reason=reason)
    if after is not None:
        achievement_record(
            achievement=achievement,
            player=after,
            on=finalise.final_day(event),
            source=source,
            evidence=champion_evidence(event, after),
            by=by,
        )


def _announce(event: Event) -> None:
    """The event's integrity audit (after the commit) and the ``event.finalised`` webhook."""
    audit_event_enqueue(event)
    webhook_emit(
        event_type="event.finalised",
        payload={
            "event": event.code,
            "kind": event.kind,
            "station": event.station,
            "city": event.city,
            "champion": event.champion.external_id if event.champion else None,
            "finalised_at": event.finalised_at.isoformat() if event.finalised_at else None,
        },
    )


def event_finalise(
    *, event: Event, by: User | None, force: bool = False, now: datetime | None = None
) -> FinaliseResult:
    """Finalise ``event`` (SPEC §4) with its champion's title, audit and webhook; idempotent,
    one of concurrent calls does the work."""
    with transaction.atomic():
        result = finalise.event_finalise(event=event, by=by, force=force, now=now)
        if result.changed:
            champion_title_move(
                event=result.event,
                before=None,
                after=result.champion,
                by=by,
                reason=f"event {result.event.code} finalised",
            )
            advancement_notices(result.event)
            _announce(result.event)
    return result


def events_auto_finalise(*, now: datetime | None = None) -> list[str]:
    """Finalise every online (leaderboard) event whose window closed more than
    ``settings.TOUR_AUTO_FINALISE_GRACE`` before ``now``; return their codes.

    The beat job (``tournaments.tasks.events_auto_finalise_task``), SPEC §8. Events go in
    window order (end, then start), so feeders are finalised before the events they feed
    in the same run. An event that cannot be finalised yet (a feeder not finalised: a
    seated one waits for its organiser) is logged and skipped, and tried again next run.
    Seated events are never finalised here: they are the organiser's call. Each event is
    finalised by ``event_finalise`` (its own transaction: its champion's title, its audit
    queued on commit, the webhook), unattended (``by`` None); one already finalised is
    not selected, so a second run finalises nothing.
    """
    moment = now or timezone.now()
    closed = Event.objects.filter(
        status=EventStatus.SCHEDULED,
        format=Event.Format.LEADERBOARD,
        ends_at__lt=moment - settings.TOUR_AUTO_FINALISE_GRACE,
    ).order_by("ends_at", "starts_at", "pk")
    finalised: list[str] = []
    due = list(closed)
    for done, event in enumerate(due):
        job_progress(done, len(due), event.code)
        try:
            result = event_finalise(event=event, by=None, now=moment)
        except ServiceError as exc:  # a refusal (ConflictError: a feeder not finalised)
            logger.warning("auto-finalise skips event %s: %s", event.code, exc)
            continue
        if result.changed:
            logger.info("auto-finalise: event %s finalised", event.code)
            finalised.append(event.code)
    return finalised
