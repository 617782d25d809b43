"""Game scores from the hand points left at the end of a game (SPEC §3).

Each function takes the hand points of every seat (see ``cards.hand_points``), in seat
order, and returns one integer score per seat in the same order. Scores are "higher is
better" throughout the tour, whatever the scoring.

- **Tour singles** (巡回赛单人, the tour's 2020 rules): the player with the lowest hand
  scores the sum of their margins over the others; every other player scores minus their
  own hand points. Hands ``[0, 12, 30, 50]`` score ``[92, -12, -30, -50]``.
  *Ties for the lowest hand (our decision):* every player tied for the lowest hand is a
  co-winner and scores the sum of their margins over all other players (0 to another
  co-winner), so co-winners score the same: ``[5, 5, 20]`` scores ``[15, 15, -20]``.
- **Tour doubles** (巡回赛双人, 2v2, ``teams[i]`` is 0 or 1): the winning team is the team
  of the lowest individual hand, as in the electronic game, where the team of the player
  who went out wins (not the team with the lower sum). Each winning player scores the
  losing team's total hand points; each losing player scores minus that same total.
  *Ties (our decision):* if players of both teams hold the lowest hand, the team with the
  lower total wins; if the totals are equal too, the game is a draw and everyone scores 0.
  Teams need not be the same size, but both must be present.
- **Cumulative** (累积法): the winner (lowest hand) scores the sum of the other players'
  hands; everyone else scores 0. *Ties (our decision):* each co-winner scores the sum of
  the non-winners' hands; when every hand is equal everyone scores 0.
- **Penalty** (淘汰法): each player keeps their own hand points, low is good. Stored
  "higher is better" like every other score, a player's score is *minus* their own hand
  points (``[0, 12, 30]`` scores ``[0, -12, -30]``).

:data:`SCORINGS` names these for a season's ruleset; :func:`score_game` dispatches by name.
Hand points must be non-negative ints, at least two seats; anything else raises ValueError.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

__all__ = [
    "SCORINGS",
    "Scoring",
    "cumulative",
    "penalty",
    "score_game",
    "tour_doubles",
    "tour_singles",
]


def _hands(hand_points: Sequence[int]) -> list[int]:
    """Return the hand points as a list after checking them (>= 2 seats, ints >= 0)."""
    if isinstance(hand_points, str | bytes) or not isinstance(hand_points, Sequence):
        raise ValueError(
            f"hand points must be a sequence of ints, got {type(hand_points).__name__}"
        )
    hands = list(hand_points)
    if len(hands) < 2:
        raise ValueError(f"a game needs at least 2 seats, got {len(hands)}")
    for seat, points in enumerate(hands):
        if isinstance(points, bool) or not isinstance(points, int) or points < 0:
            raise ValueError(f"seat {seat}: hand points must be an int >= 0, got {points!r}")
    return hands


def tour_singles(hand_points: Sequence[int]) -> list[int]:
    """Tour singles: the lowest hand scores its margins over the others; others score -hand."""
    hands = _hands(hand_points)
    low = min(hands)
    margins = sum(hands) - low * len(hands)
    return [margins if points == low else -points for points in hands]


def _teams(teams: Sequence[int | None], seats: int) -> list[int]:
    if isinstance(teams, str | bytes) or not isinstance(teams, Sequence):
        raise ValueError(f"teams must be a sequence of 0/1, got {type(teams).__name__}")
    if len(teams) != seats:
        raise ValueError(f"got {seats} hand points but {len(teams)} teams")
    checked: list[int] = []
    for seat, team in enumerate(teams):
        if isinstance(team, bool) or not isinstance(team, int) or team not in (0, 1):
            raise ValueError(f"seat {seat}: team must be 0 or 1, got {team!r}")
        checked.append(team)
    for team in (0, 1):
        if team not in checked:
            raise ValueError(f"a doubles game needs players of both teams; team {team} has none")
    return checked


def tour_doubles(hand_points: Sequence[int], teams: Sequence[int]) -> list[int]:
    """Tour doubles: the lowest hand's team wins the losers' total; losers score minus it."""
    hands = _hands(hand_points)
    team_of = _teams(teams, len(hands))
    totals = [0, 0]
    for points, team in zip(hands, team_of, strict=True):
        totals[team] += points
    low = min(hands)
    low_teams = {team for points, team in zip(hands, team_of, strict=True) if points == low}
    if len(low_teams) == 1:
        (winner,) = low_teams
    elif totals[0] != totals[1]:
        winner = 0 if totals[0] < totals[1] else 1
    else:
        return [0] * len(hands)
    stake = totals[1 - winner]
    return [stake if team == winner else -stake for team in team_of]


def cumulative(hand_points: Sequence[int]) -> list[int]:
    """Cumulative (累积法): the lowest hand scores the sum of the other hands; others 0."""
    hands = _hands(hand_points)
    low = min(hands)
    stake = sum(points for points in hands if points != low)
    return [stake if points == low else 0 for points in hands]


def penalty(hand_points: Sequence[int]) -> list[int]:
    """Penalty (淘汰法): each player keeps their hand points, stored as minus them."""
    return [-points for points in _hands(hand_points)]


@dataclass(frozen=True)
class Scoring:
    """A registry entry: a scoring's name, whether it needs teams, and how to apply it."""

    name: str
    needs_teams: bool
    apply: Callable[[Sequence[int], Sequence[int] | None], list[int]]


def _without_teams(
    function: Callable[[Sequence[int]], list[int]],
) -> Callable[[Sequence[int], Sequence[int] | None], list[int]]:
    def apply(hand_points: Sequence[int], teams: Sequence[int] | None) -> list[int]:
        return function(hand_points)

    return apply


def _doubles(hand_points: Sequence[int], teams: Sequence[int] | None) -> list[int]:
    if teams is None:
        raise ValueError("scoring 'tour_doubles' needs a team (0 or 1) for every seat")
    return tour_doubles(hand_points, teams)


SCORINGS: Final[Mapping[str, Scoring]] = MappingProxyType(
    {
        "tour_singles": Scoring("tour_singles", False, _without_teams(tour_singles)),
        "tour_doubles": Scoring("tour_doubles", True, _doubles),
        "cumulative": Scoring("cumulative", False, _without_teams(cumulative)),
        "penalty": Scoring("penalty", False, _without_teams(penalty)),
    }
)
"""The scorings a season's ruleset may name."""


def score_game(
    scoring: str,
    hand_points: Sequence[int],
    teams: Sequence[int | None] | None = None,
) -> list[int]:
    """Score one game with the named scoring; ``teams`` (0/1 per seat) for team scorings.

    Teams may be omitted or all ``None`` (a singles record) for the other scorings; a team
    given to a scoring that does not use teams is a misconfiguration and raises ValueError.
    """
    entry = SCORINGS.get(scoring) if isinstance(scoring, str) else None
    if entry is None:
        known = ", ".join(sorted(SCORINGS))
        raise ValueError(f"unknown scoring {scoring!r} (known: {known})")
    if teams is not None and all(team is None for team in teams):
        teams = None
    if entry.needs_teams:
        checked = None if teams is None else _teams(teams, len(teams))
        return entry.apply(hand_points, checked)
    if teams is not None:
        raise ValueError(f"scoring {scoring!r} does not use teams, got {list(teams)!r}")
    return entry.apply(hand_points, None)
