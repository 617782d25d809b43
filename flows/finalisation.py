"""Finalisation across apps (SPEC §4 "Finalising an event…", §6 titles, §7 audits):
finalise → champion → title qualification → audit → webhook, in one transaction.

``tournaments.services.finalise`` fixes the ranking, the champion and who advances and
says what changed; this flow then records the champion's qualification when the event
names one (``Event.champion_achievement``: the monthly, quarterly and annual finals and any
championship the organiser adds), dated the final's last day in the season's time zone,
source ``event:<code>:champion`` (``titles.services.achievement_record``); queues the
event's integrity audit once the transaction commits (SPEC §7: after each event closes) and
the partners' ``event.finalised`` webhook. A second finalisation changes nothing and
announces nothing.

``champion_title_move`` is the titles side of a changed champion, shared with the
corrections flow: the old champion's qualification is withdrawn and the new one's recorded.
"""

from datetime import datetime

from django.db import transaction

from accounts.models import Player, User
from integrity.tasks import audit_event_enqueue
from titles.services import achievement_record, achievement_withdraw
from tournaments.models import Event
from tournaments.services import finalise
from tournaments.services.finalise import FinaliseResult, champion_evidence, champion_source
from webhooks.services import webhook_emit

__all__ = ["champion_title_move", "event_finalise"]


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
            _announce(result.event)
    return result
