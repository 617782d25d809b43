"""Sanctions and appeals across apps (SPEC §7 "a reviewer decides (dismiss, or sanction: void
games, withhold or revoke titles of beneficiaries and helpers, suspend); a sanctioned player
may appeal"; SPEC §6 a sanction takes every national title, Lifetime included).

Each flow is one transaction: the integrity service checks the step and locks the case
(``integrity.services.cases``), this module changes the other apps, the integrity service
records the outcome. A refused step writes nothing.

* :func:`case_sanction` — per decision, in player order: titles revoked first
  (``titles.services.titles_revoke``, dated the sanction's day), then the player's games
  in the events named voided (:func:`flows.corrections.player_games_void`, which
  recomputes standings, champions and title qualifications downstream). Revoking first
  matters: a qualification voided by the revocation remembers it, so when the games come
  back on appeal the champion's qualification is restored with its old status instead of
  being recorded again as pending.
* :func:`appeal_decide` — upheld: per sanction of the case, its games restored
  (:func:`flows.corrections.player_games_restore`), then its revocation reversed
  (``titles.services.titles_restore``); the case is ``reversed``. Rejected: the sanction
  stands.
* Each sanctioned player is told, and each player whose sanction an upheld appeal reversed
  or whose appeal was rejected (``flows.notices``: public words, no reason or evidence), in
  the same transaction.
* :func:`case_sanction_preview` — what :func:`case_sanction` would do, with nothing
  written (as :func:`flows.corrections.preview`): the sanction run in a transaction that is
  rolled back (its after-commit work dropped with it), read before it is undone.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.db import transaction
from django.db.models import Max

from accounts.models import User
from flows.corrections import player_games_restore, player_games_void
from flows.notices import appeal_notices, sanction_notices
from integrity.models import Appeal, Case, Sanction
from integrity.services import cases
from integrity.services.cases import Decision, Sanctioned
from titles.models import PlayerTitle, Revocation, TitleChange
from titles.services import titles_restore, titles_revoke
from tournaments.models import Correction

__all__ = ["Decision", "SanctionPlan", "appeal_decide", "case_sanction", "case_sanction_preview"]


def _carry_out(
    decision: Decision, *, order: cases.SanctionOrder, by: User, reason: str
) -> Sanctioned:
    """One decision's titles revoked and games voided."""
    player, revocation = decision.player, None
    if decision.revoke_titles:
        titles_revoke(player=player, on=order.on, by=by, reason=reason, case_ref=order.case_ref)
        revocation = Revocation.objects.filter(
            player=player, case_ref=order.case_ref, restored_at__isnull=True
        ).first()
    corrections = []
    if decision.void_games:
        corrections = player_games_void(
            player=player, events=list(decision.events), by=by, reason=reason
        )
    return Sanctioned(decision, revocation, [c.pk for c in corrections])


def case_sanction(
    *,
    case: Case,
    by: User,
    reason: str,
    decisions: Sequence[Decision | Mapping[str, Any]],
    expected_version: int | None = None,
) -> Case:
    """Sanction players of an open case (module docstring); returns the case, sanctioned."""
    with transaction.atomic():
        order = cases.case_sanction_open(
            case=case,
            by=by,
            reason=reason,
            decisions=decisions,
            expected_version=expected_version,
        )
        done = [_carry_out(d, order=order, by=by, reason=reason) for d in order.decisions]
        sanctioned = cases.case_sanction_record(order=order, by=by, reason=reason, done=done)
        sanction_notices(sanctioned.sanctions.order_by("player_id", "pk"))
        return sanctioned


def appeal_decide(
    *, appeal: Appeal, by: User, upheld: bool, reason: str, expected_version: int | None = None
) -> Appeal:
    """Decide an appeal (module docstring); never by the reviewer who sanctioned."""
    with transaction.atomic():
        order = cases.appeal_decide_open(
            appeal=appeal, by=by, upheld=upheld, reason=reason, expected_version=expected_version
        )
        restored: dict[int, list[int]] = {}
        for sanction in order.sanctions:
            corrections = []
            if sanction.void_games:
                corrections = player_games_restore(
                    player=sanction.player,
                    events=list(sanction.events.order_by("pk")),
                    by=by,
                    reason=reason,
                )
            if sanction.revocation is not None:
                titles_restore(
                    player=sanction.player, revocation=sanction.revocation, by=by, reason=reason
                )
            restored[sanction.pk] = [c.pk for c in corrections]
        decided = cases.appeal_decide_record(order=order, by=by, reason=reason, restored=restored)
        appeal_notices(decided, order.sanctions)
        return decided


#: A player's titles at one moment: status, valid until, Lifetime since.
TitleState = tuple[str, date | None, date | None]


@dataclass(frozen=True)
class SanctionPlan:
    """What a sanction would change. ``steps``: each correction it would log, per player in
    the order of the sanction — ``player`` (external id), ``action``, ``event`` (code) and
    ``diff``, exactly as :func:`flows.corrections.preview` shows one; ``titles``: per
    player whose titles would change, ``(external id, before, after)``; ``changes``: the
    title history rows it would add, ``(external id, kind, on, the kind of the row a
    retraction retracts or "")`` (the players whose champion's qualification moves
    included)."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    titles: list[tuple[str, TitleState, TitleState]] = field(default_factory=list)
    changes: list[tuple[str, str, date, str]] = field(default_factory=list)


class _Rollback(Exception):  # noqa: N818 - a control-flow signal, not an error
    def __init__(self, plan: SanctionPlan) -> None:
        super().__init__("preview")
        self.plan = plan


def _titles_of(player_ids: list[int]) -> dict[int, TitleState]:
    rows = PlayerTitle.objects.filter(player_id__in=player_ids).values_list(
        "player_id", "status", "valid_until", "lifetime_since"
    )
    return {pid: (status, until, since) for pid, status, until, since in rows}


def case_sanction_preview(
    *,
    case: Case,
    by: User,
    reason: str,
    decisions: Sequence[Decision],
    expected_version: int | None = None,
) -> SanctionPlan:
    """What :func:`case_sanction` would do with these arguments (the same checks: a refused
    sanction raises the same error), with nothing written (module docstring)."""
    ids = [decision.player.pk for decision in decisions]
    none: TitleState = ("none", None, None)
    try:
        with transaction.atomic():
            before = _titles_of(ids)
            last = TitleChange.objects.aggregate(last=Max("pk"))["last"] or 0
            done = case_sanction(
                case=case,
                by=by,
                reason=reason,
                decisions=decisions,
                expected_version=expected_version,
            )
            after = _titles_of(ids)
            plan = SanctionPlan()
            sanctions = Sanction.objects.filter(case=done).select_related("player")
            for sanction in sanctions.order_by("player__external_id"):
                key = sanction.player.external_id
                steps = Correction.objects.filter(pk__in=sanction.corrections).select_related(
                    "event"
                )
                plan.steps.extend(
                    {"player": key, "action": c.action, "event": c.event.code, "diff": c.diff}
                    for c in steps.order_by("pk")
                )
                was, now = before.get(sanction.player_id, none), after.get(sanction.player_id, none)
                if was != now:
                    plan.titles.append((key, was, now))
            added = TitleChange.objects.filter(pk__gt=last).order_by("pk")
            plan.changes.extend(
                (key, kind, on, retracted or "")
                for key, kind, on, retracted in added.values_list(
                    "player__external_id", "kind", "on", "retracts__kind"
                )
            )
            raise _Rollback(plan)
    except _Rollback as result:
        return result.plan
