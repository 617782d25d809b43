"""Matches at one table (SPEC §4 "Matches at one table (live finals)"; scorings of SPEC §3).

A seated round may be played as a **match**: several games at the same table, scored game by
game from the hand points left (``tournaments.domain.cards.hand_points``), until a target
(e.g. 500) decides it. Two scorings:

* **cumulative** (累积法): after each game the winner — the player who went out, i.e. the
  lowest hand — adds the other players' hand points to their total
  (``tournaments.domain.scoring.cumulative``); everyone else adds 0. The first player to
  reach the target (total >= target) wins the match.
* **elimination** (淘汰法): after each game every player still in the match adds their own
  hand points to their total; a player whose total reaches the target is eliminated and plays
  no further game. The last player left wins.

Each game is given as the hand points per seat, in seat order (seats 0-based here); in an
elimination match a seat eliminated before the game has ``None``, every other seat an
int >= 0. ``match_state`` replays the games and says where the match stands.

Decisions (written down as SPEC §4 asks):

* **Ties for the lowest hand** (cumulative): every co-winner adds the sum of the non-winners'
  hands (``scoring.cumulative``), so two players can reach the target in the same game.
* **The cumulative match is decided** after the first game in which some total reaches the
  target. Its placements: higher total first; then fewer hand points held over the whole
  match (the sum of the player's own hands, the penalty count); players equal on both share
  the place (competition style, 1, 1, 3, 4: the placement points of the places they occupy
  are shared by ``tournaments.domain.seating.placement_points``). So of two players reaching
  the target in the same game the higher total wins the match, and a dead heat on both
  counts shares first place.
* **The elimination match is decided** when at most one player is left. Placements: the
  player left is first; the eliminated follow in reverse order of elimination (eliminated
  later = better); players eliminated in the same game are ordered by fewer points (lower
  total); equal totals share the place. If every remaining player is eliminated in the same
  game, the fewest points wins the match (a dead heat shares first place).
* A game entered after the match is decided is refused, as is a hand for an eliminated seat
  or a missing one for a seat still in the match; every error is a :class:`MatchError` (a
  ValueError) naming the game (1-based) and, where it is about one, the seat.

Pure and stdlib-only (mypy strict); ``tournaments.services.table_games`` stores the games and
enters the decided placements through the seated result path (``placement_points``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from tournaments.domain.scoring import cumulative

__all__ = [
    "CUMULATIVE",
    "ELIMINATION",
    "MATCH_SCORINGS",
    "MatchError",
    "MatchFormat",
    "MatchState",
    "competition_places",
    "game_additions",
    "match_state",
]

CUMULATIVE: Final = "cumulative"
ELIMINATION: Final = "elimination"
MATCH_SCORINGS: Final = (CUMULATIVE, ELIMINATION)


class MatchError(ValueError):
    """Bad or late match input. ``game`` is the 1-based game number (None when the error is
    about the match itself) and ``seat`` the 0-based seat when the error is about one."""

    def __init__(self, message: str, *, game: int | None = None, seat: int | None = None) -> None:
        self.game = game
        self.seat = seat
        self.reason = message
        where = [] if game is None else [f"game {game}"]
        if seat is not None:
            where.append(f"seat {seat}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


def _check_format(scoring: object, target: object) -> None:
    if scoring not in MATCH_SCORINGS:
        known = ", ".join(MATCH_SCORINGS)
        raise MatchError(f"unknown match scoring {scoring!r} (known: {known})")
    if isinstance(target, bool) or not isinstance(target, int) or target < 1:
        raise MatchError(f"the target must be an int >= 1, got {target!r}")


@dataclass(frozen=True)
class MatchFormat:
    """How a round's tables play: ``scoring`` (cumulative / elimination) to ``target``."""

    scoring: str
    target: int

    def __post_init__(self) -> None:
        _check_format(self.scoring, self.target)


@dataclass(frozen=True)
class MatchState:
    """Where a match stands after ``games`` games (seats 0-based, in seat order).

    ``totals``: each seat's match total (cumulative: points won; elimination: points taken).
    ``held``: each seat's own hand points summed over the games it played.
    ``eliminated``: seats in the order they were eliminated (elimination only; seats out in
    the same game in seat order); ``eliminated_in``: per seat, the game that eliminated it.
    ``decided_in``: the game that decided the match, None while it goes on.
    ``placements``: per seat, the place (1 = best, ties share: 1, 1, 3, 4) once decided.
    """

    scoring: str
    target: int
    games: int
    totals: tuple[int, ...]
    held: tuple[int, ...]
    eliminated: tuple[int, ...]
    eliminated_in: tuple[int | None, ...]
    decided_in: int | None
    placements: tuple[int, ...] | None

    @property
    def finished(self) -> bool:
        """Whether the match is decided (no further game may be entered)."""
        return self.decided_in is not None

    @property
    def active(self) -> tuple[int, ...]:
        """The seats still playing: every seat not eliminated (none once decided)."""
        if self.finished:
            return ()
        return tuple(seat for seat, out in enumerate(self.eliminated_in) if out is None)


def competition_places(keys: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """Places for sort keys (lower key = better): 1 + the number of strictly better keys."""
    return tuple(1 + sum(1 for other in keys if other < key) for key in keys)


def _game_points(
    game: object, number: int, seats: int, out: Sequence[int | None]
) -> list[int | None]:
    if isinstance(game, str | bytes) or not isinstance(game, Sequence):
        raise MatchError(
            f"a game must be a sequence of hand points per seat, got {type(game).__name__}",
            game=number,
        )
    if len(game) != seats:
        raise MatchError(f"expected hand points for {seats} seats, got {len(game)}", game=number)
    points: list[int | None] = []
    for seat, value in enumerate(game):
        if out[seat] is not None:
            if value is not None:
                raise MatchError(
                    f"eliminated in game {out[seat]}; it holds no hand in a later game",
                    game=number,
                    seat=seat,
                )
            points.append(None)
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise MatchError(
                f"hand points must be an int >= 0, got {value!r}", game=number, seat=seat
            )
        points.append(value)
    return points


def game_additions(scoring: str, points: Sequence[int | None]) -> list[int | None]:
    """What one game adds to each seat's match total (None for a seat not playing it)."""
    playing = [seat for seat, value in enumerate(points) if value is not None]
    hands = [value for value in points if value is not None]
    if scoring == ELIMINATION:
        return list(points)
    won = cumulative(hands)
    added: list[int | None] = [None] * len(points)
    for seat, score in zip(playing, won, strict=True):
        added[seat] = score
    return added


def _placements(
    scoring: str,
    totals: Sequence[int],
    held: Sequence[int],
    eliminated_in: Sequence[int | None],
    decided_in: int,
) -> tuple[int, ...]:
    if scoring == CUMULATIVE:
        keys = [(-total, hand) for total, hand in zip(totals, held, strict=True)]
    else:
        # The player left counts as eliminated after the deciding game: first.
        keys = [
            (-(decided_in + 1 if out is None else out), total)
            for total, out in zip(totals, eliminated_in, strict=True)
        ]
    return competition_places(keys)


def match_state(
    scoring: str,
    target: int,
    games: Sequence[Sequence[int | None]],
    *,
    seats: int | None = None,
) -> MatchState:
    """Replay a match's games (hand points per seat, seat order) and say where it stands.

    ``seats`` is the table's size (default: the length of the first game). Raises
    :class:`MatchError` naming the game and seat for bad input and for a game after the
    match was decided.
    """
    _check_format(scoring, target)
    if isinstance(games, str | bytes) or not isinstance(games, Sequence):
        raise MatchError(f"games must be a sequence of games, got {type(games).__name__}")
    if seats is None:
        if not games:
            seats = 0
        elif isinstance(games[0], str | bytes) or not isinstance(games[0], Sequence):
            raise MatchError("a game must be a sequence of hand points per seat", game=1)
        else:
            seats = len(games[0])
    if isinstance(seats, bool) or not isinstance(seats, int) or seats < 0:
        raise MatchError(f"seats must be an int >= 2, got {seats!r}")
    if games and seats < 2:
        raise MatchError(f"a match needs at least 2 seats, got {seats}")
    totals = [0] * seats
    held = [0] * seats
    out: list[int | None] = [None] * seats
    eliminated: list[int] = []
    decided_in: int | None = None
    for number, game in enumerate(games, start=1):
        if decided_in is not None:
            raise MatchError(
                f"the match was decided in game {decided_in}; no further game can be entered",
                game=number,
            )
        points = _game_points(game, number, seats, out)
        for seat, added in enumerate(game_additions(scoring, points)):
            value = points[seat]
            if added is None or value is None:
                continue
            totals[seat] += added
            held[seat] += value
        if scoring == CUMULATIVE:
            if max(totals) >= target:
                decided_in = number
            continue
        for seat in range(seats):
            if out[seat] is None and totals[seat] >= target:
                out[seat] = number
                eliminated.append(seat)
        if sum(1 for value in out if value is None) <= 1:
            decided_in = number
    placements = None if decided_in is None else _placements(scoring, totals, held, out, decided_in)
    return MatchState(
        scoring=scoring,
        target=target,
        games=len(games),
        totals=tuple(totals),
        held=tuple(held),
        eliminated=tuple(eliminated),
        eliminated_in=tuple(out),
        decided_in=decided_in,
        placements=placements,
    )
