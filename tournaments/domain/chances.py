"""Chances to punish or to spare, read from a replayed move log (SPEC §9 move log v1; the
soft-play detector's data, ``integrity.domain.softplay``).

A **chance** is a decision of a player (the actor) that can hurt another (the target) or
spare him. Three kinds:

* :data:`PUNISH` — a turn on which the actor decides freely (the first move of the turn,
  not facing a draw owed) while the next player is threatening (two cards or fewer, which
  covers a called UNO) and the actor holds a legal punishing card: a +2, a skip, a reverse
  or a +4, each of which stops the next player's coming turn. The actor **punishes** when
  that first move plays one of them.
* :data:`CHALLENGE` — the actor faces a single +4 the target played and may challenge it
  (rules with ``challenge``): the actor's move on it is the decision, and he **punishes**
  when he challenges.
* :data:`SWAP` — the actor plays a 7 that swaps hands (rules with ``seven_zero``), and the
  target holds more cards than the actor will after the play, so a swap with the target
  would hand him the better hand: the actor **punishes** (does not hand it over) when he
  swaps with another seat.

Read in the replay's own pass (:func:`chance_observer`, the replay's observer), so a log is
replayed once for its verdict and its chances together: ingest
(``tournaments.services.ingest_validation.check_record``) keeps a game's chances in the
compact form of :func:`chance_counts` — per (actor seat, target seat, kind), the chances and
the punishments — and stores them on the actor's seat (``Seat.chances``), which the database
audit aggregates (``integrity.sql.softplay``). :func:`chances_of` gives the same chances by
player, one per decision, for the in-memory audit.

The observer is called before every move of every logged game ingested, so it rejects a
move with the fewest reads first (a swap in the move, a penalty pending, the next player's
hand size, whose move it is) and never raises: the replay's verdict is the same with it as
without.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from tournaments.domain.cards import TABLES
from tournaments.domain.movelog import Table, card_kind, replay
from tournaments.domain.rules import Ruleset

__all__ = [
    "CHALLENGE",
    "PUNISH",
    "PUNISHING",
    "SWAP",
    "THREAT_CARDS",
    "ChanceCount",
    "SeatChance",
    "chance_counts",
    "chance_observer",
    "chances_of",
]

#: The kinds of chance (module docstring), as stored.
PUNISH: Final = 0
CHALLENGE: Final = 1
SWAP: Final = 2

#: The cards that stop the next player's coming turn.
PUNISHING: Final = frozenset({"D2", "WD4", "S", "R"})
#: A next player with this many cards or fewer is threatening (an UNO call means one).
THREAT_CARDS: Final = 2
#: Every card code, of every deck, whose kind is :data:`PUNISHING`.
_PUNISHING_CODES: Final = frozenset(
    code for table in TABLES.values() for code in table.points if card_kind(code) in PUNISHING
)

#: One chance as the observer reads it: actor seat, target seat, kind, punished.
SeatChance = tuple[int, int, int, bool]
#: A game's chances in compact form: (actor seat, target seat, kind, chances, punished).
ChanceCount = tuple[int, int, int, int, int]


def chance_observer(found: list[SeatChance]) -> Callable[[int, Mapping[str, Any], Table], None]:
    """An observer for :func:`~tournaments.domain.movelog.replay` that appends each chance
    of the game (module docstring) to ``found``, in play order. A log that does not replay
    leaves a partial list: use it only with an ok verdict."""
    punishing = _PUNISHING_CODES
    add = found.append

    def observe(index: int, move: Mapping[str, Any], table: Table) -> None:
        if "swap" in move:
            _swap(move, table)
        turn = table.turn
        if table.pending:
            if table.challengeable and move.get("seat") == turn and table.ended is None:
                by = table.pending_by
                if by is not None and ("challenge" in move or "draw" in move or "play" in move):
                    add((turn, by, CHALLENGE, "challenge" in move))
            return
        target = (turn + table.direction) % table.n
        if len(table.hands[target]) > THREAT_CARDS or move.get("seat") != turn:
            return
        if table.owed or table.has_drawn:
            return
        if ("play" not in move and "draw" not in move) or table.ended is not None:
            return
        if not table.started or punishing.isdisjoint(table.hands[turn]):
            return
        if punishing.isdisjoint(table.playable(turn)):
            return
        played = move.get("play")
        first = played[0] if type(played) is list and played else played
        add((turn, target, PUNISH, type(first) is str and first in punishing))

    def _swap(move: Mapping[str, Any], table: Table) -> None:
        seat, played, swap = move.get("seat"), move.get("play"), move["swap"]
        if type(seat) is not int or not 0 <= seat < table.n or not played:
            return
        if not table.started or table.ended is not None:
            return
        kept = len(table.hands[seat]) - (len(played) if type(played) is list else 1)
        for other, hand in enumerate(table.hands):
            if other != seat and len(hand) > kept:
                add((seat, other, SWAP, swap != other))

    return observe


def chance_counts(found: Iterable[SeatChance]) -> tuple[ChanceCount, ...]:
    """The chances of one game per (actor seat, target seat, kind): how many, how many
    punished; in (actor, target, kind) order."""
    counts: dict[tuple[int, int, int], list[int]] = {}
    for actor, target, kind, punished in found:
        count = counts.get((actor, target, kind))
        if count is None:
            count = counts[actor, target, kind] = [0, 0]
        count[0] += 1
        count[1] += punished
    return tuple(
        (actor, target, kind, n, k) for (actor, target, kind), (n, k) in sorted(counts.items())
    )


def chances_of(record: Mapping[str, Any], rules: Ruleset) -> list[tuple[str, str, int, bool]]:
    """The chances of one game record as (actor id, target id, kind, punished), one per
    decision in play order; none when it has no log or its log does not replay."""
    seats = record.get("seats")
    if record.get("log") is None or not isinstance(seats, list):
        return []
    found: list[SeatChance] = []
    if not replay(record, rules, chance_observer(found)).ok:
        return []
    players = [str(seat["player"]["id"]) for seat in seats]
    return [
        (players[actor], players[target], kind, punished) for actor, target, kind, punished in found
    ]
