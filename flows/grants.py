"""Grant approval with the integrity check (SPEC §6 "Grants go through review", §7).

A grant from an event is approvable only once the integrity audit of that event has run and
raised nothing against its player (:func:`grant_audit_is_clean`, switched off by
``settings.TITLES_REQUIRE_EVENT_AUDIT``). Grants without an event (World Cup
representation, manual entries) have no event audit: for those the reviewer's decision and
the hold of an open case (``titles.services.player_is_held``) are the check. These flows ask
the integrity app and call the titles services with its answer; API views, pages, tasks and
commands approve through them.
"""

from collections.abc import Sequence

from django.conf import settings

from accounts.models import User
from integrity.services.audits import event_audit_is_clean
from titles import selectors
from titles import services as titles
from titles.models import Qualification
from titles.selectors import QueueItem
from tournaments.models import Event


def grant_audit_is_clean(qualification: Qualification) -> bool:
    """Whether the integrity audit of the qualification's event has run and raised nothing
    against its player; ``True`` for a grant without an event or with the check off."""
    code = (qualification.evidence or {}).get("event")
    if not code or not settings.TITLES_REQUIRE_EVENT_AUDIT:
        return True
    event = Event.objects.filter(code=code).first()
    return event is not None and event_audit_is_clean(event, player=qualification.player)


def qualification_approve(
    *, qualification: Qualification, by: User | None, reason: str, expected_version: int
) -> Qualification:
    """Approve a grant (``titles.services.qualification_approve``) with its audit's answer."""
    return titles.qualification_approve(
        qualification=qualification,
        by=by,
        reason=reason,
        expected_version=expected_version,
        audit_clean=grant_audit_is_clean(qualification),
    )


def qualifications_bulk_approve(
    *, items: Sequence[tuple[int, int]], by: User | None, reason: str
) -> titles.BulkOutcome:
    """Approve ``(id, expected_version)`` pairs, each on its own, each with its audit."""
    return titles.qualifications_bulk_approve(
        items=items, by=by, reason=reason, audit_is_clean=grant_audit_is_clean
    )


def qualifications_auto_approve() -> int:
    """Approve the clean pending grants past the objection window (off unless configured)."""
    return titles.qualifications_auto_approve(audit_is_clean=grant_audit_is_clean)


def review_items(qualifications: list[Qualification]) -> list[QueueItem]:
    """The grants of a review page with their player's hold and their audit's answer."""
    return selectors.review_items(qualifications, audited=grant_audit_is_clean)
