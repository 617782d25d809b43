"""Best-N event leaderboards (SPEC §4, "Leaderboard events"; §5 "Rankings").

The rule: in a leaderboard event (all five online kinds, 周预赛 weekly qualifier through
年赛 annual final) a player's event score is the sum of their best N game scores inside
the event window, and a player needs at least a minimum number of games to be ranked or
rewarded. On the tour both are 15; here both are settings passed in by the caller.

This module is the pure truth the database layer follows and its tests compare against.
The database keeps one standing row per (event, player) with the fields of `Standing`.
At tour scale a batch of new games is folded in by one SQL merge that follows `add_game`,
and boards are ranked by SQL window functions that follow `rank` and `rank_in_province`:
both live in ``tournaments.sql``, tested equal to this module on random cases
(``tests/tournaments/test_sql.py``). `standing_from_scores` computes a row from scratch
(used after corrections, and by the merge for a late game).

Decisions (written down as SPEC §4 asks):

* **Kept set.** `kept` holds the best N scores, descending. While fewer than N games are
  played every score is kept, negative ones included, so ``len(kept) == min(N, games)``
  and ``total == sum(kept)``.
* **Equal scores do not displace.** When the kept set is full a new score enters only if
  it is strictly greater than the smallest kept score (`keep_best` returns None
  otherwise), so an equal score changes neither the total nor `reached_at`: the player
  who reached the score first keeps the earlier time.
* **reached_at** is the end time of the game whose score last entered the kept set, i.e.
  the latest end time among the kept games when ties between equal scores are settled in
  favour of the earlier game. Every such entry changes the total except one case: a
  score of 0 filling an empty slot of a kept set that is not yet full, which changes the
  kept set but not the total; it still moves `reached_at` (the player needed that game to
  complete the set). With this definition `reached_at` depends only on the multiset of
  (score, end time) pairs, never on the order games were ingested, so the from-scratch
  computation needs no ordering convention and is exact.
* **Games arrive in time order.** `add_game` is exact whenever the new game ended no
  earlier than `reached_at`; for an older game it raises `OutOfOrderGameError` and the caller
  recomputes the standing from scratch with `standing_from_scores`.
* **Tie-breaks** are a registry keyed by name (Tabbycat's ranking metrics), ordered per
  season: `TIEBREAKS` and `DEFAULT_ORDER` = total, games, best, reached_at, player. The
  external player id is the last resort, so two rows never tie fully and the order never
  depends on database order. Every order must start with "total"; "player" is appended
  when missing.
* **Strict ranks.** Because no two rows tie fully we rank strictly 1..k without gaps
  (no shared "=3rd"). Only eligible standings (games >= minimum) are ranked; the others
  follow them, in the same order, with rank None.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

__all__ = [
    "DEFAULT_ORDER",
    "TIEBREAKS",
    "OutOfOrderGameError",
    "Ranked",
    "SortValue",
    "Standing",
    "TieBreak",
    "add_game",
    "keep_best",
    "rank",
    "rank_in_province",
    "resolve_order",
    "sort_key",
    "standing_from_scores",
]


def _check_n(n: int) -> None:
    if n < 1:
        raise ValueError(f"best-N needs N >= 1, got {n}")


def keep_best(kept: Sequence[int], score: int, n: int) -> tuple[int, ...] | None:
    """Return the kept tuple (descending) after adding ``score``, or None if it does not enter.

    ``kept`` is the current best-``n`` scores in descending order. While it holds fewer
    than ``n`` scores every score enters. Once full, a score enters only when it is
    strictly greater than the smallest kept score and then displaces it; an equal score
    does not displace (the total and ``reached_at`` stay as they are).
    """
    _check_n(n)
    if len(kept) > n:
        raise ValueError(f"kept holds {len(kept)} scores, more than N={n}")
    if any(a < b for a, b in zip(kept, kept[1:], strict=False)):
        raise ValueError(f"kept must be in descending order, got {tuple(kept)}")
    if len(kept) == n and score <= kept[-1]:
        return None
    merged = sorted((*kept, score), reverse=True)
    return tuple(merged[:n])


class OutOfOrderGameError(ValueError):
    """A game ended before the standing's ``reached_at``: recompute from scratch."""


@dataclass(frozen=True, slots=True)
class Standing:
    """One player's standing in one leaderboard event.

    ``player`` is the external player id (e.g. ``"p0000001"``); ``best`` is None and
    ``reached_at`` is None until the first game.
    """

    player: str
    province: str
    games: int = 0
    kept: tuple[int, ...] = ()
    total: int = 0
    best: int | None = None
    reached_at: datetime | None = None

    def is_eligible(self, minimum_games: int) -> bool:
        """Whether the standing has enough games to be ranked (games >= minimum)."""
        return self.games >= minimum_games


def add_game(standing: Standing, score: int, ended_at: datetime, n: int) -> Standing:
    """Return ``standing`` with one more game scored ``score`` that ended at ``ended_at``.

    ``games`` and ``best`` always update; ``kept``, ``total`` and ``reached_at`` update only
    when the score enters the kept set (see `keep_best`). Raises `OutOfOrderGameError` when the
    game ended before ``standing.reached_at``, because the result would then depend on
    the end times of the kept games, which the standing does not hold.
    """
    if standing.reached_at is not None and ended_at < standing.reached_at:
        raise OutOfOrderGameError(
            f"game of {standing.player} ended at {ended_at.isoformat()}, before the "
            f"standing's reached_at {standing.reached_at.isoformat()}: recompute from scratch"
        )
    best = score if standing.best is None else max(standing.best, score)
    kept = keep_best(standing.kept, score, n)
    if kept is None:
        return replace(standing, games=standing.games + 1, best=best)
    return replace(
        standing,
        games=standing.games + 1,
        kept=kept,
        total=sum(kept),
        best=best,
        reached_at=ended_at,
    )


def standing_from_scores(
    player: str, province: str, scores: Iterable[tuple[int, datetime]], n: int
) -> Standing:
    """Compute a standing from all of a player's (score, ended_at) pairs in the window.

    The kept games are the ``n`` best by score, equal scores settled in favour of the
    earlier game; ``reached_at`` is the latest end time among them. The input may come in
    any order. Equal to folding `add_game` over the games in end-time order.
    """
    _check_n(n)
    games = list(scores)
    if not games:
        return Standing(player=player, province=province)
    chosen = heapq.nsmallest(n, games, key=lambda game: (-game[0], game[1]))
    kept = tuple(score for score, _ in chosen)
    return Standing(
        player=player,
        province=province,
        games=len(games),
        kept=kept,
        total=sum(kept),
        best=max(score for score, _ in games),
        reached_at=max(ended_at for _, ended_at in chosen),
    )


# --- tie-breaks -------------------------------------------------------------------------

SortValue = int | str | tuple[int] | tuple[int, int] | tuple[int, datetime]
"""One component of a sort key; every component sorts ascending."""


@dataclass(frozen=True, slots=True)
class TieBreak:
    """One ranking metric of the registry.

    ``key`` maps a standing to a value that sorts ascending (descending metrics are
    negated; a missing value sorts last). ``column``, ``descending`` and ``nulls_last``
    describe the same ordering for the database layer to mirror as ORDER BY columns of
    the standings table (``column`` names the `Standing` attribute; for "player" that is
    the external player id, never the database key).
    """

    name: str
    column: str
    descending: bool
    nulls_last: bool
    key: Callable[[Standing], SortValue]
    description: str


def _best_key(standing: Standing) -> tuple[int, int]:
    return (1, 0) if standing.best is None else (0, -standing.best)


def _reached_at_key(standing: Standing) -> tuple[int] | tuple[int, datetime]:
    return (1,) if standing.reached_at is None else (0, standing.reached_at)


TIEBREAKS: dict[str, TieBreak] = {
    tiebreak.name: tiebreak
    for tiebreak in (
        TieBreak(
            name="total",
            column="total",
            descending=True,
            nulls_last=False,
            key=lambda standing: -standing.total,
            description="higher event score (sum of the best N games) first",
        ),
        TieBreak(
            name="games",
            column="games",
            descending=True,
            nulls_last=False,
            key=lambda standing: -standing.games,
            description="more games played in the window first",
        ),
        TieBreak(
            name="best",
            column="best",
            descending=True,
            nulls_last=True,
            key=_best_key,
            description="higher best single game score first",
        ),
        TieBreak(
            name="reached_at",
            column="reached_at",
            descending=False,
            nulls_last=True,
            key=_reached_at_key,
            description="reached the score earlier first",
        ),
        TieBreak(
            name="player",
            column="player",
            descending=False,
            nulls_last=False,
            key=lambda standing: standing.player,
            description="external player id ascending (last resort; ids are unique)",
        ),
    )
}
"""The tie-break registry keyed by name; a season's settings name an order of these."""

DEFAULT_ORDER: tuple[str, ...] = ("total", "games", "best", "reached_at", "player")


def resolve_order(order: Sequence[str]) -> tuple[TieBreak, ...]:
    """Validate a season's tie-break order and return its `TieBreak` objects.

    Rules: every name must be in `TIEBREAKS` (unknown names raise ValueError naming them);
    no name may repeat; "total" must come first (it is the event score itself); "player"
    must be last and is appended when missing, so the order is total. A "player" anywhere
    but last is rejected, since the metrics after it could never apply.
    """
    if isinstance(order, str):
        raise TypeError("order must be a sequence of tie-break names, not a string")
    names = list(order)
    unknown = [name for name in names if name not in TIEBREAKS]
    if unknown:
        known = ", ".join(TIEBREAKS)
        raise ValueError(f"unknown tie-breaks: {', '.join(unknown)} (known: {known})")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"tie-breaks named more than once: {', '.join(repeated)}")
    if not names or names[0] != "total":
        raise ValueError(f'a tie-break order must start with "total", got {tuple(names)}')
    if "player" not in names:
        names.append("player")
    elif names[-1] != "player":
        raise ValueError(f'"player" must be the last tie-break, got {tuple(names)}')
    return tuple(TIEBREAKS[name] for name in names)


def sort_key(standing: Standing, order: Sequence[str] = DEFAULT_ORDER) -> tuple[SortValue, ...]:
    """Return the ascending sort key of ``standing`` under ``order`` (validated)."""
    return _key(standing, resolve_order(order))


def _key(standing: Standing, tiebreaks: Sequence[TieBreak]) -> tuple[SortValue, ...]:
    return tuple(tiebreak.key(standing) for tiebreak in tiebreaks)


# --- ranking ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ranked:
    """A standing with its national rank and its rank within its province.

    Both ranks are 1-based and None for an ineligible standing.
    """

    standing: Standing
    rank: int | None
    province_rank: int | None

    @property
    def player(self) -> str:
        return self.standing.player

    @property
    def province(self) -> str:
        return self.standing.province

    @property
    def games(self) -> int:
        return self.standing.games

    @property
    def eligible(self) -> bool:
        return self.rank is not None


def rank(
    standings: Iterable[Standing],
    *,
    minimum_games: int,
    order: Sequence[str] = DEFAULT_ORDER,
) -> list[Ranked]:
    """Rank standings nationally and within each province.

    Returns every standing: the eligible ones (games >= ``minimum_games``) first, ranked
    strictly 1..k in tie-break order; then the ineligible ones in the same order with
    rank and province_rank None. Raises ValueError when a player appears twice.
    """
    if minimum_games < 0:
        raise ValueError(f"minimum_games must be >= 0, got {minimum_games}")
    tiebreaks = resolve_order(order)
    field = list(standings)
    counts = Counter(standing.player for standing in field)
    duplicates = sorted(player for player, count in counts.items() if count > 1)
    if duplicates:
        raise ValueError(f"players with more than one standing: {', '.join(duplicates)}")
    field.sort(key=lambda standing: _key(standing, tiebreaks))
    eligible = [s for s in field if s.is_eligible(minimum_games)]
    ineligible = [s for s in field if not s.is_eligible(minimum_games)]
    per_province: dict[str, int] = {}
    ranked: list[Ranked] = []
    for position, standing in enumerate(eligible, start=1):
        per_province[standing.province] = per_province.get(standing.province, 0) + 1
        ranked.append(Ranked(standing, position, per_province[standing.province]))
    ranked.extend(Ranked(standing, None, None) for standing in ineligible)
    return ranked


def rank_in_province(
    standings: Iterable[Standing],
    province: str,
    *,
    minimum_games: int,
    order: Sequence[str] = DEFAULT_ORDER,
) -> list[Ranked]:
    """The rows of `rank` for one province, in the same order.

    Pass the whole national field: each row keeps its national rank beside its
    province rank, and the national rank is only right against the whole field.
    """
    return [
        row
        for row in rank(standings, minimum_games=minimum_games, order=order)
        if row.province == province
    ]
