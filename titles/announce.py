"""Title changes announced in the writer's transaction (SPEC §6 history, §9 partners).

Every history row a titles write adds — by the recompute, or by a service itself (a
revocation and its restoration, the expiry sweep's lapses) — is announced once, in the
transaction that wrote it, as the :data:`title_changes_written` signal with the rows as
:data:`Announced` tuples. A change rolled back is therefore never seen by anyone outside.
Titles does not know who listens: ``flows.titles`` turns the rows of kinds partners
subscribe to into webhooks, with the public payload :func:`change_payloads` builds, and the
players' notices (``flows.notices``). A revoked or restored row is announced before the
recompute that follows it, so a revoked row's payload shows the titles the sanction takes.
"""

from collections.abc import Iterable
from datetime import date
from typing import Any

from django.dispatch import Signal

from accounts.models import Player
from titles.models import ChangeKind, PlayerTitle, TermState, TitleChange, TitleStatus, TitleTerm

#: A history row announced: (id, player id, kind, on, valid_until, source).
Announced = tuple[int, int, str, date, date | None, str]

#: Sent with ``changes`` (a list of :data:`Announced`, in id order) by every titles write
#: that adds history rows, inside its transaction. Receivers that raise abort the write.
title_changes_written = Signal()

_TERM_KINDS = (ChangeKind.GRANTED, ChangeKind.EXTENDED, ChangeKind.LAPSED)


def listening() -> bool:
    """Whether anyone receives announcements (if not, new history rows need no ids)."""
    return title_changes_written.has_listeners()


def announce(changes: list[Announced]) -> None:
    """Announce history rows just written (nothing when there are none)."""
    if changes:
        title_changes_written.send(sender=TitleChange, changes=changes)


def changes_announce(changes: Iterable[TitleChange]) -> None:
    """Announce history rows a service wrote itself (saved, so with an id)."""
    announce([(c.pk, c.player_id, c.kind, c.on, c.valid_until, c.source) for c in changes])


def change_payloads(changes: list[Announced]) -> list[dict[str, Any]]:
    """The public data of each change, in order: ``change_id``, ``on``, ``player``
    (``external_id``, ``name``), ``title`` (``master``, ``lifetime``; for a revocation the
    status it took), ``valid_until`` (the term's last day; for a revocation the latest
    term's) and ``sources`` (the term's qualifications up to this change; Lifetime: its
    qualification; revocation: its case). Reads the titles as they are now."""
    if not changes:
        return []
    pids = sorted({change[1] for change in changes})
    players = {
        pid: {"external_id": external_id, "name": name}
        for pid, external_id, name in Player.objects.filter(pk__in=pids).values_list(
            "pk", "external_id", "name"
        )
    }
    upto = _sources_upto(sorted({pid for _, pid, kind, *_ in changes if kind in _TERM_KINDS}))
    held = _held(sorted({pid for _, pid, kind, *_ in changes if kind == ChangeKind.REVOKED}))
    payloads = []
    for change_id, pid, kind, on, valid_until, source in changes:
        title, sources = TitleStatus.MASTER.value, upto.get((pid, source), [source])
        if kind == ChangeKind.LIFETIME:
            title = TitleStatus.LIFETIME.value
        elif kind == ChangeKind.REVOKED:
            title, valid_until = held.get(pid, (TitleStatus.NONE.value, None))
            sources = [source]
        payloads.append(
            {
                "change_id": change_id,
                "on": on.isoformat(),
                "player": players[pid],
                "title": title,
                "valid_until": valid_until.isoformat() if valid_until is not None else None,
                "sources": sources,
            }
        )
    return payloads


def _sources_upto(pids: list[int]) -> dict[tuple[int, str], list[str]]:
    """Per (player, source) of a live term: the term's sources up to that one."""
    upto: dict[tuple[int, str], list[str]] = {}
    if not pids:
        return upto
    terms = TitleTerm.objects.filter(
        player_id__in=pids, state__in=(TermState.CURRENT, TermState.LAPSED)
    ).values_list("player_id", "sources")
    for pid, sources in terms:
        for index, source in enumerate(sources):
            upto[(pid, source)] = sources[: index + 1]
    return upto


def _held(pids: list[int]) -> dict[int, tuple[str, date | None]]:
    """The players' title status and last valid day as materialised now."""
    if not pids:
        return {}
    rows = PlayerTitle.objects.filter(player_id__in=pids)
    return {
        pid: (status, until)
        for pid, status, until in rows.values_list("player_id", "status", "valid_until")
    }
