"""The players' strengths in Luce's winner draw, read from their game scores (SPEC §7).

"Better together" (:mod:`integrity.domain.together`) weighs each game a player decides
against the strangers at the table by the strangers' summed strength: against one strong
stranger a player wins less often than against one weak one, and taking the strangers as
alike lets a player who sits with few strangers (a trio of friends and one stranger) look
better together than apart.

A player's strength is ``exp(β (skill - m))``: ``skill`` his mean game score at the window's
tables (the audit's skills, :func:`~integrity.domain.audit.window_skills`), ``m`` the mean
of the window's players' skills, so a player without one (seen only in the window's
history) has strength 1, the strength of the mean skill. ``β`` is fitted by maximum
likelihood to the winners of the games that end with a player out (the winner's hand
empty; at most :data:`FIT_GAMES`, picked by game id), each won by seat ``i`` with
probability ``θ_i / Σ θ``: a game ended by the clock goes to the lightest hand, whatever
the odds. Newton's method on the concave log-likelihood, from ``β = 0``; with no such game,
``β = 0`` and every strength is 1.

Only the skills' scale is fitted, one number: a player's own wins are conditioned out of
his test, and the strangers' skills come from all their games of the window.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from integrity.domain.data import TableObs

__all__ = ["FIT_GAMES", "fit_scale", "luce_strengths"]

#: The most games ``β`` is fitted to: one number, known to a few parts in a thousand from
#: them, and the fit's time bounded whatever the window's size.
FIT_GAMES: Final = 20_000
_STEP_TOLERANCE: Final = 1e-10
_MAX_STEPS: Final = 50


def _out_games(
    tables: Iterable[TableObs], skills: Mapping[str, float], mean: float
) -> list[tuple[list[float], int]]:
    """The games ended by a player going out, at most :data:`FIT_GAMES` of them (every
    ``s``-th by :func:`zlib.crc32` of the game id when there are more, never by outcome):
    the centred skills in seat order, the winner."""
    out = [t for t in tables if len(t.winners) == 1 and t.hands[t.winners[0]] == 0]
    stride = -(-len(out) // FIT_GAMES)
    if stride > 1:
        out = [t for t in out if zlib.crc32(t.game_id.encode()) % stride == 0]
    return [([skills.get(p, mean) - mean for p in t.players], t.winners[0]) for t in out]


def fit_scale(games: list[tuple[list[float], int]]) -> float:
    """The maximum-likelihood ``β`` of Luce's winner draw with strengths ``exp(β x)`` over
    ``games`` (each: the seats' ``x`` and the winning seat); 0 without any."""
    beta, exp = 0.0, math.exp
    for _ in range(_MAX_STEPS):
        scores, informations = [], []
        for xs, winner in games:
            shift = max(beta * x for x in xs)
            weights = [exp(beta * x - shift) for x in xs]
            total = sum(weights)  # in seat order: the same whatever the games' order
            first = sum([w * x for w, x in zip(weights, xs, strict=True)]) / total
            second = sum([w * x * x for w, x in zip(weights, xs, strict=True)]) / total
            scores.append(xs[winner] - first)
            informations.append(second - first * first)
        # summed exactly (math.fsum), so the fit does not depend on the games' order
        gradient, curvature = math.fsum(scores), math.fsum(informations)
        if curvature <= 0.0:
            return beta
        step = gradient / curvature
        beta += step
        if abs(step) < _STEP_TOLERANCE:
            break
    return beta


def luce_strengths(skills: Mapping[str, float], tables: Sequence[TableObs]) -> dict[str, float]:
    """The strength ``exp(β (skill - m))`` (module docstring) of each player with a skill
    seated at ``tables`` (the window's skills hold every player of the window; the test
    looks up only these), ``β`` fitted to the games of ``tables`` that end with a player
    out."""
    if not skills:
        return {}
    mean = math.fsum(skills.values()) / len(skills)
    beta = fit_scale(_out_games(tables, skills, mean))
    seated = {player for table in tables for player in table.players}
    return {
        player: math.exp(beta * (skills[player] - mean)) for player in seated if player in skills
    }
