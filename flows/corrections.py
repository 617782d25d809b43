"""Corrections across apps (SPEC §4 "Corrections after finalisation", §6, §7 sanctions):
void / restore / fix games → re-freeze the event → move the champion's title → mark the fed
event when it was already played; the organiser's replay carries the chain on.

Each flow runs the tournaments correction (``tournaments.services.corrections``: the seats,
the standings, and for a finalised event its champion, advancement and the fed event's
entries, logged as ``Correction`` rows) and, in the same transaction, moves the champion's
title qualification of every event whose champion changed
(``flows.finalisation.champion_title_move``: withdrawn from the old champion, recorded for
the new one). Once it commits, the ratings are replayed
(``ratings.tasks.ratings_replay_on_commit``): a voided game stops counting at once, not at
the nightly replay. Integrity's sanctions and appeals call ``player_games_void`` and
``player_games_restore``; the organiser's API calls the game corrections.

``event_field_change_resolve`` is the organiser's decision about a marked event
(``tournaments.services.cascade``: replay it on its new field, or keep its result) with the
titles side of a replayed champion. ``preview`` runs any of these and rolls it back: the
plan (per step, the event and the diff — entries, champion, advancement, the next event
marked or not, the qualification moved) exactly as applying it would log it, with nothing
written.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.db import transaction

from accounts.models import Player, User
from flows.finalisation import champion_title_move
from flows.notices import advancement_notices
from ratings.tasks import ratings_replay_on_commit
from tournaments.models import Correction, Event, Game
from tournaments.services import cascade, corrections

__all__ = [
    "event_field_change_resolve",
    "game_fix",
    "game_restore",
    "game_void",
    "player_games_restore",
    "player_games_void",
    "preview",
]


def _titles_follow(done: Sequence[Correction], *, by: User | None, reason: str) -> None:
    """Move the title of every event whose champion changed, and add the move to its log;
    tell the players a re-freeze made advance (``flows.notices``: once per event and player,
    so one who advanced before and again now is not told twice)."""
    for correction in done:
        if (correction.diff.get("advanced") or {}).get("added"):
            advancement_notices(correction.event)
        change = corrections.champion_change(correction)
        if change is None or not correction.event.champion_achievement:
            continue
        champion_title_move(
            event=correction.event, before=change[0], after=change[1], by=by, reason=reason
        )
        correction.diff["qualifications"] = {
            "withdrawn": change[0].external_id if change[0] else None,
            "recorded": change[1].external_id if change[1] else None,
        }
        correction.save(update_fields=["diff"])


class _Preview(Exception):  # noqa: N818 - a control-flow signal, not an error
    def __init__(self, plan: list[dict[str, Any]]) -> None:
        super().__init__("preview")
        self.plan = plan


def preview(run: Callable[[], Correction | Sequence[Correction]]) -> list[dict[str, Any]]:
    """What ``run`` (a call of one of this module's flows) would change, with nothing
    written: it runs in a transaction that is rolled back (its after-commit work is
    dropped with it). One item per logged step: action, event code and diff."""
    try:
        with transaction.atomic():
            done = run()
            steps = [done] if isinstance(done, Correction) else list(done)
            raise _Preview(
                [
                    {"action": step.action, "event": step.event.code, "diff": step.diff}
                    for step in steps
                ]
            )
    except _Preview as result:
        return result.plan


def event_field_change_resolve(
    *, event: Event, decision: str, by: User | None, reason: str
) -> Correction:
    """The organiser's decision about ``event`` whose field a correction changed after it
    was played: ``replay`` (re-finalised on the new field, its champion's title moved, the
    next event's entries moved or marked) or ``keep`` (logged, nothing else changes)."""
    with transaction.atomic():
        correction = cascade.event_field_change_resolve(
            event=event, decision=decision, by=by, reason=reason
        )
        _titles_follow([correction], by=by, reason=reason)
    return correction


def game_void(*, game: Game, by: User | None, reason: str) -> Correction:
    """Void a game (every seat of it) and move what follows."""
    with transaction.atomic():
        correction = corrections.game_void(game=game, by=by, reason=reason)
        _titles_follow([correction], by=by, reason=reason)
        ratings_replay_on_commit()
    return correction


def game_restore(*, game: Game, by: User | None, reason: str) -> Correction:
    """Restore a voided game and move what follows."""
    with transaction.atomic():
        correction = corrections.game_restore(game=game, by=by, reason=reason)
        _titles_follow([correction], by=by, reason=reason)
        ratings_replay_on_commit()
    return correction


def game_fix(
    *, game: Game, hands: Mapping[str, Sequence[str]], by: User | None, reason: str
) -> Correction:
    """Replace a game's hands, re-score it and move what follows."""
    with transaction.atomic():
        correction = corrections.game_fix(game=game, hands=hands, by=by, reason=reason)
        _titles_follow([correction], by=by, reason=reason)
        ratings_replay_on_commit()
    return correction


def player_games_void(
    *, player: Player, events: Sequence[Event], by: User | None, reason: str
) -> list[Correction]:
    """Void every seat of ``player`` in ``events`` (an integrity sanction) and move what
    follows; one Correction per event that changed."""
    with transaction.atomic():
        done = corrections.player_games_void(player=player, events=events, by=by, reason=reason)
        _titles_follow(done, by=by, reason=reason)
        if done:
            ratings_replay_on_commit()
    return done


def player_games_restore(
    *, player: Player, events: Sequence[Event], by: User | None, reason: str
) -> list[Correction]:
    """Reverse ``player_games_void`` (an appeal upheld) and move what follows."""
    with transaction.atomic():
        done = corrections.player_games_restore(player=player, events=events, by=by, reason=reason)
        _titles_follow(done, by=by, reason=reason)
        if done:
            ratings_replay_on_commit()
    return done
