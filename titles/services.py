"""Title services (SPEC §6, §8): the ledger, its review, revocation, and the daily jobs.

Every write here is atomic and takes the players' title locks first
(:func:`titles.recompute.titles_lock`, player id order), then the qualification rows (id
order); a write that changes which qualifications count recomputes the players' titles in
the same transaction (:func:`titles.recompute.titles_recompute`), which also writes the
history.

Review (SPEC §6, "Grants go through review"): a qualification is recorded ``pending``; it
counts once approved. Approval needs the player not held (:func:`player_is_held`) and the
integrity audit of its event run and clean (:func:`audit_is_clean`). Decisions are
conditional on the qualification's ``version`` (optimistic locking): of two reviewers
deciding the same grant at once, one wins and the other gets a ``ConflictError`` (HTTP 409).
Rejecting also reverses an earlier approval (a rejected grant recomputes everything after
it); approving also reverses an earlier rejection.

The integrity hooks:

* :func:`player_is_held` — an open integrity case (``integrity.Case``, ``status="open"``)
  holds its players' pending grants.
* :func:`audit_is_clean` — the integrity audit of the grant's event has run and raised
  nothing against its player (``settings.TITLES_REQUIRE_EVENT_AUDIT``).

Every decision — a grant approved or rejected (by a reviewer, in bulk or automatically),
titles revoked or restored — is also written as one structured log line (logger
``unotour.titles``, ``core.logs``) when its transaction commits.
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import Player, User
from core.errors import ConflictError, NotFoundError, ServiceError
from core.logs import log_event_on_commit
from core.post_migrate import migrated
from titles.domain.dates import month_end
from titles.domain.replay import LIFETIME, MASTER
from titles.models import (
    ChangeKind,
    InternationalMaster,
    Notification,
    PlayerTitle,
    Qualification,
    QualificationRule,
    QualificationStatus,
    Revocation,
    StakeRanking,
    TermState,
    TitleChange,
    TitleStatus,
    TitleTerm,
    WorldCupRepresentative,
)
from titles.recompute import titles_lock, titles_recompute, titles_webhooks_emit, tour_today

logger = logging.getLogger(__name__)
decisions = logging.getLogger("unotour.titles")

PENDING = QualificationStatus.PENDING
APPROVED = QualificationStatus.APPROVED
REJECTED = QualificationStatus.REJECTED
VOIDED = QualificationStatus.VOIDED

#: The rules seeded on migrate (seeds: 大师资格 (1) and (3); SPEC §2). The seeds' missing
#: qualification (2) and any other achievement are added in the admin.
DEFAULT_RULES: tuple[tuple[str, str, str], ...] = (
    ("monthly_champion", MASTER, "月赛冠军 — champion of a monthly final"),
    ("quarterly_champion", MASTER, "季赛冠军 — champion of a quarterly final"),
    ("annual_final_champion", MASTER, "年赛冠军 — champion of the annual final"),
    ("world_cup_80x", MASTER, "UNO世界杯 80× 中国代表 — China's #1, 80× stake, at month end"),
    ("world_cup_8x", MASTER, "UNO世界杯 8× 中国代表 — China's #1, 8× stake, at month end"),
    ("world_cup_1x", MASTER, "UNO世界杯 1× 中国代表 — China's #1, 1× classic, at month end"),
    ("national_championship", LIFETIME, "全国锦标赛冠军 — National Championship champion"),
    ("china_masters", LIFETIME, "中国大师赛冠军 — China Masters champion"),
)

#: Reminders go this many days before a Master term ends (SPEC §8).
REMINDER_DAYS = (30, 7)


# --- rules ---------------------------------------------------------------------------------


def rules_ensure_defaults(**kwargs: Any) -> None:
    """Create the default qualification rules that are missing; never changes existing ones
    (an admin's edits stay). Connected to ``post_migrate``; safe to run repeatedly."""
    if not migrated(kwargs, "titles.QualificationRule"):
        return
    for key, confers, description in DEFAULT_RULES:
        QualificationRule.objects.get_or_create(
            key=key, defaults={"confers": confers, "description": description}
        )


# --- integrity hooks -----------------------------------------------------------------------


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


def audit_is_clean(qualification: Qualification) -> bool:
    """Whether the integrity audit of the qualification's event has run and raised nothing
    against its player (SPEC §6: a grant is decidable only after the audit).

    Grants without an event (World Cup representation, manual entries) have no event audit;
    for those the reviewer's decision and ``player_is_held`` are the check.
    """
    code = (qualification.evidence or {}).get("event")
    if not code or not settings.TITLES_REQUIRE_EVENT_AUDIT:
        return True
    from integrity.services.audits import event_audit_is_clean
    from tournaments.models import Event

    event = Event.objects.filter(code=code).first()
    return event is not None and event_audit_is_clean(event, player=qualification.player)


# --- recording qualifications --------------------------------------------------------------


def _record(
    *,
    rule: QualificationRule,
    player: Player,
    on: date,
    source: str,
    evidence: dict[str, Any],
    by: User | None,
) -> tuple[Qualification, bool]:
    """Record a pending qualification; returns it and whether it was written."""
    with transaction.atomic():
        titles_lock([player.pk])
        existing = (
            Qualification.objects.select_for_update().filter(player=player, source=source).first()
        )
        if existing is None:
            created = Qualification.objects.create(
                player=player,
                source=source,
                rule=rule,
                on=on,
                confers=rule.confers,
                requires_valid_master=rule.requires_valid_master,
                evidence=evidence,
                created_by=by,
            )
            return created, True
        if existing.status != VOIDED or existing.revocation_id is not None:
            return existing, False
        # Withdrawn earlier (e.g. a corrected event) and achieved again: pending once more.
        existing.rule, existing.on, existing.evidence = rule, on, evidence
        existing.confers, existing.requires_valid_master = rule.confers, rule.requires_valid_master
        existing.status, existing.version = PENDING, existing.version + 1
        existing.decided_by, existing.decided_at, existing.decision_reason = None, None, ""
        existing.save()
        return existing, True


def achievement_record(
    *,
    achievement: str,
    player: Player,
    on: date,
    source: str,
    evidence: dict[str, Any],
    by: User | None,
) -> Qualification | None:
    """Record that ``player`` achieved ``achievement`` (a rule key) on ``on``, pending review.

    Returns ``None`` when no active rule has that key. Idempotent: the same player and
    source again returns the existing row unchanged — except a row voided by
    :func:`achievement_withdraw` (not by a sanction), which the same achievement makes
    pending again with the new date and evidence.
    """
    rule = QualificationRule.objects.filter(key=achievement, active=True).first()
    if rule is None:
        return None
    qualification, _ = _record(
        rule=rule, player=player, on=on, source=source, evidence=evidence, by=by
    )
    return qualification


def achievement_withdraw(*, source: str, player: Player, by: User | None, reason: str) -> None:
    """Void the player's qualification from ``source`` (its event was corrected) and
    recompute their titles. Nothing happens when there is none or it is already void."""
    with transaction.atomic():
        titles = titles_lock([player.pk])
        qualification = (
            Qualification.objects.select_for_update().filter(player=player, source=source).first()
        )
        if qualification is None or qualification.status == VOIDED:
            return
        Qualification.objects.filter(pk=qualification.pk).update(
            status=VOIDED,
            version=F("version") + 1,
            decided_by=by,
            decided_at=timezone.now(),
            decision_reason=reason,
        )
        titles_recompute(titles=titles, by=by, reason=reason)


def qualification_enter(
    *,
    player: Player,
    rule: QualificationRule,
    on: date,
    source: str,
    evidence: dict[str, Any],
    reason: str,
    by: User,
) -> Qualification:
    """A reviewer's manual entry (an achievement outside the system's events), pending
    review like every grant. Its source is ``manual:<source>``."""
    if not reason.strip():
        raise ServiceError("A manual qualification needs a reason.")
    if not rule.active:
        raise ServiceError(f"Rule {rule.key!r} is not active.")
    if on > tour_today():
        raise ServiceError(f"A qualification cannot be dated in the future ({on}).")
    full_source = f"manual:{source}"
    qualification, written = _record(
        rule=rule,
        player=player,
        on=on,
        source=full_source,
        evidence={**evidence, "reason": reason},
        by=by,
    )
    if not written:
        raise ConflictError(
            f"{player.external_id} already has a qualification from {full_source!r}.",
            detail={"id": qualification.pk},
        )
    return qualification


# --- World Cup representation ----------------------------------------------------------------


def _world_cup_source(year: int, month: int, ranking: str) -> str:
    return f"world_cup:{year}-{month:02d}:{ranking}"


def _world_cup_record(representative: WorldCupRepresentative) -> bool:
    rule = QualificationRule.objects.filter(
        key=f"world_cup_{representative.ranking}", active=True
    ).first()
    if rule is None:
        return False
    _, written = _record(
        rule=rule,
        player=representative.player,
        on=month_end(representative.year, representative.month),
        source=_world_cup_source(representative.year, representative.month, representative.ranking),
        evidence={
            "world_cup": f"{representative.year}-{representative.month:02d}",
            "ranking": representative.ranking,
        },
        by=None,
    )
    return written


def world_cup_representative_enter(
    *, year: int, month: int, ranking: str, player: Player, by: User
) -> WorldCupRepresentative:
    """Enter (or correct) China's #1 of a World Cup stake ranking for a month.

    For a month that has already ended the qualification is recorded at once; correcting
    the player then withdraws the previous player's qualification.
    """
    if not 1 <= month <= 12:
        raise ServiceError(f"No month {month}.")
    if ranking not in StakeRanking.values:
        raise ServiceError(f"Unknown stake ranking {ranking!r}.", detail=StakeRanking.values)
    with transaction.atomic():
        representative = (
            WorldCupRepresentative.objects.select_for_update()
            .filter(year=year, month=month, ranking=ranking)
            .first()
        )
        previous = representative.player if representative is not None else None
        titles_lock([player.pk] + ([previous.pk] if previous is not None else []))
        if representative is None:
            representative = WorldCupRepresentative.objects.create(
                year=year, month=month, ranking=ranking, player=player, entered_by=by
            )
        elif previous is not None and previous.pk != player.pk:
            representative.player, representative.entered_by = player, by
            representative.entered_at = timezone.now()
            representative.save()
        else:
            return representative
        if month_end(year, month) < tour_today():
            if previous is not None:
                achievement_withdraw(
                    source=_world_cup_source(year, month, ranking),
                    player=previous,
                    by=by,
                    reason="World Cup representative corrected",
                )
            _world_cup_record(representative)
        return representative


def world_cup_snapshot(*, year: int | None = None, month: int | None = None) -> int:
    """Turn a month's World Cup representatives (default: last month's) into Master
    qualifications dated the last day of the month, pending review. Only for a month that
    has ended (Asia/Shanghai); idempotent. Returns the number of qualifications recorded."""
    if year is None or month is None:
        first = tour_today().replace(day=1)
        last_month = first - timedelta(days=1)
        year, month = last_month.year, last_month.month
    if month_end(year, month) >= tour_today():
        raise ServiceError(f"{year}-{month:02d} has not ended yet (Asia/Shanghai).")
    representatives = WorldCupRepresentative.objects.filter(year=year, month=month)
    return sum(
        _world_cup_record(r) for r in representatives.select_related("player").order_by("ranking")
    )


# --- International Master --------------------------------------------------------------------


def international_master_enter(
    *,
    player: Player,
    granted_on: date,
    valid_until: date | None,
    source: str,
    by: User,
) -> InternationalMaster:
    """Record an International Master (国际大师) title; never touches the national titles."""
    if valid_until is not None and valid_until < granted_on:
        raise ServiceError("valid_until is before granted_on.")
    with transaction.atomic():
        if InternationalMaster.objects.filter(player=player, source=source).exists():
            raise ConflictError(f"{player.external_id} already has {source!r} recorded.")
        return InternationalMaster.objects.create(
            player=player,
            granted_on=granted_on,
            valid_until=valid_until,
            source=source,
            entered_by=by,
        )


# --- review ----------------------------------------------------------------------------------


def _decide(
    *,
    qualification: Qualification,
    to: str,
    allowed_from: tuple[str, ...],
    by: User | None,
    reason: str,
    expected_version: int,
) -> Qualification:
    with transaction.atomic():
        titles = titles_lock([qualification.player_id])
        if to == APPROVED:
            if player_is_held(qualification.player):
                raise ConflictError(
                    "The player has an open integrity case: their grants are held.",
                    detail={"reason": "held"},
                )
            if not audit_is_clean(qualification):
                raise ConflictError(
                    "The integrity audit of this grant's event has not cleared it.",
                    detail={"reason": "audit"},
                )
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
    *, qualification: Qualification, by: User | None, reason: str, expected_version: int
) -> Qualification:
    """Approve a pending (or rejected) grant: it counts from now on."""
    return _decide(
        qualification=qualification,
        to=APPROVED,
        allowed_from=(PENDING, REJECTED),
        by=by,
        reason=reason,
        expected_version=expected_version,
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
    *, items: Sequence[tuple[int, int]], by: User | None, reason: str
) -> BulkOutcome:
    """Approve ``(id, expected_version)`` pairs, each in its own transaction; a refused one
    (held, not audited, decided by someone else) does not stop the others."""
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
            )
        except ServiceError as exc:
            outcome.refused.append((pk, exc.code, exc.message))
        else:
            outcome.approved.append(pk)
    return outcome


def qualifications_auto_approve() -> int:
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
            )
        except ConflictError:
            logger.info("auto-approval skipped qualification %s", qualification.pk)
            continue
        approved += 1
    return approved


# --- revocation ----------------------------------------------------------------------------


def _revocation_source(revocation: Revocation) -> str:
    return revocation.case_ref or f"revocation:{revocation.pk}"


def titles_revoke(
    *, player: Player, on: date, by: User | None, reason: str, case_ref: str = ""
) -> None:
    """A sanction (SPEC §6, §7): take every national title, Lifetime included, by voiding
    the player's pending and approved qualifications dated up to ``on``. The revocation
    remembers them and their statuses, so :func:`titles_restore` can undo it exactly.
    International Master records are untouched."""
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
        revoked = TitleChange.objects.create(
            player=player,
            kind=ChangeKind.REVOKED,
            on=on,
            source=_revocation_source(revocation),
            by=by,
            reason=reason,
        )
        titles_webhooks_emit([revoked])  # before the recompute: it shows what was taken
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
        TitleChange.objects.create(
            player=player,
            kind=ChangeKind.RESTORED,
            on=tour_today(),
            source=_revocation_source(locked),
            by=by,
            reason=reason,
        )
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


# --- daily jobs (SPEC §8) ------------------------------------------------------------------


def titles_expire(*, today: date | None = None) -> int:
    """The daily expiry sweep: Master terms whose ``valid_until`` has passed (Asia/Shanghai)
    become lapsed, their holders' status too, and each lapse is written to the history once.
    Idempotent; returns the number of terms that lapsed."""
    today = today or tour_today()
    ended = TitleTerm.objects.filter(state=TermState.CURRENT, valid_until__lt=today)
    player_ids = sorted(set(ended.values_list("player_id", flat=True)))
    now = timezone.now()
    with transaction.atomic():
        titles_lock(player_ids)
        terms = list(ended.filter(player_id__in=player_ids).order_by("player_id", "start"))
        live = set(
            TitleChange.objects.filter(
                player_id__in=player_ids,
                kind=ChangeKind.LAPSED,
                retraction__isnull=True,
            ).values_list("player_id", "on", "source")
        )
        lapses = TitleChange.objects.bulk_create(
            [
                TitleChange(
                    player_id=term.player_id,
                    kind=ChangeKind.LAPSED,
                    on=term.valid_until + timedelta(days=1),
                    source=term.sources[-1],
                    valid_until=term.valid_until,
                    at=now,
                    reason="expiry sweep",
                )
                for term in terms
                if (term.player_id, term.valid_until + timedelta(days=1), term.sources[-1])
                not in live
            ]
        )
        titles_webhooks_emit(lapses)
        TitleTerm.objects.filter(pk__in=[term.pk for term in terms]).update(
            state=TermState.LAPSED, updated_at=now
        )
        PlayerTitle.objects.filter(
            player_id__in=player_ids, status=TitleStatus.MASTER, valid_until__lt=today
        ).update(status=TitleStatus.LAPSED, updated_at=now)
    return len(terms)


def _reminder_text(term: TitleTerm, days: int) -> tuple[str, str]:
    until = term.valid_until.isoformat()
    subject = f"UNO中国大师头衔将于 {until} 到期 / Your UNO China Master title ends {until}"
    body = (
        f"{term.player.name}，您好：\n\n"
        f"您的UNO中国大师头衔有效期至 {until}（北京时间，含当日），还有 {days} 天以内到期。"
        "有效期内再次达成任一大师资格，将自动延长1年。\n"
        f"验证码 / verification code: {term.code}\n\n"
        f"Your UNO China Master title is valid through {until} (Asia/Shanghai). "
        "Reaching any Master qualification before then extends it by one year.\n"
    )
    return subject, body


def titles_remind(*, today: date | None = None) -> int:
    """Remind holders 30 and 7 days before their Master term ends (SPEC §8), once each:
    a :class:`Notification` row per (term, end day, threshold) guards the e-mail. A term
    first seen with 7 days or fewer left gets only the 7-day reminder; Lifetime Masters get
    none. Returns the number of reminders recorded."""
    today = today or tour_today()
    horizon = today + timedelta(days=max(REMINDER_DAYS))
    terms = (
        TitleTerm.objects.filter(
            state=TermState.CURRENT, valid_until__gte=today, valid_until__lte=horizon
        )
        .exclude(player__title__status=TitleStatus.LIFETIME)
        .select_related("player__user")
        .order_by("valid_until", "id")
    )
    sent = 0
    for term in terms:
        left = (term.valid_until - today).days
        days = min(d for d in REMINDER_DAYS if d >= left)
        user = term.player.user
        email = user.email if user is not None else ""
        with transaction.atomic():
            _, created = Notification.objects.get_or_create(
                player=term.player,
                term=term,
                valid_until=term.valid_until,
                days=days,
                defaults={"email": email},
            )
            if created and email:
                subject, body = _reminder_text(term, days)
                send_mail(subject, body, None, [email])
        sent += created
    return sent
