"""Chances to punish, read from a replayed move log (SPEC §9 move log v1; the soft-play
detector's data, ``integrity.domain.softplay``).

A **chance** is a turn on which a player (the actor) decides freely — the first move of the
turn, not facing a draw owed — while the next player is threatening (two cards or fewer,
which covers a called UNO) and the actor holds a legal punishing card: a +2, a skip, a
reverse or a +4, each of which stops the next player's coming turn. The actor **punishes**
when that first move plays one of them.

Read in the replay's own pass (:func:`chance_observer`, the replay's observer), so a log is
replayed once for its verdict and its chances together: ingest
(``tournaments.services.ingest_validation.check_record``) keeps a game's chances in the
compact form of :func:`chance_counts` — per (actor seat, target seat), the chances and the
punishments — and stores them on the actor's seat (``Seat.chances``), which the database
audit aggregates (``integrity.sql.softplay``). :func:`chances_of` gives the same chances by
player, one per turn, for the in-memory audit.

The observer is called before every move of every logged game ingested, so it rejects a
move with the fewest reads first (the next player's hand size, then whose move it is) and
never raises: the replay's verdict is the same with it as without.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from tournaments.domain.cards import TABLES
from tournaments.domain.movelog import Table, card_kind, replay
from tournaments.domain.rules import Ruleset

__all__ = [
    "PUNISHING",
    "THREAT_CARDS",
    "ChanceCount",
    "SeatChance",
    "chance_counts",
    "chance_observer",
    "chances_of",
]

#: The cards that stop the next player's coming turn.
PUNISHING: Final = frozenset({"D2", "WD4", "S", "R"})
#: A next player with this many cards or fewer is threatening (an UNO call means one).
THREAT_CARDS: Final = 2
#: Every card code, of every deck, whose kind is :data:`PUNISHING`.
_PUNISHING_CODES: Final = frozenset(
    code for table in TABLES.values() for code in table.points if card_kind(code) in PUNISHING
)

#: One chance as the observer reads it: actor seat, target seat, punished.
SeatChance = tuple[int, int, bool]
#: A game's chances in compact form: (actor seat, target seat, chances, punished).
ChanceCount = tuple[int, int, int, int]


def chance_observer(found: list[SeatChance]) -> Callable[[int, Mapping[str, Any], Table], None]:
    """An observer for :func:`~tournaments.domain.movelog.replay` that appends each chance
    to punish of the game (module docstring) to ``found``, in play order. A log that does
    not replay leaves a partial list: use it only with an ok verdict."""
    punishing = _PUNISHING_CODES
    add = found.append

    def observe(index: int, move: Mapping[str, Any], table: Table) -> None:
        turn = table.turn
        target = (turn + table.direction) % table.n
        if len(table.hands[target]) > THREAT_CARDS or move.get("seat") != turn:
            return
        if table.pending or table.owed or table.has_drawn:
            return
        if ("play" not in move and "draw" not in move) or table.ended is not None:
            return
        if not table.started or punishing.isdisjoint(table.hands[turn]):
            return
        if punishing.isdisjoint(table.playable(turn)):
            return
        played = move.get("play")
        first = played[0] if type(played) is list and played else played
        add((turn, target, type(first) is str and first in punishing))

    return observe


def chance_counts(found: Iterable[SeatChance]) -> tuple[ChanceCount, ...]:
    """The chances of one game per (actor seat, target seat): how many, how many punished;
    in (actor, target) order."""
    counts: dict[tuple[int, int], list[int]] = {}
    for actor, target, punished in found:
        count = counts.get((actor, target))
        if count is None:
            count = counts[actor, target] = [0, 0]
        count[0] += 1
        count[1] += punished
    return tuple((actor, target, n, k) for (actor, target), (n, k) in sorted(counts.items()))


def chances_of(record: Mapping[str, Any], rules: Ruleset) -> list[tuple[str, str, bool]]:
    """The chances to punish of one game record as (actor id, target id, punished), one per
    turn in play order; none when it has no log or its log does not replay."""
    seats = record.get("seats")
    if record.get("log") is None or not isinstance(seats, list):
        return []
    found: list[SeatChance] = []
    if not replay(record, rules, chance_observer(found)).ok:
        return []
    players = [str(seat["player"]["id"]) for seat in seats]
    return [(players[actor], players[target], punished) for actor, target, punished in found]
