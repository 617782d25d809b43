"""Who may enter an event (SPEC §2): every player enters a weekly qualifier automatically
(``Event.open_entry``, no rows); every later event takes only the players who advanced to it
(``Entry`` rows written by finalisation, ``tournaments.services.finalise``) or whom an
organiser invited (championships, wild cards) — ``entry_invite`` here.

An invitation never downgrades an existing entry: a player who already advanced keeps that
basis. Inviting a player twice changes nothing the second time.
"""

from collections.abc import Sequence

from django.db import transaction
from django.utils.translation import gettext as _

from accounts.models import Player, User
from core.errors import ConflictError, ServiceError
from tournaments.models import CalendarChange, Entry, Event, EventStatus


def entry_invite(
    *, event: Event, players: Sequence[Player], by: User | None, reason: str
) -> list[Entry]:
    """Invite players into an event with a closed entry; returns the entries created."""
    if not reason.strip():
        raise ServiceError(
            "give a reason for the invitation",
            detail={"reason": "required"},
            say=_("邀请须写明理由。"),
        )
    if not players:
        raise ServiceError(
            "name at least one player",
            detail={"players": "required"},
            say=_("请至少填一名选手。"),
        )
    with transaction.atomic():
        locked = Event.objects.select_for_update().get(pk=event.pk)
        if locked.open_entry:
            raise ServiceError(
                f"event {locked.code} is open to every player; nobody needs an invitation",
                say=_("赛事 %(code)s 对所有选手开放，无需邀请。") % {"code": locked.code},
            )
        if locked.status != EventStatus.SCHEDULED:
            closed = (
                _("赛事 %(code)s 已取消，不再接受参赛。")
                if locked.status == EventStatus.CANCELLED
                else _("赛事 %(code)s 已定结果，不再接受参赛。")
            )
            raise ConflictError(
                f"event {locked.code} is {locked.status}; entries are closed",
                say=closed % {"code": locked.code},
            )
        wanted = {player.pk: player for player in players}
        existing = set(
            Entry.objects.filter(event=locked, player_id__in=wanted).values_list(
                "player_id", flat=True
            )
        )
        new = [
            Entry(event=locked, player=player, basis=Entry.Basis.INVITED, reason=reason[:200])
            for pk, player in sorted(wanted.items())
            if pk not in existing
        ]
        Entry.objects.bulk_create(new)
        if new:
            CalendarChange.objects.create(
                season_id=locked.season_id,
                event=locked,
                action=CalendarChange.Action.INVITE,
                by=by,
                reason=reason,
                diff={"players": [entry.player.external_id for entry in new]},
            )
    return new
