"""Grant review (SPEC §6, "Grants go through review"): approve, reject, in bulk, automatically.

A qualification is recorded ``pending``; it counts once approved. Approval needs four eyes
(the reviewer who entered a qualification by hand, ``manual:…``, cannot approve it: another
reviewer must), the player not held (:func:`player_is_held`: an open integrity case lists
them) and the integrity audit of its event run and clean. The audit is the integrity app's:
the caller answers it (``audit_clean``, or an ``audit_is_clean`` check per grant) —
``flows.grants`` is the caller that asks the integrity app; for auto-approval it answers
"clean" only for a completed, clean audit of the grant's event. Decisions are conditional on
the qualification's ``version`` (optimistic locking): of two reviewers deciding the same
grant at once, one wins and the other gets a ``ConflictError`` (HTTP 409). Rejecting also
reverses an earlier approval (a rejected grant recomputes everything after it); approving
also reverses an earlier rejection. Every decision is also one structured log line (logger
``unotour.titles``, ``core.logs``) when its transaction commits.
"""

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from django.apps import apps
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import Player, User
from core.errors import ConflictError, NotFoundError, ServiceError
from core.logs import log_event_on_commit
from titles.models import Qualification
from titles.recompute import titles_lock, titles_recompute
from titles.services.ledger import APPROVED, MANUAL, PENDING, REJECTED

logger = logging.getLogger(__name__)
decisions = logging.getLogger("unotour.titles")

#: Whether the integrity audit of a grant's event has run and cleared its player.
AuditCheck = Callable[[Qualification], bool]


def player_is_held(player: Player) -> bool:
    """Whether an open integrity case (``status="open"``) lists the player, holding their
    pending grants (SPEC §6, §7). ``False`` where the integrity app is not installed."""
    if not apps.is_installed("integrity"):
        return False
    try:
        case = apps.get_model("integrity", "Case")
    except LookupError:
        return False
    return bool(case.objects.filter(status="open", players=player).exists())


def _refuse_unless_approvable(
    qualification: Qualification, *, by: User | None, audit_clean: bool
) -> None:
    entered = qualification.source.startswith(MANUAL)
    if entered and by is not None and qualification.created_by_id == by.pk:
        raise ConflictError(
            "Four eyes: you entered this qualification, so another reviewer must approve it.",
            detail={"reason": "four_eyes"},
        )
    if player_is_held(qualification.player):
        raise ConflictError(
            "The player has an open integrity case: their grants are held.",
            detail={"reason": "held"},
        )
    if not audit_clean:
        raise ConflictError(
            "The integrity audit of this grant's event has not cleared it.",
            detail={"reason": "audit"},
        )


def _decide(
    *,
    qualification: Qualification,
    to: str,
    allowed_from: tuple[str, ...],
    by: User | None,
    reason: str,
    expected_version: int,
    audit_clean: bool = True,
) -> Qualification:
    with transaction.atomic():
        titles = titles_lock([qualification.player_id])
        if to == APPROVED:
            _refuse_unless_approvable(qualification, by=by, audit_clean=audit_clean)
        written = Qualification.objects.filter(
            pk=qualification.pk, version=expected_version, status__in=allowed_from
        ).update(
            status=to,
            version=F("version") + 1,
            decided_by=by,
            decided_at=timezone.now(),
            decision_reason=reason,
        )
        if not written:
            current = Qualification.objects.filter(pk=qualification.pk).first()
            if current is None:
                raise NotFoundError(f"No qualification {qualification.pk}.")
            raise ConflictError(
                f"Qualification {current.pk} is {current.status} at version {current.version}:"
                " someone decided it first, reload it.",
                detail={"reason": "stale", "status": current.status, "version": current.version},
            )
        titles_recompute(titles=titles, by=by, reason=reason)
        log_event_on_commit(
            decisions,
            logging.INFO,
            f"qualification_{to}",
            qualification=qualification.pk,
            player=qualification.player.external_id,
            source=qualification.source,
            on=qualification.on,
            confers=qualification.confers,
            by=by.username if by else None,
            reason=reason,
        )
    qualification.refresh_from_db()
    return qualification


def qualification_approve(
    *,
    qualification: Qualification,
    by: User | None,
    reason: str,
    expected_version: int,
    audit_clean: bool,
) -> Qualification:
    """Approve a pending (or rejected) grant: it counts from now on. ``audit_clean`` is the
    integrity audit's answer for it (``flows.grants.qualification_approve`` asks)."""
    return _decide(
        qualification=qualification,
        to=APPROVED,
        allowed_from=(PENDING, REJECTED),
        by=by,
        reason=reason,
        expected_version=expected_version,
        audit_clean=audit_clean,
    )


def qualification_reject(
    *, qualification: Qualification, by: User | None, reason: str, expected_version: int
) -> Qualification:
    """Reject a pending grant, or reverse an approval (everything after it is recomputed)."""
    if not reason.strip():
        raise ServiceError("A rejection needs a reason.")
    return _decide(
        qualification=qualification,
        to=REJECTED,
        allowed_from=(PENDING, APPROVED),
        by=by,
        reason=reason,
        expected_version=expected_version,
    )


@dataclass
class BulkOutcome:
    """What a bulk approval did: approved ids, and per refused id the error code and text."""

    approved: list[int] = field(default_factory=list)
    refused: list[tuple[int, str, str]] = field(default_factory=list)


def qualifications_bulk_approve(
    *, items: Sequence[tuple[int, int]], by: User | None, reason: str, audit_is_clean: AuditCheck
) -> BulkOutcome:
    """Approve ``(id, expected_version)`` pairs, each in its own transaction; a refused one
    (entered by the same reviewer, held, not audited, decided by someone else) does not stop
    the others."""
    outcome = BulkOutcome()
    found = Qualification.objects.select_related("player").in_bulk([pk for pk, _ in items])
    for pk, expected_version in items:
        qualification = found.get(pk)
        if qualification is None:
            outcome.refused.append((pk, NotFoundError.code, f"No qualification {pk}."))
            continue
        try:
            qualification_approve(
                qualification=qualification,
                by=by,
                reason=reason,
                expected_version=expected_version,
                audit_clean=audit_is_clean(qualification),
            )
        except ServiceError as exc:
            outcome.refused.append((pk, exc.code, exc.message))
        else:
            outcome.approved.append(pk)
    return outcome


def qualifications_auto_approve(*, audit_is_clean: AuditCheck) -> int:
    """Approve clean pending grants whose objection window has passed (SPEC §6: "a
    configured auto-approval for clean audits"). Off unless
    ``settings.TITLES_AUTO_APPROVE_AFTER_DAYS`` is set. Returns the number approved."""
    days = settings.TITLES_AUTO_APPROVE_AFTER_DAYS
    if days is None:
        return 0
    cutoff = timezone.now() - timedelta(days=days)
    reason = f"auto-approved: clean audit, no objection within {days} days"
    approved = 0
    candidates = Qualification.objects.filter(status=PENDING, created_at__lte=cutoff)
    for qualification in candidates.select_related("player").order_by("id"):
        if player_is_held(qualification.player) or not audit_is_clean(qualification):
            continue
        try:
            qualification_approve(
                qualification=qualification,
                by=None,
                reason=reason,
                expected_version=qualification.version,
                audit_clean=True,
            )
        except ConflictError:
            logger.info("auto-approval skipped qualification %s", qualification.pk)
            continue
        approved += 1
    return approved
