"""Corrections across apps (SPEC §4 "Corrections after finalisation", §6, §7 sanctions):
void / restore / fix games → re-freeze the event → move the champion's title.

Each flow runs the tournaments correction (``tournaments.services.corrections``: the seats,
the standings, and for a finalised event its champion, advancement and the fed event's
entries, logged as ``Correction`` rows) and, in the same transaction, moves the champion's
title qualification of every event whose champion changed
(``flows.finalisation.champion_title_move``: withdrawn from the old champion, recorded for
the new one). Integrity's sanctions and appeals call ``player_games_void`` and
``player_games_restore``; the organiser's API calls the game corrections.
"""

from collections.abc import Mapping, Sequence

from django.db import transaction

from accounts.models import Player, User
from flows.finalisation import champion_title_move
from tournaments.models import Correction, Event, Game
from tournaments.services import corrections

__all__ = ["game_fix", "game_restore", "game_void", "player_games_restore", "player_games_void"]


def _titles_follow(done: Sequence[Correction], *, by: User | None, reason: str) -> None:
    for correction in done:
        change = corrections.champion_change(correction)
        if change is not None:
            champion_title_move(
                event=correction.event, before=change[0], after=change[1], by=by, reason=reason
            )


def game_void(*, game: Game, by: User | None, reason: str) -> Correction:
    """Void a game (every seat of it) and move what follows."""
    with transaction.atomic():
        correction = corrections.game_void(game=game, by=by, reason=reason)
        _titles_follow([correction], by=by, reason=reason)
    return correction


def game_restore(*, game: Game, by: User | None, reason: str) -> Correction:
    """Restore a voided game and move what follows."""
    with transaction.atomic():
        correction = corrections.game_restore(game=game, by=by, reason=reason)
        _titles_follow([correction], by=by, reason=reason)
    return correction


def game_fix(
    *, game: Game, hands: Mapping[str, Sequence[str]], by: User | None, reason: str
) -> Correction:
    """Replace a game's hands, re-score it and move what follows."""
    with transaction.atomic():
        correction = corrections.game_fix(game=game, hands=hands, by=by, reason=reason)
        _titles_follow([correction], by=by, reason=reason)
    return correction


def player_games_void(
    *, player: Player, events: Sequence[Event], by: User | None, reason: str
) -> list[Correction]:
    """Void every seat of ``player`` in ``events`` (an integrity sanction) and move what
    follows; one Correction per event that changed."""
    with transaction.atomic():
        done = corrections.player_games_void(player=player, events=events, by=by, reason=reason)
        _titles_follow(done, by=by, reason=reason)
    return done


def player_games_restore(
    *, player: Player, events: Sequence[Event], by: User | None, reason: str
) -> list[Correction]:
    """Reverse ``player_games_void`` (an appeal upheld) and move what follows."""
    with transaction.atomic():
        done = corrections.player_games_restore(player=player, events=events, by=by, reason=reason)
        _titles_follow(done, by=by, reason=reason)
    return done
