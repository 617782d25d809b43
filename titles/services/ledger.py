"""The qualification ledger (SPEC §6, §8): rules, recording achievements, withdrawing them,
manual entries and International Masters.

Every write here is atomic and takes the players' title locks first
(:func:`titles.recompute.titles_lock`, player id order), then the qualification rows (id
order); a write that changes which qualifications count recomputes the players' titles in
the same transaction (:func:`titles.recompute.titles_recompute`), which also writes the
history. A qualification is recorded ``pending``: it counts once approved
(:mod:`titles.services.review`).
"""

from datetime import date
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import Player, User
from core.clock import tour_today
from core.errors import ConflictError, ServiceError
from core.post_migrate import migrated
from titles.domain.replay import LIFETIME, MASTER
from titles.models import InternationalMaster, Qualification, QualificationRule, QualificationStatus
from titles.recompute import titles_lock, titles_recompute

PENDING = QualificationStatus.PENDING
APPROVED = QualificationStatus.APPROVED
REJECTED = QualificationStatus.REJECTED
VOIDED = QualificationStatus.VOIDED
#: The source prefix of a reviewer's manual entry (:func:`qualification_enter`).
MANUAL = "manual:"

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


def rules_ensure_defaults(**kwargs: Any) -> None:
    """Create the default qualification rules that are missing; never changes existing ones
    (an admin's edits stay). Connected to ``post_migrate`` (which also runs after a test
    flush, so the defaults are there in every test); safe to run repeatedly."""
    if not migrated(kwargs, "titles.QualificationRule"):
        return
    for key, confers, description in DEFAULT_RULES:
        QualificationRule.objects.get_or_create(
            key=key, defaults={"confers": confers, "description": description}
        )


def record_pending(
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
    qualification, _ = record_pending(
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
    full_source = f"{MANUAL}{source}"
    qualification, written = record_pending(
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
