"""Revocation and restoration of titles (SPEC §6, §7): a sanction takes every national
title by voiding the player's qualifications up to a day; an appeal gives them back.

The revocation remembers the qualifications it voided and their statuses, so
:func:`titles_restore` undoes it exactly; both recompute through the same path as every
other ledger change, and both are one structured log line (``unotour.titles``) on commit.
International Master records are untouched.
"""

import logging
from datetime import date

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import Player, User
from core.clock import tour_today
from core.errors import ConflictError, NotFoundError, ServiceError
from core.logs import log_event_on_commit
from titles.announce import changes_announce
from titles.models import (
    ChangeKind,
    Qualification,
    Revocation,
    TermState,
    TitleChange,
    TitleStatus,
)
from titles.recompute import titles_lock, titles_recompute
from titles.services.ledger import APPROVED, PENDING, VOIDED
from titles.services.review import decisions


def _revocation_source(revocation: Revocation) -> str:
    return revocation.case_ref or f"revocation:{revocation.pk}"


def titles_revoke(
    *, player: Player, on: date, by: User | None, reason: str, case_ref: str = ""
) -> None:
    """A sanction (SPEC §6, §7): take every national title, Lifetime included, by voiding
    the player's pending and approved qualifications dated up to ``on``."""
    if not reason.strip():
        raise ServiceError("A revocation needs a reason.")
    with transaction.atomic():
        titles = titles_lock([player.pk])
        voided = list(
            Qualification.objects.select_for_update()
            .filter(player=player, on__lte=on, status__in=(PENDING, APPROVED))
            .order_by("id")
            .values_list("id", "status")
        )
        revocation = Revocation.objects.create(
            player=player,
            on=on,
            case_ref=case_ref,
            reason=reason,
            by=by,
            voided=[[pk, status] for pk, status in voided],
        )
        Qualification.objects.filter(pk__in=[pk for pk, _ in voided]).update(
            status=VOIDED, revocation=revocation, version=F("version") + 1
        )
        if titles[player.pk][0] != TitleStatus.NONE:  # a title was held: the history says so
            revoked = TitleChange.objects.create(
                player=player,
                kind=ChangeKind.REVOKED,
                on=on,
                source=_revocation_source(revocation),
                by=by,
                reason=reason,
            )
            changes_announce([revoked])  # before the recompute: it shows what was taken
        titles_recompute(titles=titles, by=by, reason=reason, vanished=TermState.REVOKED)
        log_event_on_commit(
            decisions,
            logging.WARNING,
            "titles_revoked",
            player=player.external_id,
            on=on,
            revocation=revocation.pk,
            case=case_ref or None,
            voided=[pk for pk, _ in voided],
            by=by.username if by else None,
            reason=reason,
        )


def titles_restore(*, player: Player, revocation: Revocation, by: User | None, reason: str) -> None:
    """Reverse a revocation on appeal: its qualifications get their statuses back and the
    titles are recomputed through the same path."""
    if not reason.strip():
        raise ServiceError("A restoration needs a reason.")
    with transaction.atomic():
        titles = titles_lock([player.pk])
        locked = Revocation.objects.select_for_update().filter(pk=revocation.pk).first()
        if locked is None or locked.player_id != player.pk:
            raise NotFoundError(f"No revocation {revocation.pk} of {player.external_id}.")
        if locked.restored_at is not None:
            raise ConflictError(f"Revocation {locked.pk} was already reversed.")
        prior = dict(locked.voided)
        still_voided = list(
            Qualification.objects.select_for_update()
            .filter(revocation=locked, status=VOIDED)
            .order_by("id")
            .values_list("id", flat=True)
        )
        for status in (PENDING, APPROVED):
            Qualification.objects.filter(
                pk__in=[pk for pk in still_voided if prior.get(pk) == status]
            ).update(status=status, revocation=None, version=F("version") + 1)
        locked.restored_at, locked.restored_by, locked.restore_reason = timezone.now(), by, reason
        locked.save(update_fields=["restored_at", "restored_by", "restore_reason"])
        source = _revocation_source(locked)
        if TitleChange.objects.filter(
            player=player, kind=ChangeKind.REVOKED, source=source
        ).exists():
            restored = TitleChange.objects.create(
                player=player,
                kind=ChangeKind.RESTORED,
                on=tour_today(),
                source=source,
                by=by,
                reason=reason,
            )
            changes_announce([restored])  # before the recompute, as the revocation
        titles_recompute(titles=titles, by=by, reason=reason)
        log_event_on_commit(
            decisions,
            logging.WARNING,
            "titles_restored",
            player=player.external_id,
            revocation=locked.pk,
            case=locked.case_ref or None,
            restored=sorted(set(still_voided) & set(prior)),
            by=by.username if by else None,
            reason=reason,
        )
