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
"""

from collections.abc import Mapping, Sequence
from typing import Any

from django.db import transaction

from accounts.models import User
from flows.corrections import player_games_restore, player_games_void
from integrity.models import Appeal, Case
from integrity.services import cases
from integrity.services.cases import Decision, Sanctioned
from titles.models import Revocation
from titles.services import titles_restore, titles_revoke

__all__ = ["Decision", "appeal_decide", "case_sanction"]


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
        return cases.case_sanction_record(order=order, by=by, reason=reason, done=done)


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
        return cases.appeal_decide_record(order=order, by=by, reason=reason, restored=restored)
