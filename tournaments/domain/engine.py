"""An UNO engine with simple bot players, writing move log v1 (SPEC §3, §9).

:func:`play_game` deals a shuffled deck of the ruleset and plays one game to its end (a
player goes out, or the game limit) with the moves of :class:`Bot`\\ s, each applied through
``tournaments.domain.movelog.Table``, the replay's own state: so every log it writes replays
ok by construction of the rules, and a log that did not would fail the engine at once.

The bots play plausibly, not well, and make the mistakes the rules price: they forget to
call UNO, catch others, call UNO or catch wrongly now and then, challenge a +4 and bluff one,
jump in, stack and bounce, and let the turn timer run out (``auto``). They usually punish a
threatening next player when they can, and a 7 swaps with the seat holding the fewest
cards. A colluding bot spares its partners (``soft_on``), the soft play
``integrity.domain.softplay`` looks for: it never punishes them, never challenges their +4,
and hands them its hand with a 7 when theirs is larger. Everything comes from
the ``random.Random`` given, so a seed gives the same game.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tournaments.domain.chances import PUNISHING, THREAT_CARDS
from tournaments.domain.movelog import COLOURS, Table, card_colour, card_kind
from tournaments.domain.rules import Ruleset

__all__ = ["Bot", "PlayedGame", "play_game"]

_MOVE_CAP = 5000  # a game without a time limit where no one can ever play again


@dataclass(frozen=True, slots=True)
class Bot:
    """A bot's habits, as probabilities per chance."""

    call_uno: float = 0.85
    precall_uno: float = 0.2
    catch: float = 0.5
    wrong_call: float = 0.005
    challenge: float = 0.3
    bluff: float = 0.1
    stack: float = 0.8
    jump_in: float = 0.5
    multi: float = 0.6
    play_drawn: float = 0.85
    time_out: float = 0.02
    #: How often it punishes a threatening next player when it can (+2, skip, reverse, +4).
    punish: float = 0.75
    #: The seats it spares (soft play: a colluder never punishes nor challenges its partner,
    #: and a 7 hands the partner its hand when the partner's is larger).
    soft_on: frozenset[int] = frozenset()

    def colour(self, hand: Sequence[str], rng: random.Random) -> str:
        """The colour it names: the one it holds most of (ties and none: at random)."""
        counts = Counter(card_colour(code) for code in hand if card_colour(code))
        best = max(counts.values(), default=0)
        return rng.choice([c for c in COLOURS if counts.get(c, 0) == best])

    def choose(self, table: Table, seat: int, rng: random.Random) -> dict[str, Any]:
        """Its move on its turn, among ``table.options(seat)``."""
        options = table.options(seat)
        plays = [move for move in options if "play" in move]
        others = [move for move in options if "play" not in move]
        if table.pending:
            challenge = [move for move in others if "challenge" in move]
            spared = table.pending_by in self.soft_on
            if challenge and not spared and rng.random() < self.challenge:
                return challenge[0]
            draws = [move for move in others if "draw" in move]
            if plays and (not draws or rng.random() < self.stack):
                return self._dress(table, seat, rng.choice(plays), rng)
            return draws[0]
        drew = any("pass" in move for move in others)
        target = table.next_seat(seat)
        if plays and len(table.hands[target]) <= THREAT_CARDS:
            punishers = [m for m in plays if card_kind(_first(m)) in PUNISHING]
            if punishers and target in self.soft_on:
                plays = [m for m in plays if m not in punishers]
                if not plays and others:
                    return others[0]  # it would rather draw (or pass) than punish
                plays = plays or punishers
            elif punishers and rng.random() < self.punish:
                plays = punishers
        if plays and (not drew or not others or rng.random() < self.play_drawn):
            tame = [m for m in plays if card_kind(_first(m)) != "WD4"]
            pick = rng.choice(tame if tame and rng.random() > self.bluff else plays)
            return self._dress(table, seat, pick, rng)
        return others[0]

    def _dress(
        self,
        table: Table,
        seat: int,
        move: dict[str, Any],
        rng: random.Random,
        *,
        widen: bool = True,
    ) -> dict[str, Any]:
        """Widen a single-card play to a multi-card one (叠牌) at times, and name its
        colour and swap target as this bot would."""
        hand = table.hands[seat]
        first = _first(move)
        widen = widen and table.rules.multi_play and card_kind(first) != "A"
        if widen and rng.random() < self.multi:
            same = [first] + [c for c in hand if c != first and card_kind(c) == card_kind(first)]
            twins = hand.count(first) - 1
            same[1:1] = [first] * twins
            if len(same) > 1:
                variants = table.play_variants(seat, same)
                if variants:
                    move = rng.choice(variants)
        if "color" in move:
            played = move["play"] if isinstance(move["play"], list) else [move["play"]]
            allowed = {card_colour(code) for code in played} - {""} or set(COLOURS)
            favourite = self.colour([c for c in hand if c not in played], rng)
            move = {**move, "color": favourite if favourite in allowed else min(allowed)}
        if "swap" in move:
            played = move["play"] if isinstance(move["play"], list) else [move["play"]]
            kept = len(hand) - len(played)
            gifts = [i for i in sorted(self.soft_on) if len(table.hands[i]) > kept]
            sizes = [(len(h), i) for i, h in enumerate(table.hands) if i != seat]
            move = {**move, "swap": gifts[0] if gifts else min(sizes)[1]}
        return move


def _first(move: dict[str, Any]) -> str:
    play = move["play"]
    return play[0] if isinstance(play, list) else str(play)


@dataclass(frozen=True, slots=True)
class PlayedGame:
    """A game the engine played: its move log v1, final hands, ending and length."""

    log: dict[str, Any]
    hands: list[list[str]]
    ended_by: str
    duration_ms: int


def play_game(
    rules: Ruleset,
    rng: random.Random,
    *,
    seats: int = 4,
    bots: Sequence[Bot] | None = None,
) -> PlayedGame:
    """Deal and play one game under ``rules`` with ``seats`` bots; return its log."""
    players = list(bots) if bots is not None else [Bot()] * seats
    deck = [code for code, copies in rules.table.copies.items() for _ in range(copies)]
    rng.shuffle(deck)
    size = rules.hand_size
    deal = [deck[i * size : (i + 1) * size] for i in range(seats)]
    pile = deck[seats * size :]
    first = rng.randrange(seats)
    table = Table(rules, deal, pile, first)
    moves: list[dict[str, Any]] = []
    clock = [0]

    def emit(move: dict[str, Any], *, think: bool = False) -> None:
        if think:
            clock[0] += rng.randint(300, 2500)
        table.apply({"t": clock[0], **move})
        moves.append({"t": clock[0], **move})

    while not table.started:
        emit({"flip": table.pile[-1]})
    limit = None if rules.game_seconds is None else rules.game_seconds * 1000
    turn_ms = None if rules.turn_seconds is None else rules.turn_seconds * 1000
    while True:
        if len(moves) > _MOVE_CAP:
            raise RuntimeError(f"no end after {_MOVE_CAP} moves (rules {rules.to_spec()})")
        if not table.pile and len(table.discard) > 1:
            fresh = table.discard[:-1]
            rng.shuffle(fresh)
            emit({"reshuffle": fresh})
            continue
        if table.ended is not None:
            if table.ended == "out" and table.final_owed and table.pile:
                emit({"seat": table.turn, "draw": min(table.final_owed, len(table.pile))})
                continue
            break
        if limit is not None and clock[0] + 2500 > limit:
            clock[0] = limit
            emit({"end": "time"})
            break
        if table.owed:
            owed = table.owed[0]
            emit({"seat": owed.seat, "draw": min(owed.cards, len(table.pile))})
            continue
        seat = table.turn
        bot = players[seat]
        if rng.random() < bot.wrong_call:
            _mistake(table, rng, emit)
            continue
        jumpers = [s for s in range(seats) if s != seat and table.jump_ins(s)]
        if jumpers and rng.random() < players[jumpers[0]].jump_in:
            jumper = rng.choice(jumpers)
            move = players[jumper]._dress(
                table, jumper, table.jump_ins(jumper)[0], rng, widen=False
            )
            emit(move, think=True)
            _after_play(table, jumper, players, rng, emit)
            continue
        if (
            len(table.hands[seat]) == 2
            and not table.pending
            and not table.owed
            and rng.random() < bot.precall_uno
            and any("play" in m for m in table.options(seat))
        ):
            emit({"seat": seat, "uno": True})
        move = bot.choose(table, seat, rng)
        late = None if turn_ms is None else clock[0] + turn_ms + 400
        if late is not None and (limit is None or late < limit) and rng.random() < bot.time_out:
            clock[0] = late
            emit({**move, "auto": True})
        else:
            emit(move, think=True)
        if "play" in move:
            _after_play(table, seat, players, rng, emit)
    return PlayedGame(
        log={"v": 1, "deal": deal, "pile": pile, "first": first, "moves": moves},
        hands=[list(hand) for hand in table.hands],
        ended_by="time" if table.ended == "time" else "out",
        duration_ms=clock[0],
    )


def _after_play(
    table: Table, seat: int, players: Sequence[Bot], rng: random.Random, emit: Any
) -> None:
    """The UNO call of a player left with one card, or a catch by another."""
    if seat not in table.catchable():
        return
    if rng.random() < players[seat].call_uno:
        emit({"seat": seat, "uno": True})
        return
    catchers = [s for s in range(table.n) if s != seat]
    catcher = rng.choice(catchers)
    if rng.random() < players[catcher].catch:
        emit({"seat": catcher, "catch": seat})


def _mistake(table: Table, rng: random.Random, emit: Any) -> None:
    """A wrong UNO call or a wrong catch, which costs its caller two cards."""
    seat = rng.randrange(table.n)
    others = [s for s in range(table.n) if s != seat and s not in table.catchable()]
    if len(table.hands[seat]) > 2 or not others:
        emit({"seat": seat, "uno": True})
    else:
        emit({"seat": seat, "catch": rng.choice(others)})
