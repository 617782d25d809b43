"""Corrections across apps (SPEC §4 "Corrections after finalisation", §7 sanctions)."""

from collections.abc import Sequence

from accounts.models import Player, User
from tournaments.models import Correction, Event
from tournaments.services import corrections


def player_games_void(
    *, player: Player, events: Sequence[Event], by: User | None, reason: str
) -> list[Correction]:
    """Void every seat of ``player`` in ``events`` (an integrity sanction)."""
    return corrections.player_games_void(player=player, events=events, by=by, reason=reason)


def player_games_restore(
    *, player: Player, events: Sequence[Event], by: User | None, reason: str
) -> list[Correction]:
    """Reverse ``player_games_void`` (an appeal upheld)."""
    return corrections.player_games_restore(player=player, events=events, by=by, reason=reason)
