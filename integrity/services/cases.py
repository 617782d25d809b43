"""The case workflow (SPEC §7: "a reviewer decides (dismiss, or sanction: void games, withhold
or revoke titles of beneficiaries and helpers, suspend); a sanctioned player may appeal;
every step is logged"; SPEC §6: a sanction takes every national title, Lifetime included,
and voids the player's qualifications up to the sanction date).

Every step is one transaction that locks the case row first (``select_for_update``) and
checks the version the caller saw (``expected_version``, default the version of the case
object passed in): of two reviewers acting on one case at once, one wins and the other gets
a ``ConflictError`` (HTTP 409). The step bumps the version and writes a ``CaseEvent`` with
who, when, why and what, and the same as one structured log line (logger
``unotour.integrity``, ``core.logs``) once it commits. Only reviewers
(``accounts.roles.REVIEWER``) act.

* :func:`case_take` — a reviewer takes an open case (``assigned_to``).
* :func:`case_dismiss` — closes an open case; its players are ``cleared``.
* A sanction and an appeal decision change other apps (games voided or restored, titles
  revoked or restored), so they run as flows (:mod:`flows.sanctions`), each in one
  transaction: :func:`case_sanction_open` checks the sanction and locks the case, the flow
  revokes titles and voids games per decision, :func:`case_sanction_record` writes a
  ``Sanction`` row per player (the corrections and the revocation that undo it exactly)
  and marks the case ``sanctioned``.
* :func:`appeal_file` — a sanctioned player appeals (one pending appeal per player); the
  case is locked and its version bumped, but not checked: the player saw no version (a
  reviewer recording the appeal from the case page passes the version they saw, checked).
* :func:`appeal_decide_open` — by a reviewer other than the one who sanctioned (else
  :class:`SameReviewerError`, nothing written); upheld, the flow undoes every sanction of
  the case and :func:`appeal_decide_record` marks the case ``reversed``; rejected, the
  sanction stands.

A suspension is enforced at ingest (:func:`flows.ingest.games_ingest`): the suspended
player's games from the sanction's day on are rejected, naming the case, until an appeal
reverses it.
"""

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.models import Player, User
from accounts.roles import REVIEWER, has_role
from core.clock import tour_today
from core.errors import ConflictError, ServiceError
from core.logs import log_event_on_commit
from integrity.models import Appeal, Case, CaseEvent, CasePlayer, Sanction
from titles.models import Revocation
from tournaments.models import Event

logger = logging.getLogger("unotour.integrity")

Role = CasePlayer.Role


class ReviewerOnlyError(ServiceError):
    status = 403
    code = "forbidden"


class SameReviewerError(ServiceError):
    status = 403
    code = "same_reviewer"


@dataclass(frozen=True)
class Decision:
    """What a sanction does to one player of the case."""

    player: Player
    role: str
    void_games: bool = False
    events: tuple[Event, ...] = ()
    revoke_titles: bool = False
    suspend: bool = False


def _need_reviewer(by: User | None) -> User:
    if by is None or not has_role(by, REVIEWER):
        raise ReviewerOnlyError("Integrity cases are decided by title reviewers only.")
    return by


def _need_reason(reason: str, what: str) -> None:
    if not reason.strip():
        raise ServiceError(f"{what} needs a reason", detail={"reason": "required"})


def _locked(case: Case, expected_version: int | None) -> Case:
    locked = Case.objects.select_for_update().get(pk=case.pk)
    expected = case.version if expected_version is None else expected_version
    if locked.version != expected:
        raise ConflictError(
            f"Case {locked.pk} is at version {locked.version}, not {expected}: someone acted "
            "on it first, reload it.",
            detail={"reason": "stale", "status": locked.status, "version": locked.version},
        )
    return locked


def _need_status(case: Case, *allowed: str) -> None:
    if case.status not in allowed:
        raise ConflictError(
            f"Case {case.pk} is {case.status}.", detail={"reason": "status", "status": case.status}
        )


def _log(case: Case, action: str, by: User | None, reason: str, **data: Any) -> CaseEvent:
    """The step in the case's history, and as a structured log line on commit."""
    log_event_on_commit(
        logger,
        logging.WARNING if action == CaseEvent.Action.SANCTIONED else logging.INFO,
        f"case_{action}",
        case=case.pk,
        by=by.username if by else None,
        reason=reason,
        **data,
    )
    return CaseEvent.objects.create(case=case, action=action, by=by, reason=reason, data=data)


def _save(case: Case, *fields: str) -> None:
    case.version += 1
    case.save(update_fields=[*fields, "version"])


def case_take(*, case: Case, by: User, expected_version: int | None = None) -> Case:
    """Take an open case for review (or take it over from another reviewer)."""
    _need_reviewer(by)
    with transaction.atomic():
        locked = _locked(case, expected_version)
        _need_status(locked, Case.Status.OPEN)
        previous = locked.assigned_to_id
        locked.assigned_to = by
        _save(locked, "assigned_to")
        _log(locked, CaseEvent.Action.TAKEN, by, "", previous=previous)
    return locked


def case_dismiss(*, case: Case, by: User, reason: str, expected_version: int | None = None) -> Case:
    """Close an open case without a sanction; its players are cleared."""
    _need_reviewer(by)
    _need_reason(reason, "A dismissal")
    with transaction.atomic():
        locked = _locked(case, expected_version)
        _need_status(locked, Case.Status.OPEN)
        locked.status, locked.decided_by, locked.decided_at = (
            Case.Status.DISMISSED,
            by,
            timezone.now(),
        )
        _save(locked, "status", "decided_by", "decided_at")
        CasePlayer.objects.filter(case=locked).update(role=Role.CLEARED)
        _log(locked, CaseEvent.Action.DISMISSED, by, reason)
    return locked


def _decision(item: Decision | Mapping[str, Any]) -> Decision:
    if isinstance(item, Decision):
        return item
    return Decision(
        player=item["player"],
        role=item["role"],
        void_games=bool(item.get("void_games", False)),
        events=tuple(item.get("events", ())),
        revoke_titles=bool(item.get("revoke_titles", False)),
        suspend=bool(item.get("suspend", False)),
    )


def _check_decisions(case: Case, decisions: Sequence[Decision]) -> None:
    if not decisions:
        raise ServiceError("A sanction names at least one player.", detail={"decisions": []})
    members = set(CasePlayer.objects.filter(case=case).values_list("player_id", flat=True))
    seen: set[int] = set()
    for d in decisions:
        key = d.player.external_id
        if d.player.pk not in members:
            raise ServiceError(f"{key} is not a player of case {case.pk}.", detail={"player": key})
        if d.player.pk in seen:
            raise ServiceError(f"{key} is named twice.", detail={"player": key})
        seen.add(d.player.pk)
        if d.role not in (Role.BENEFICIARY, Role.HELPER):
            raise ServiceError(
                f"{key}: the role is beneficiary or helper, not {d.role!r}.",
                detail={"player": key, "role": d.role},
            )
        if d.void_games and not d.events:
            raise ServiceError(
                f"{key}: name the events whose games are voided.", detail={"player": key}
            )
        if not (d.void_games or d.revoke_titles or d.suspend):
            raise ServiceError(
                f"{key}: a sanction voids games, revokes titles or suspends.",
                detail={"player": key},
            )


@dataclass(frozen=True)
class SanctionOrder:
    """A sanction checked, its case locked: what :func:`flows.sanctions.case_sanction` carries
    out (each decision's titles and games) before :func:`case_sanction_record` records it."""

    case: Case
    decisions: tuple[Decision, ...]
    on: date
    case_ref: str


@dataclass(frozen=True)
class Sanctioned:
    """One decision carried out: the revocation of the player's titles (if any) and the ids
    of the corrections that voided their games."""

    decision: Decision
    revocation: Revocation | None
    corrections: list[int]


def case_sanction_open(
    *,
    case: Case,
    by: User,
    reason: str,
    decisions: Sequence[Decision | Mapping[str, Any]],
    expected_version: int | None = None,
) -> SanctionOrder:
    """Check a sanction of an open case and lock the case, in the caller's transaction
    (module docstring); the decisions in player order, dated today (Asia/Shanghai)."""
    _need_reviewer(by)
    _need_reason(reason, "A sanction")
    checked = sorted((_decision(item) for item in decisions), key=lambda d: d.player.pk)
    locked = _locked(case, expected_version)
    _need_status(locked, Case.Status.OPEN)
    _check_decisions(locked, checked)
    return SanctionOrder(locked, tuple(checked), tour_today(), f"integrity-case-{locked.pk}")


def case_sanction_record(
    *, order: SanctionOrder, by: User, reason: str, done: Sequence[Sanctioned]
) -> Case:
    """Record the carried-out sanction: a ``Sanction`` row per player (what undoes it on
    appeal), the players' roles, the case ``sanctioned`` and the step logged."""
    locked = order.case
    logged = []
    for item in done:
        d = item.decision
        sanction = Sanction.objects.create(
            case=locked,
            player=d.player,
            role=d.role,
            effective_on=order.on,
            void_games=d.void_games,
            revoke_titles=d.revoke_titles,
            suspend=d.suspend,
            revocation=item.revocation,
            corrections=list(item.corrections),
            decided_by=by,
            reason=reason,
        )
        sanction.events.set(d.events)
        CasePlayer.objects.filter(case=locked, player=d.player).update(role=d.role)
        logged.append(
            {
                "sanction": sanction.pk,
                "player": d.player.external_id,
                "role": d.role,
                "events": sorted(event.code for event in d.events),
                "corrections": sanction.corrections,
                "revocation": item.revocation.pk if item.revocation else None,
                "suspend": d.suspend,
            }
        )
    locked.status, locked.decided_by, locked.decided_at = (
        Case.Status.SANCTIONED,
        by,
        timezone.now(),
    )
    _save(locked, "status", "decided_by", "decided_at")
    _log(locked, CaseEvent.Action.SANCTIONED, by, reason, sanctions=logged)
    return locked


def appeal_file(
    *,
    case: Case,
    player: Player,
    statement: str,
    by: User | None = None,
    expected_version: int | None = None,
) -> Appeal:
    """A sanctioned player's appeal (recorded by a reviewer when ``by`` is given; checked
    against the version that reviewer saw when ``expected_version`` is given)."""
    if by is not None:
        _need_reviewer(by)
    _need_reason(statement, "An appeal")
    with transaction.atomic():
        # The player's act: locked, but checked against a version only when a reviewer
        # recording it says which one they saw (the player saw none).
        if expected_version is None:
            locked = Case.objects.select_for_update().get(pk=case.pk)
        else:
            locked = _locked(case, expected_version)
        _need_status(locked, Case.Status.SANCTIONED)
        if not Sanction.objects.filter(
            case=locked, player=player, reversed_at__isnull=True
        ).exists():
            raise ServiceError(
                f"{player.external_id} holds no sanction of case {locked.pk}.",
                detail={"player": player.external_id},
            )
        if Appeal.objects.filter(case=locked, player=player, status=Appeal.Status.PENDING).exists():
            raise ConflictError(
                f"{player.external_id} already has a pending appeal of case {locked.pk}.",
                detail={"player": player.external_id},
            )
        appeal = Appeal.objects.create(case=locked, player=player, statement=statement)
        _save(locked)
        _log(
            locked,
            CaseEvent.Action.APPEALED,
            by,
            statement[:500],
            appeal=appeal.pk,
            player=player.external_id,
        )
    return appeal


@dataclass(frozen=True)
class AppealOrder:
    """An appeal decision checked, its case and appeal locked: the sanctions to undo (upheld:
    every one of the case still in force, in player order; rejected: none), which
    :func:`flows.sanctions.appeal_decide` undoes before :func:`appeal_decide_record`."""

    case: Case
    appeal: Appeal
    upheld: bool
    sanctions: tuple[Sanction, ...]


def appeal_decide_open(
    *, appeal: Appeal, by: User, upheld: bool, reason: str, expected_version: int | None = None
) -> AppealOrder:
    """Check an appeal decision and lock its case and appeal, in the caller's transaction;
    never by the reviewer who sanctioned (module docstring)."""
    _need_reviewer(by)
    _need_reason(reason, "An appeal decision")
    case = Case.objects.select_for_update().get(pk=appeal.case_id)
    if expected_version is not None and case.version != expected_version:
        raise ConflictError(
            f"Case {case.pk} is at version {case.version}, not {expected_version}.",
            detail={"reason": "stale", "status": case.status, "version": case.version},
        )
    locked = Appeal.objects.select_for_update().get(pk=appeal.pk)
    if locked.status != Appeal.Status.PENDING:
        raise ConflictError(f"Appeal {locked.pk} is already {locked.status}.")
    if case.decided_by_id == by.pk:
        raise SameReviewerError(
            "The reviewer who sanctioned cannot decide the appeal: another reviewer must.",
            detail={"case": case.pk, "sanctioned_by": by.username},
        )
    sanctions: tuple[Sanction, ...] = ()
    if upheld:
        in_force = case.sanctions.filter(reversed_at__isnull=True).order_by("player_id")
        sanctions = tuple(in_force.select_related("player", "revocation"))
    return AppealOrder(case, locked, upheld, sanctions)


def appeal_decide_record(
    *, order: AppealOrder, by: User, reason: str, restored: Mapping[int, list[int]]
) -> Appeal:
    """Record the decision: upheld, each sanction reversed (``restored``: the ids of the
    corrections that restored its games, by sanction id), the case ``reversed`` and the
    case's other pending appeals upheld with it; rejected, the sanction stands. The appeal
    is decided and the step logged."""
    case, locked, now = order.case, order.appeal, timezone.now()
    if order.upheld:
        undone = []
        for sanction in order.sanctions:
            sanction.reversed_at = now
            sanction.save(update_fields=["reversed_at"])
            undone.append(
                {
                    "sanction": sanction.pk,
                    "player": sanction.player.external_id,
                    "corrections": restored.get(sanction.pk, []),
                    "revocation": sanction.revocation_id,
                }
            )
        case.status = Case.Status.REVERSED
        _save(case, "status")
        Appeal.objects.filter(case=case, status=Appeal.Status.PENDING).exclude(pk=locked.pk).update(
            status=Appeal.Status.UPHELD,
            decided_by=by,
            decided_at=now,
            decision_reason=f"case reversed on appeal {locked.pk}",
        )
        _log(case, CaseEvent.Action.REVERSED, by, reason, appeal=locked.pk, restored=undone)
    else:
        _save(case)
        _log(case, CaseEvent.Action.APPEAL_REJECTED, by, reason, appeal=locked.pk)
    locked.status = Appeal.Status.UPHELD if order.upheld else Appeal.Status.REJECTED
    locked.decided_by, locked.decided_at, locked.decision_reason = by, now, reason
    locked.save(update_fields=["status", "decided_by", "decided_at", "decision_reason"])
    return locked
