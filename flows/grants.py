"""Grant approval with the integrity check (SPEC §6 "Grants go through review", §7).

A grant from an event is approvable by a reviewer only once the integrity audit of that
event has completed and raised nothing against its player (:func:`grant_audit_is_clean`,
switched off by ``settings.TITLES_REQUIRE_EVENT_AUDIT``). Grants without an event (World
Cup representation, manual entries) have no event audit: for those the reviewer's decision
and the hold of an open case (``titles.services.player_is_held``) are the check.
Auto-approval has no reviewer, so it always needs that completed, clean audit
(:func:`grant_audit_completed`, whatever the switch): a grant without an event, of an
unknown event or of an event not yet audited waits for a reviewer. These flows ask the
integrity app and call the titles services with its answer; API views, pages, tasks and
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


def grant_audit_completed(qualification: Qualification) -> bool:
    """Whether the qualification has an event whose integrity audit has completed and
    raised nothing against its player (``False`` without an event, or of an unknown one)."""
    code = (qualification.evidence or {}).get("event")
    event = Event.objects.filter(code=code).first() if code else None
    return event is not None and event_audit_is_clean(event, player=qualification.player)


def grant_audit_is_clean(qualification: Qualification) -> bool:
    """A reviewer's check: :func:`grant_audit_completed`, but ``True`` for a grant without
    an event (the reviewer is its check) or with ``TITLES_REQUIRE_EVENT_AUDIT`` off."""
    if not (qualification.evidence or {}).get("event"):
        return True
    return not settings.TITLES_REQUIRE_EVENT_AUDIT or grant_audit_completed(qualification)


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
    """Approve the pending grants past the objection window whose event's audit has
    completed clean (off unless configured); the others wait for a reviewer."""
    return titles.qualifications_auto_approve(audit_is_clean=grant_audit_completed)


def review_items(qualifications: list[Qualification]) -> list[QueueItem]:
    """The grants of a review page with their player's hold and their audit's answer."""
    return selectors.review_items(qualifications, audited=grant_audit_is_clean)
