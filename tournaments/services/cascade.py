"""How a correction reaches the events after it (SPEC §4 "Corrections after finalisation":
"downstream" is the whole chain, and a played event is never silently rewritten).

A correction re-freezes the corrected event when it is finalised
(``tournaments.services.finalise.event_refreeze``), which moves the entries of the event it
feeds. That fed event then:

* **not played yet** (no game, not finalised): just has its new field; nothing of it was
  decided on the old one, so the chain stops there;
* **already played** (it has games or a finalised result): keeps its standings, ranking,
  champion and advancement, and is marked (``Event.field_changed_at`` and the correction
  that did it, ``field_changed_by``); the chain stops there until the organiser decides
  with ``event_field_change_resolve``:

  - ``replay``: the event's result is recomputed on its new field: the standings of players
    no longer entered are deleted (their seats stay, as played), and a finalised event is
    re-frozen on its games, which moves its champion, advancement and the next event's
    entries — and the chain goes on from there by the same rule;
  - ``keep``: its result stays as played; the decision and its reason are logged.

Each step is a ``Correction`` row (who, when, why, and the diff: per event the entries,
champion and advancement moved, and ``fed``: the next event, whether it was played and
whether it was marked). ``flows.corrections`` moves the champions' titles and offers the
preview (the same steps run and rolled back).
"""

from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import User
from core.errors import ConflictError, ServiceError
from tournaments.models import Correction, Entry, Event, EventStatus, Game, Standing
from tournaments.services.finalise import Outcome, event_refreeze

Decision = Correction.Action
DECISIONS = {"replay": Decision.REPLAY_FIELD, "keep": Decision.KEEP_FIELD}


def event_played(event: Event) -> bool:
    """Whether a result was decided on the event's field: it has games or is finalised."""
    return event.status == EventStatus.FINALISED or Game.objects.filter(event=event).exists()


def fed_field_mark(*, event: Event, outcome: Outcome, correction: Correction) -> dict[str, Any]:
    """After ``event`` was re-frozen by ``correction``: mark the event it feeds when its
    entries moved and it was already played. Returns the diff's ``fed`` part (empty when
    ``event`` feeds nothing or no entry moved)."""
    if event.feeds_id is None or not (outcome.entries_added or outcome.entries_removed):
        return {}
    fed = Event.objects.select_for_update(of=("self",)).get(pk=event.feeds_id)
    played = event_played(fed)
    if played:
        fed.field_changed_at = timezone.now()
        fed.field_changed_by = correction
        fed.save(update_fields=["field_changed_at", "field_changed_by"])
    return {"event": fed.code, "played": played, "field_changed": played}


def _replay(event: Event) -> tuple[dict[str, Any], Outcome | None]:
    """Recompute ``event`` (locked) on its current field."""
    diff: dict[str, Any] = {}
    advanced_gone: list[str] = []
    if not event.open_entry:
        entered = Entry.objects.filter(event=event).values("player_id")
        gone = Standing.objects.filter(event=event).exclude(player_id__in=entered)
        diff["standings_removed"] = sorted(gone.values_list("player_key", flat=True))
        advanced_gone = list(gone.filter(advanced=True).values_list("player_key", flat=True))
        gone.delete()
    outcome = None
    if event.status == EventStatus.FINALISED:
        outcome = event_refreeze(event=event)
        outcome.advanced_removed = sorted({*outcome.advanced_removed, *advanced_gone})
        diff.update(outcome.as_diff())
    else:
        Event.objects.filter(pk=event.pk).update(leaderboard_version=F("leaderboard_version") + 1)
    return diff, outcome


def event_field_change_resolve(
    *, event: Event, decision: str, by: User | None, reason: str
) -> Correction:
    """The organiser's decision about an event whose field a correction changed after it was
    played: ``replay`` it on the new field or ``keep`` its result (logged with ``reason``).
    Runs in the caller's transaction or its own; refused (nothing written) when the event
    has no field change waiting, the decision is unknown or no reason is given."""
    if decision not in DECISIONS:
        raise ServiceError(
            f"unknown decision {decision!r}: replay or keep", detail={"decision": decision}
        )
    if not reason.strip():
        raise ServiceError("give a reason for the decision", detail={"reason": "required"})
    with transaction.atomic():
        locked = (
            Event.objects.select_for_update(of=("self",)).select_related("season").get(pk=event.pk)
        )
        if locked.field_changed_at is None:
            raise ConflictError(f"{locked.code} has no field change to decide")
        diff: dict[str, Any] = {"origin": locked.field_changed_by_id}
        outcome = None
        if decision == "replay":
            replayed, outcome = _replay(locked)
            diff.update(replayed)
        locked.field_changed_at = None
        locked.field_changed_by = None
        locked.save(update_fields=["field_changed_at", "field_changed_by"])
        correction = Correction.objects.create(
            action=DECISIONS[decision], event=locked, by=by, reason=reason, diff=diff
        )
        if outcome is not None:
            fed = fed_field_mark(event=locked, outcome=outcome, correction=correction)
            if fed:
                correction.diff["fed"] = fed
                correction.save(update_fields=["diff"])
    return correction
