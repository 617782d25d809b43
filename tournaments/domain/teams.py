"""Team events (SPEC §4 "Team events", 组队竞赛规则): teammates apart, rotating partners, and
the team scoring of each game (tour doubles, SPEC §3).

* **Teammates sit apart** (:func:`adjacent_teammates`): teammates are never in adjacent
  seats. The seat order is circular (the last seat sits next to the first), so at a table of
  four teammates sit opposite each other: seats 0 and 2, 1 and 3.
  ``tournaments.services.ingest_validation`` refuses a doubles record this rule finds a pair
  in.
* **Rotating partners** (:func:`rotating_partners`): n players, n a multiple of 4, play
  n - 1 rounds; each round is a perfect matching of the players into partnerships, grouped
  two partnerships to a table of four, teammates opposite; over the event every pair of
  players partners exactly once; each round is ``games_per_round`` games (default 4). So
  4 players play 3 rounds x 4 = 12 games at one table; 8 players 7 x 4 = 28 games at two.
* **Team scoring** (:func:`partners_game_scores`): tour doubles
  (``tournaments.domain.scoring.tour_doubles``): the team of the player who went out (the
  lowest hand) wins; each winner scores the losing team's hand points, each loser minus
  them (ties as decided there). Players are ranked on their individual totals
  (:func:`individual_totals`); the services keep them as the event's standings and rank them
  in the season's tie-break order (total, games, best single game, earlier time reaching the
  total, player id), as every leaderboard.

Decisions:

* **The order the schedule is built from.** The players are sorted by id; when a ``seed`` is
  given they are then shuffled by ``random.Random(f"{seed}:partners")``. The services always
  pass a seed (drawn at random and recorded on every round when the organiser gives none),
  so a schedule is reproducible in an audit like a seated draw (SPEC §4).
* **Partnerships: the circle method** (the round-robin 1-factorisation of the complete
  graph): the last player of the order stays put, the others sit on a circle; in round r
  (0-based) the fixed player partners ``circle[r]`` and, for i = 1 … n/2 - 1,
  ``circle[(r + i) % (n - 1)]`` partners ``circle[(r - i) % (n - 1)]``. Every pair partners
  exactly once in n - 1 rounds.
* **Tables.** The partnerships of a round, in that order, are grouped greedily to spread the
  opponents: the first partnership not yet seated meets the one (of those left) whose
  players it has opposed least so far, ties to the earlier; the seats are
  ``(a0, b0, a1, b1)`` for partnerships (a0, a1) and (b0, b1), so teammates sit opposite
  (seats 0 and 2, 1 and 3). At 4 players every pair opposes twice. Opponents cannot be
  perfectly balanced on the circle method's partnerships (at 8 players no grouping of them
  has every pair opposing exactly twice — a whist tournament, which needs another
  1-factorisation; checked exhaustively): the greedy grouping has pairs opposing 0 to 4
  times at 8 players (the best grouping is little better) and 0 to 5 at 12 and 16. The SPEC
  asks only that every pair partner once.
* Fewer than 4 players, or a field not a multiple of 4, is refused with a ValueError.

Pure and stdlib-only (mypy strict).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Final

from tournaments.domain.scoring import tour_doubles

__all__ = [
    "DEFAULT_GAMES_PER_ROUND",
    "OPPOSITE_TEAMS",
    "TeamSchedule",
    "TeamTable",
    "adjacent_teammates",
    "individual_totals",
    "opponent_pairs",
    "partner_pairs",
    "partners_game_scores",
    "rotating_partners",
]

#: The team of each seat at a table of four where teammates sit opposite.
OPPOSITE_TEAMS: Final = (0, 1, 0, 1)
#: Games each round of a rotating-partners event (a setting; SPEC §4).
DEFAULT_GAMES_PER_ROUND: Final = 4

TeamTable = tuple[str, str, str, str]
"""Four players in seat order; seats 0 and 2 are one team, 1 and 3 the other."""


def adjacent_teammates(teams: Sequence[int]) -> tuple[int, int] | None:
    """The first pair of neighbouring seats ``(i, i + 1)`` (``(n - 1, 0)`` last) whose
    players are of one team, or None when teammates all sit apart."""
    n = len(teams)
    if n < 2:
        return None
    pairs = [(i, i + 1) for i in range(n - 1)]
    if n > 2:  # two seats are neighbours once, not twice
        pairs.append((n - 1, 0))
    for left, right in pairs:
        if teams[left] == teams[right]:
            return left, right
    return None


@dataclass(frozen=True)
class TeamSchedule:
    """A rotating-partners schedule: ``rounds[r][t]`` is table t of round r (0-based), its
    four players in seat order; ``order`` is the player order the circle method used."""

    order: tuple[str, ...]
    rounds: tuple[tuple[TeamTable, ...], ...]
    games_per_round: int

    @property
    def games_per_player(self) -> int:
        """Every player plays every round: (n - 1) x games_per_round games."""
        return len(self.rounds) * self.games_per_round


def _checked_players(players: Sequence[str]) -> list[str]:
    if isinstance(players, str):
        raise TypeError("players must be a sequence of player ids, not one string")
    field = sorted(players)
    for left, right in zip(field, field[1:], strict=False):
        if left == right:
            raise ValueError(f"player {left!r} is in the field twice")
    n = len(field)
    if n < 4 or n % 4:
        raise ValueError(
            f"a rotating-partners event needs a multiple of 4 players (4, 8, 12, …), got {n}"
        )
    return field


def _partnerships(order: Sequence[str], round_no: int) -> list[tuple[str, str]]:
    """Round ``round_no`` (0-based) of the circle method: n/2 partnerships."""
    n = len(order)
    circle, fixed = order[: n - 1], order[n - 1]
    m = n - 1
    pairs = [(circle[round_no % m], fixed)]
    for i in range(1, n // 2):
        pairs.append((circle[(round_no + i) % m], circle[(round_no - i) % m]))
    return pairs


def rotating_partners(
    players: Sequence[str],
    *,
    seed: int | None = None,
    games_per_round: int = DEFAULT_GAMES_PER_ROUND,
) -> TeamSchedule:
    """The rotating-partners schedule of ``players`` (a multiple of 4): n - 1 rounds of
    tables of four, teammates opposite, every pair partnering exactly once."""
    if isinstance(games_per_round, bool) or not isinstance(games_per_round, int):
        raise ValueError(f"games per round must be an int >= 1, got {games_per_round!r}")
    if games_per_round < 1:
        raise ValueError(f"games per round must be an int >= 1, got {games_per_round}")
    order = _checked_players(players)
    if seed is not None:
        # Reproducible for an audit, not a secret: a seeded PRNG is what is wanted.
        random.Random(f"{seed}:partners").shuffle(order)  # noqa: S311
    opposed: Counter[tuple[str, str]] = Counter()
    rounds: list[tuple[TeamTable, ...]] = []
    for round_no in range(len(order) - 1):
        left = _partnerships(order, round_no)
        tables: list[TeamTable] = []
        while left:
            first = left.pop(0)
            pick = min(
                range(len(left)),
                key=lambda i: (sum(opposed[_pair(x, y)] for x in first for y in left[i]), i),
            )
            other = left.pop(pick)
            for x in first:
                for y in other:
                    opposed[_pair(x, y)] += 1
            tables.append((first[0], other[0], first[1], other[1]))
        rounds.append(tuple(tables))
    return TeamSchedule(order=tuple(order), rounds=tuple(rounds), games_per_round=games_per_round)


def _pair(x: str, y: str) -> tuple[str, str]:
    return (x, y) if x < y else (y, x)


def partners_game_scores(hand_points: Sequence[int]) -> list[int]:
    """One game at a table of four with teammates opposite, scored by tour doubles."""
    if isinstance(hand_points, str | bytes) or len(hand_points) != len(OPPOSITE_TEAMS):
        raise ValueError(f"a partners game has 4 seats, got {len(hand_points)}")
    return tour_doubles(hand_points, OPPOSITE_TEAMS)


def individual_totals(
    schedule: TeamSchedule, games: Sequence[Sequence[Sequence[Sequence[int]]]]
) -> dict[str, int]:
    """Each player's total over the event: ``games[r][t][g]`` is game g of table t of round
    r, the hand points in seat order. Every table must have ``games_per_round`` games."""
    if len(games) != len(schedule.rounds):
        raise ValueError(f"expected games for {len(schedule.rounds)} rounds, got {len(games)}")
    totals = dict.fromkeys(schedule.order, 0)
    for round_no, (tables, played) in enumerate(zip(schedule.rounds, games, strict=True), 1):
        if len(played) != len(tables):
            raise ValueError(f"round {round_no}: expected {len(tables)} tables, got {len(played)}")
        for table_no, (table, table_games) in enumerate(zip(tables, played, strict=True), 1):
            if len(table_games) != schedule.games_per_round:
                raise ValueError(
                    f"round {round_no}, table {table_no}: expected "
                    f"{schedule.games_per_round} games, got {len(table_games)}"
                )
            for hands in table_games:
                for player, score in zip(table, partners_game_scores(hands), strict=True):
                    totals[player] += score
    return totals


def partner_pairs(schedule: TeamSchedule) -> Counter[tuple[str, str]]:
    """How often each pair (sorted) partners over the schedule (1 for every pair)."""
    return Counter(
        _pair(table[a], table[a + 2])
        for tables in schedule.rounds
        for table in tables
        for a in (0, 1)
    )


def opponent_pairs(schedule: TeamSchedule) -> Counter[tuple[str, str]]:
    """How often each pair (sorted) sits at one table on opposite teams."""
    return Counter(
        _pair(x, y)
        for tables in schedule.rounds
        for table in tables
        for x, y in combinations(table, 2)
        if table.index(x) % 2 != table.index(y) % 2
    )
