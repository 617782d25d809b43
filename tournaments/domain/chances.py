"""Chances to punish, read from a replayed move log (SPEC §9 move log v1; the soft-play
detector's data, ``integrity.domain.softplay``).

A **chance** is a turn on which a player (the actor) decides freely — the first move of the
turn, not facing a draw owed — while the next player is threatening (two cards or fewer,
which covers a called UNO) and the actor holds a legal punishing card: a +2, a skip, a
reverse or a +4, each of which stops the next player's coming turn. The actor **punishes**
when that first move plays one of them. Read in the replay's own pass (its observer), so a
log is replayed once for its verdict and its chances together.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from tournaments.domain.movelog import Table, card_kind, replay
from tournaments.domain.rules import Ruleset

__all__ = ["PUNISHING", "THREAT_CARDS", "chances_of"]

#: The cards that stop the next player's coming turn.
PUNISHING: Final = frozenset({"D2", "WD4", "S", "R"})
#: A next player with this many cards or fewer is threatening (an UNO call means one).
THREAT_CARDS: Final = 2


def chances_of(record: Mapping[str, Any], rules: Ruleset) -> list[tuple[str, str, bool]]:
    """The chances to punish of one game record as (actor id, target id, punished); none
    when it has no log or its log does not replay."""
    seats = record.get("seats")
    if record.get("log") is None or not isinstance(seats, list):
        return []
    players = [str(seat["player"]["id"]) for seat in seats]
    found: list[tuple[str, str, bool]] = []

    def observe(index: int, move: Mapping[str, Any], table: Table) -> None:
        seat = move.get("seat")
        if seat is None or ("play" not in move and "draw" not in move):
            return
        if seat != table.turn or table.pending or table.owed or table.has_drawn:
            return
        if table.ended is not None or not table.started:
            return
        target = table.next_seat(seat)
        if len(table.hands[target]) > THREAT_CARDS:
            return
        if not any(card_kind(code) in PUNISHING for code in table.playable(seat)):
            return
        played = move.get("play")
        first = played[0] if isinstance(played, list) else played
        punished = isinstance(first, str) and card_kind(first) in PUNISHING
        found.append((players[seat], players[target], punished))

    if not replay(record, rules, observe).ok:
        return []
    return found
