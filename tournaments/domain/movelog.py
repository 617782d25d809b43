"""Move log v1 and its replay (SPEC §9 "Move log v1", §3 rulesets of play; seeds: the rules).

:func:`replay` follows a game record's log under a :class:`~tournaments.domain.rules.Ruleset`
and gives the verdict: ok, or the first move that breaks the rules, with its index and why
("move 17: seat 2 plays G5 on R3"). It checks that the deal and the pile are exactly one
deck, every move (the card is in hand and legal; turn order, direction and skips; the draws
owed; challenges decided from the hands; UNO calls and catches; 7-0 swaps and rotations;
jump-ins; multi-card plays; the special cards; the time limits) and that the final hands and
the ending equal the record's.

:class:`Table` is the game's state. It applies one move at a time (:meth:`Table.apply`,
raising :class:`MoveError`) and says what a seat may do (:meth:`Table.options`,
:meth:`Table.playable`): the engine (``tournaments.domain.engine``) plays games with it, and
an observer passed to :func:`replay` sees the state before every move, so a detector reads
hands, whose turn it is and what each player could have played without a second pass.

The rules as the replay applies them (the seeds' text, and our decisions where it is
silent; docs/decisions.md "Rules of play"):

* **Start.** The first moves are ``flip``s. Under ``start_card: mattel`` a +4 start card is
  flipped over again (it stays under the new one); a skip skips the first player, a +2 makes
  the first player draw 2 and lose the turn, a reverse lets the seat before ``first`` (the
  dealer) play first with the direction reversed, a wild leaves no colour (any card may be
  played). Under ``start_card: number`` every start card that is not a number is flipped
  over again.
* **Playing.** A card matches the active colour or the top card's number or action; a wild
  always matches (a +4 is legal only without a card of the active colour, which only a
  challenge tests). ``color`` names the colour after a wild, or after a multi-card play of
  several colours (it must be one of theirs).
* **Drawing.** Every draw is written. A voluntary draw is one card (``until_playable``: up to
  and including the first playable card of the pile); then the player plays (``one_only``:
  only the drawn card) or passes. ``forced_play``: a player who can play may not draw, and
  must play a playable drawn card. A draw the pile cannot cover takes what is there, then a
  ``reshuffle`` (allowed only on an empty pile) and the rest; with nothing to reshuffle the
  rest is forgiven, and a player who cannot draw may pass.
* **Penalties.** A +2 (+4) makes the next player draw 2 (4) and lose the turn, unless they
  stack (``stacking``) or bounce it with ``WB``, which reverses the direction and sends the
  whole draw back to the player who played it. A single +4 not played on a stack may be
  challenged by its target: guilty (its player held a card of the active colour), its player
  draws 4 and the challenger plays on; innocent, the challenger draws 6 and loses the turn.
  Under ``forced`` stacking a target holding a card that stacks must stack.
* **Going out** ends the game. When the last card is a +2 or +4 the next player still draws
  (the whole stack; no stacking, no challenge). A last 7 or 0 swaps nothing.
* **UNO.** A player whose own play leaves one card may be caught (``catch``) until the next
  play, pass, turn draw or challenge of another seat, unless they called ``uno`` first
  (before the play on their turn, or after it). A caught player draws 2; a wrong call or a
  wrong catch costs its caller 2. These penalty draws are the next moves. A hand received by a
  7-swap or a 0-rotation needs no call.
* **Jump-in** (抢牌): a card identical to the top card (same code; ``identical_numbers``:
  number cards only) played out of turn by a seat other than the one that played it. The
  jumped card's pending draw is void (a reverse's turn of direction too); play goes on from the
  jumper.
* **Multi-card plays** (叠牌, ``multi_play``): cards of one number or one action, at least one
  of which could be played alone. n skips skip n players; n reverses turn the direction when
  n is odd; n +2 (+4) make a draw of 2n (4n); n wilds are one wild; n 7s swap once, n 0s
  rotate once. A multi-card +4 cannot be challenged.
* **同色全出** (``RA``…, happy deck): a play that starts with it, followed by every other card
  of its colour in the hand; the top card is the ``A`` card, and the other cards' effects are
  void.
* **Two players**: a skip, and a reverse under ``two_player_reverse: skip``, give the player
  another turn.
* **Time**: ``t`` never decreases; a move of the player whose turn it is, not marked ``auto``,
  comes at most ``turn_seconds`` (``final_minute_turn_seconds`` in the game's last minute)
  after the move before it; no move comes after the game limit but ``{"end": "time"}``, at or
  after it.
"""

from __future__ import annotations

import math
import reprlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NoReturn, cast

from tournaments.domain.cards import TABLES
from tournaments.domain.rules import Ruleset

__all__ = [
    "MoveError",
    "Table",
    "Verdict",
    "card_colour",
    "card_kind",
    "replay",
]

COLOURS: Final = ("R", "Y", "G", "B")
_REPR: Final = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 40
_REPR.maxlevel = 2
#: Each action, and the keys a move with it may hold (SPEC §9); anything else is refused, so
#: a log that replays holds only card codes, colours, numbers and these keys.
_ACTIONS: Final[Mapping[str, frozenset[str]]] = {
    action: frozenset({"t", action, *extra})
    for action, extra in (
        ("play", ("seat", "color", "swap", "auto")),
        ("draw", ("seat", "auto")),
        ("pass", ("seat", "auto")),
        ("uno", ("seat",)),
        ("catch", ("seat",)),
        ("challenge", ("seat", "auto")),
        ("flip", ()),
        ("reshuffle", ()),
        ("end", ()),
    )
}
_LOG_KEYS: Final = frozenset({"v", "deal", "pile", "first", "moves"})


def _card_info() -> dict[str, tuple[str, str]]:
    info: dict[str, tuple[str, str]] = {}
    for table in TABLES.values():
        for code in table.points:
            if code in ("W", "WD4", "WB"):
                info[code] = ("", code)
            else:
                info[code] = (code[0], code[1:])
    return info


_INFO: Final = _card_info()
_NUMBERS: Final = frozenset("0123456789")
_PENALTY: Final = {"D2": 2, "WD4": 4}
_STACKS_ON: Final[Mapping[str, Mapping[str, frozenset[str]]]] = {
    "none": {"D2": frozenset(), "WD4": frozenset()},
    "same": {"D2": frozenset({"D2"}), "WD4": frozenset({"WD4"})},
    "seeds": {"D2": frozenset({"D2", "WD4"}), "WD4": frozenset({"WD4"})},
    "forced": {"D2": frozenset({"D2", "WD4"}), "WD4": frozenset({"WD4"})},
}


def _show(value: object) -> str:
    """A value as the log gave it, shortened (a verdict quotes what it read)."""
    return _REPR.repr(value)


def card_colour(code: str) -> str:
    """The card's colour letter, or "" for a wild."""
    return _INFO[code][0]


def card_kind(code: str) -> str:
    """The card's number ("0"–"9") or action ("S", "R", "D2", "A", "W", "WD4", "WB")."""
    return _INFO[code][1]


class MoveError(ValueError):
    """A move the rules do not allow; the message says why."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """The replay's verdict: ``ok``, else ``move`` (the index of the first bad move, None
    for a fault of the whole log) and ``reason``."""

    ok: bool
    move: int | None = None
    reason: str | None = None

    def __str__(self) -> str:
        if self.ok:
            return "ok"
        return f"{self.reason}" if self.move is None else f"move {self.move}: {self.reason}"


def _counts_text(cards: Counter[str]) -> str:
    return " ".join(sorted(cards.elements())) or "nothing"


@dataclass(slots=True)
class _Owed:
    """A draw a seat owes as its next move: a penalty (``skip``: it then loses the turn)."""

    seat: int
    cards: int
    skip: bool


class Table:
    """The state of one game under a ruleset, moved on by :meth:`apply`.

    ``hands[i]`` seat i's cards; ``pile`` the draw pile (top last, so a draw pops);
    ``discard`` the discard pile (top last); ``colour`` the active colour (None: any);
    ``turn`` and ``direction`` (+1 in seat order, -1 reversed); ``pending`` the penalty draw
    the player whose turn it is faces (``pending_kind`` D2 or WD4, ``pending_by`` who played
    it); ``owed`` the penalty draws due as the next moves; ``out`` the seat that went out.
    """

    __slots__ = (
        "_catchable",
        "_challengeable",
        "_called",
        "_drew",
        "_final_minute_from",
        "_final_minute_ms",
        "_final_owed",
        "_game_ms",
        "_guilty",
        "_last_t",
        "_started",
        "_top_by",
        "_turn_ms",
        "_until",
        "colour",
        "direction",
        "discard",
        "ended",
        "hands",
        "n",
        "out",
        "owed",
        "pending",
        "pending_by",
        "pending_kind",
        "pile",
        "rules",
        "turn",
    )

    def __init__(
        self, rules: Ruleset, deal: Sequence[Sequence[str]], pile: Sequence[str], first: int = 0
    ) -> None:
        self.rules = rules
        self.n = len(deal)
        self.hands: list[list[str]] = [list(hand) for hand in deal]
        self.pile: list[str] = list(reversed(pile))
        self.discard: list[str] = []
        self.colour: str | None = None
        self.turn = first
        self.direction = 1
        self.pending = 0
        self.pending_kind = ""
        self.pending_by: int | None = None
        self.owed: list[_Owed] = []
        self.out: int | None = None
        self.ended: str | None = None
        self._started = False
        self._challengeable = False
        self._guilty = False
        self._drew: list[str] | None = None
        self._until = False
        self._top_by: int | None = None
        self._final_owed = 0
        self._catchable: set[int] = set()
        self._called: set[int] = set()
        self._last_t = 0
        # The time limits in milliseconds (SPEC §3): the game's (infinite when none), the
        # turn's, and from when the last minute's shorter turn applies.
        game, turn = rules.game_seconds, rules.turn_seconds
        last_minute = rules.final_minute_turn_seconds
        self._game_ms: float = math.inf if game is None else game * 1000
        self._turn_ms = None if turn is None else turn * 1000
        self._final_minute_from: float = math.inf
        self._final_minute_ms = self._turn_ms or 0
        if game is not None and last_minute is not None:
            self._final_minute_from = (game - 60) * 1000
            self._final_minute_ms = last_minute * 1000

    # -- what a seat may do ------------------------------------------------------------

    @property
    def started(self) -> bool:
        """Whether the start card has been accepted and play has begun."""
        return self._started

    @property
    def challengeable(self) -> bool:
        """Whether the player whose turn it is may challenge the +4 it faces."""
        return self._challengeable

    @property
    def has_drawn(self) -> bool:
        """Whether the player whose turn it is has drawn on this turn already."""
        return self._drew is not None

    def next_seat(self, seat: int) -> int:
        """The seat after ``seat`` in the current direction of play."""
        return (seat + self.direction) % self.n

    @property
    def final_owed(self) -> int:
        """The cards the next player still owes after a last card that was a +2 or +4."""
        return self._final_owed

    @property
    def top(self) -> str:
        """The top card of the discard pile."""
        return self.discard[-1]

    def _matches(self, code: str) -> bool:
        colour, kind = _INFO[code]
        if not colour or self.colour is None:
            return True
        return colour == self.colour or kind == _INFO[self.discard[-1]][1]

    def _stackable(self, code: str) -> bool:
        kind = _INFO[code][1]
        if kind == "WB":
            return self.pending_by is not None
        return kind in _STACKS_ON[self.rules.stacking][self.pending_kind]

    def playable(self, seat: int) -> list[str]:
        """The cards of ``seat``'s hand it could play alone on its turn now (ignoring the
        draw-first and last-card rules): a stack or a bounce while it faces a penalty."""
        hand = self.hands[seat]
        if self.pending:
            return [code for code in hand if self._stackable(code)]
        return [code for code in hand if self._matches(code)]

    def _can_draw(self) -> bool:
        return bool(self.pile) or len(self.discard) > 1

    def options(self, seat: int) -> list[dict[str, Any]]:
        """The moves ``seat`` may make now as the player whose turn it is (single-card
        plays with every colour choice and swap target, challenge, draw, pass); empty when
        it is not this seat's turn to act. Jump-ins, UNO calls and catches are left to the
        caller (``jump_ins``)."""
        if self.ended or self.owed or seat != self.turn:
            return []
        moves: list[dict[str, Any]] = []
        if self._until:
            return [{"seat": seat, "draw": self._voluntary_draw()}]
        drew = self._drew
        candidates = self.playable(seat)
        if drew is not None and self.rules.draw == "one_only":
            candidates = [code for code in candidates if code == drew[-1]]
        for code in dict.fromkeys(candidates):
            moves.extend(self.play_variants(seat, [code]))
        if self.pending:
            if self._challengeable:
                moves.append({"seat": seat, "challenge": True})
            if not (self.rules.stacking == "forced" and candidates):
                moves.append({"seat": seat, "draw": min(self.pending, len(self.pile))})
            return moves
        if drew is None:
            if self._can_draw() and not (self.rules.forced_play and candidates):
                moves.append({"seat": seat, "draw": self._voluntary_draw()})
            elif not self._can_draw():
                moves.append({"seat": seat, "pass": True})
        elif not (self.rules.forced_play and drew[-1] in candidates):
            moves.append({"seat": seat, "pass": True})
        return moves

    def play_variants(self, seat: int, cards: list[str]) -> list[dict[str, Any]]:
        """Every way ``seat`` may write a play of ``cards`` (colours, swap targets); a
        同色全出 card takes the rest of its colour with it; empty when a last card must be
        a number and is not."""
        last = len(cards) == len(self.hands[seat])
        if (
            last
            and self.rules.last_card_number
            and not all(_INFO[code][1] in _NUMBERS for code in cards)
        ):
            return []
        if _INFO[cards[0]][1] == "A":  # 同色全出 takes every other card of its colour
            colour = _INFO[cards[0]][0]
            rest = list(self.hands[seat])
            rest.remove(cards[0])
            cards = [cards[0], *(code for code in rest if _INFO[code][0] == colour)]
            last = len(cards) == len(self.hands[seat])
        colours = {_INFO[code][0] for code in cards}
        play: Any = cards[0] if len(cards) == 1 else list(cards)
        if _INFO[cards[0]][1] == "A":
            variants = [{"seat": seat, "play": play}]
        elif "" in colours:
            variants = [{"seat": seat, "play": play, "color": c} for c in COLOURS]
        elif len(colours) > 1:
            variants = [{"seat": seat, "play": play, "color": c} for c in sorted(colours)]
        else:
            variants = [{"seat": seat, "play": play}]
        if self.rules.seven_zero and _INFO[cards[0]][1] == "7" and not last:
            variants = [
                {**variant, "swap": other}
                for variant in variants
                for other in range(self.n)
                if other != seat
            ]
        return variants

    def jump_ins(self, seat: int) -> list[dict[str, Any]]:
        """The jump-ins ``seat`` may make now (every colour choice and swap target)."""
        if not self._jump_allowed(seat):
            return []
        top = self.discard[-1]
        if top not in self.hands[seat]:
            return []
        return self.play_variants(seat, [top])

    def _jump_allowed(self, seat: int) -> bool:
        mode = self.rules.jump_in
        if mode == "none" or self.ended or self.owed or not self._started:
            return False
        if seat == self.turn or self._top_by is None or seat == self._top_by:
            return False
        kind = _INFO[self.discard[-1]][1]
        return kind in _NUMBERS or (mode == "all" and kind != "A")

    def catchable(self) -> set[int]:
        """The seats that may be caught now for a missed UNO call."""
        return set(self._catchable)

    def _voluntary_draw(self) -> int:
        if self.rules.draw != "until_playable":
            return 1
        count = 0
        for code in reversed(self.pile):
            count += 1
            if self._matches(code):
                return count
        return max(count, 1) if self.pile else 1

    # -- applying moves ----------------------------------------------------------------

    def apply(self, move: Mapping[str, Any]) -> None:
        """Apply one move of the log; a MoveError leaves the state as it was."""
        t = move.get("t")
        if type(t) is not int or t < 0:
            raise MoveError(f"t must be a whole number of milliseconds >= 0, got {_show(t)}")
        if t < self._last_t:
            raise MoveError(f"t {t} is before the move before it ({self._last_t})")
        for action in _ACTIONS:
            if action in move:
                break
        else:
            raise MoveError(f"no action in the move (one of {', '.join(_ACTIONS)})")
        keys = _ACTIONS[action]
        if not move.keys() <= keys:
            extra = sorted(str(key) for key in move.keys() - keys)
            raise MoveError(f"a {action} move may not hold {_show(extra[0])}")
        auto = move.get("auto", False)
        if type(auto) is not bool:
            raise MoveError(f"auto must be true or false, got {_show(auto)}")
        if action in ("uno", "pass", "challenge") and move[action] is not True:
            raise MoveError(f"{action} must be true, got {_show(move[action])}")
        if action == "end":
            self._end(move, t)
        elif t > self._game_ms:
            raise MoveError(f"t {t} is after the game limit of {self.rules.game_seconds} s")
        elif self.ended is not None:
            if self._final_owed and action == "draw":
                self._final_draw(move)
            else:
                raise MoveError(f"the game is over (seat {self.out} went out)")
        elif action == "play":
            self._play(move, t)
        elif action == "draw":
            self._draw(move, t)
        elif action == "pass":
            self._pass(move, t)
        elif action == "uno":
            self._uno(move)
        elif action == "catch":
            self._catch(move)
        elif action == "challenge":
            self._challenge(move, t)
        elif action == "flip":
            self._flip(move)
        else:
            self._reshuffle(move)
        self._last_t = t

    def _seat(self, move: Mapping[str, Any]) -> int:
        seat = move.get("seat")
        if type(seat) is not int or not 0 <= seat < self.n:
            raise MoveError(f"seat must be 0 to {self.n - 1}, got {_show(seat)}")
        if not self._started:
            raise MoveError("no start card has been flipped")
        return seat

    def _timed(self, move: Mapping[str, Any], t: int) -> None:
        """Check the turn timer of a move by the player whose turn it is."""
        limit = self._turn_ms
        if limit is None or move.get("auto") is True:
            return
        if t >= self._final_minute_from:
            limit = self._final_minute_ms
        if t - self._last_t > limit:
            raise MoveError(
                f"seat {move['seat']} acts {t - self._last_t} ms after the move before, "
                f"over the {limit // 1000} s turn limit, and the move is not marked auto"
            )

    def _next(self, seat: int, steps: int = 1) -> int:
        return (seat + self.direction * steps) % self.n

    def _close_windows(self, seat: int) -> None:
        """A play, pass, turn draw or challenge of ``seat`` ends others' UNO windows."""
        if self._catchable:
            self._catchable.intersection_update({seat})

    def _flip(self, move: Mapping[str, Any]) -> None:
        if self._started:
            raise MoveError("a flip after the game has started")
        if not self.pile:
            raise MoveError("flip: the pile is empty")
        code = self.pile[-1]
        if move["flip"] != code:
            raise MoveError(f"flip shows {_show(move['flip'])} but the pile's top card is {code}")
        self.discard.append(self.pile.pop())
        colour, kind = _INFO[code]
        if self.rules.start_card == "number":
            if kind in _NUMBERS:
                self._start(colour)
            return
        if kind == "WD4":
            return
        if colour == "":
            self._start(None)
            return
        self._start(colour)
        first = self.turn
        if kind == "S":
            self.turn = self._next(first)
        elif kind == "R":
            self.direction = -1
            self.turn = (first - 1) % self.n
        elif kind == "D2":
            self.pending, self.pending_kind, self.pending_by = 2, "D2", None

    def _start(self, colour: str | None) -> None:
        self._started = True
        self.colour = colour

    def _end(self, move: Mapping[str, Any], t: int) -> None:
        how = move["end"]
        if how == "out":
            if self.ended != "out" or self._final_owed:
                raise MoveError("end out, but no one has gone out and drawn what was owed")
            self.ended = "out!"
            return
        if how != "time":
            raise MoveError(f"end must be 'time' (or 'out'), got {_show(how)}")
        if self.ended is not None:
            raise MoveError(f"end time, but the game is over (seat {self.out} went out)")
        limit = self.rules.game_seconds
        if limit is None:
            raise MoveError("end time, but the ruleset has no game time limit")
        if t < limit * 1000:
            raise MoveError(f"end time at t {t}, before the game limit of {limit} s")
        if not self._started:
            raise MoveError("no start card has been flipped")
        self.ended = "time"

    def _play(self, move: Mapping[str, Any], t: int) -> None:
        seat = self._seat(move)
        if self.owed:
            owed = self.owed[0]
            raise MoveError(f"seat {owed.seat} must draw {owed.cards} first")
        raw = move["play"]
        cards: list[str] = [raw] if type(raw) is str else raw
        if type(cards) is not list or not cards:
            raise MoveError(f"play must be a card code or a list of them, got {_show(raw)}")
        kept = self.hands[seat].copy()
        for code in cards:
            try:
                kept.remove(code)
            except ValueError:
                if type(code) is not str or code not in _INFO:
                    raise MoveError(f"seat {seat} plays an unknown card {_show(code)}") from None
                raise MoveError(f"seat {seat} plays {code}, which is not in its hand") from None
        first = cards[0]
        colour, kind = _INFO[first]
        single = len(cards) == 1
        jump = seat != self.turn
        if jump:
            if not self._jump_allowed(seat) or not single or first != self.discard[-1]:
                raise MoveError(f"seat {seat} plays {first} out of turn (seat {self.turn}'s turn)")
        else:
            if self._until:
                raise MoveError(f"seat {seat} must draw until it can play")
            self._timed(move, t)
            if single and not self.pending and self._drew is None:
                if not self._matches(first):
                    self._mismatch(seat, first)
            else:
                self._check_turn_play(seat, cards, kind)
        if not single or kind == "A":
            self._check_multi(seat, cards, kind, kept)
        out = not kept
        if (
            out
            and self.rules.last_card_number
            and not all(_INFO[code][1] in _NUMBERS for code in cards)
        ):
            raise MoveError(f"seat {seat}'s last card must be a number card, not {first}")
        chosen = move.get("color")
        if single and colour:
            if chosen is not None and chosen != colour:
                raise MoveError(f"seat {seat} names colour {_show(chosen)} for a {colour} play")
        else:
            colour = self._colour_after(seat, chosen, cards, kind)
        swap = move.get("swap")
        swaps = self.rules.seven_zero and kind == "7" and not out
        if swap is not None and not swaps:
            raise MoveError(f"seat {seat} swaps hands, but {first} is not a 7 that swaps")
        if swaps and (type(swap) is not int or not 0 <= swap < self.n or swap == seat):
            raise MoveError(f"seat {seat} plays a 7 and must swap with another seat")
        if kind == "WD4" and not self.pending and single:
            self._guilty = self.colour is not None and any(
                _INFO[code][0] == self.colour for code in kept
            )
            self._challengeable = self.rules.challenge
        else:
            self._challengeable = False
        if jump:
            self._undo_jumped()
        self._close_windows(seat)
        if len(kept) != 1:
            self._called.discard(seat)
            self._catchable.discard(seat)
        elif seat not in self._called:
            self._catchable.add(seat)
        self.hands[seat] = kept
        if kind == "A":
            self.discard.extend(cards[1:])
            self.discard.append(first)
        else:
            self.discard.extend(cards)
        self.colour = colour
        self._top_by = seat
        self._drew = None
        self._until = False
        self._effect(seat, kind, len(cards), swap, out)
        if out:
            self._catchable.clear()
            self.out = seat
            self.ended = "out"
            self._final_owed = self.pending

    def _undo_jumped(self) -> None:
        """Void the jumped card's effect: its pending draw, and a reverse's turn."""
        kind = _INFO[self.discard[-1]][1]
        if self.pending and self.pending_by == self._top_by:
            self.pending, self.pending_kind, self.pending_by = 0, "", None
        if kind == "R":
            self.direction = -self.direction

    def _check_turn_play(self, seat: int, cards: list[str], kind: str) -> None:
        first = cards[0]
        if self.pending:
            if not all(self._stackable(code) for code in cards):
                raise MoveError(
                    f"seat {seat} must draw {self.pending} or stack on {self.pending_kind}, "
                    f"not play {first}"
                )
            return
        drew = self._drew
        if drew is not None and self.rules.draw == "one_only" and cards != [drew[-1]]:
            raise MoveError(f"seat {seat} drew {drew[-1]} and may play only that card")
        if not any(self._matches(code) for code in cards):
            self._mismatch(seat, first)

    def _mismatch(self, seat: int, first: str) -> NoReturn:
        """Refuse a card that matches neither the colour nor the top card."""
        top = self.discard[-1]
        shown = top if self.colour is None or _INFO[top][0] else f"{top} ({self.colour})"
        raise MoveError(f"seat {seat} plays {first} on {shown}")

    def _check_multi(self, seat: int, cards: list[str], kind: str, kept: list[str]) -> None:
        if kind == "A":
            colour = _INFO[cards[0]][0]
            if any(_INFO[code][0] != colour for code in cards[1:]):
                raise MoveError(f"seat {seat} plays {cards[0]} with a card of another colour")
            left = [code for code in kept if _INFO[code][0] == colour]
            if left:
                raise MoveError(f"seat {seat} plays {cards[0]} but keeps {left[0]} of its colour")
            return
        if not self.rules.multi_play:
            raise MoveError(f"seat {seat} plays {len(cards)} cards, but multi-card plays are off")
        if any(_INFO[code][1] != kind for code in cards):
            raise MoveError(f"seat {seat} plays {' '.join(cards)}: not one number or one action")

    def _colour_after(self, seat: int, chosen: object, cards: list[str], kind: str) -> str:
        colours = {_INFO[code][0] for code in cards} if kind != "A" else {_INFO[cards[0]][0]}
        if "" in colours:
            if chosen not in COLOURS:
                raise MoveError(f"seat {seat} plays {cards[0]} and must name a colour R Y G B")
            return str(chosen)
        if len(colours) == 1:
            (colour,) = colours
            if chosen is not None and chosen != colour:
                raise MoveError(f"seat {seat} names colour {_show(chosen)} for a {colour} play")
            return colour
        if chosen not in colours:
            raise MoveError(
                f"seat {seat} must name one of the colours played ({' '.join(sorted(colours))})"
            )
        return str(chosen)

    def _effect(self, seat: int, kind: str, count: int, swap: object, out: bool) -> None:
        n = self.n
        if kind == "WB" and self.pending and self.pending_by is not None:
            # Bounce: the direction turns and the whole draw goes back to its player.
            self.direction = -self.direction
            self.turn, self.pending_by = self.pending_by, seat
            return
        if kind in _PENALTY:
            self.pending += _PENALTY[kind] * count
            self.pending_kind, self.pending_by = kind, seat
            self.turn = self._next(seat)
            return
        if out:
            return
        if kind == "S":
            self.turn = self._next(seat, 1 + count)
        elif kind == "R":
            if count % 2:
                self.direction = -self.direction
                if n == 2 and self.rules.two_player_reverse == "skip":
                    self.turn = seat
                    return
            self.turn = self._next(seat)
        elif kind == "7" and self.rules.seven_zero:
            swap = cast("int", swap)  # checked by _play
            hands = self.hands
            hands[seat], hands[swap] = hands[swap], hands[seat]
            self._reset_calls()
            self.turn = self._next(seat)
        elif kind == "0" and self.rules.seven_zero:
            step = self.direction
            self.hands = [self.hands[(i - step) % n] for i in range(n)]
            self._reset_calls()
            self.turn = self._next(seat)
        else:
            self.turn = self._next(seat)

    def _reset_calls(self) -> None:
        self._catchable.clear()
        self._called.clear()

    def _take(self, seat: int, count: int, move: Mapping[str, Any]) -> int:
        """Move ``count`` cards from the pile to ``seat``; return how many were taken."""
        if type(count) is not int or count < 1:
            raise MoveError(f"draw must be a whole number >= 1, got {_show(count)}")
        if count > len(self.pile):
            raise MoveError(f"seat {seat} draws {count} but the pile holds {len(self.pile)}")
        pile = self.pile
        taken = pile[-count:]
        del pile[-count:]
        taken.reverse()
        self.hands[seat].extend(taken)
        if len(self.hands[seat]) != 1:
            self._catchable.discard(seat)
            self._called.discard(seat)
        return count

    def _owing(self, seat: int, count: object, owed: int, what: str) -> None:
        """Check a draw of ``count`` against ``owed``: all of it, or all the pile holds."""
        if count == owed or (type(count) is int and count == len(self.pile) < owed):
            if cast("int", count) > len(self.pile):
                raise MoveError(f"seat {seat} draws {count} but the pile holds {len(self.pile)}")
            return
        raise MoveError(f"seat {seat} must draw {owed} ({what}), drew {_show(count)}")

    def _draw(self, move: Mapping[str, Any], t: int) -> None:
        seat = self._seat(move)
        count = move["draw"]
        if self.owed:
            owed = self.owed[0]
            if seat != owed.seat:
                raise MoveError(f"seat {owed.seat} must draw {owed.cards} first, not seat {seat}")
            self._owing(seat, count, owed.cards, "a penalty")
            owed.cards -= self._take(seat, count, move)
            if owed.cards and not self._can_draw():
                owed.cards = 0
            if not owed.cards:
                self.owed.pop(0)
                if owed.skip:
                    self.turn = self._next(seat)
                    self._drew = None
            return
        if seat != self.turn:
            raise MoveError(f"seat {seat} draws, but it is seat {self.turn}'s turn")
        self._timed(move, t)
        if self.pending:
            if self.rules.stacking == "forced" and self.playable(seat):
                raise MoveError(f"seat {seat} holds a card that stacks and must stack")
            self._owing(seat, count, self.pending, f"the {self.pending_kind} penalty")
            self._close_windows(seat)
            rest = self.pending - self._take(seat, count, move)
            self.pending, self.pending_kind, self.pending_by = 0, "", None
            self._challengeable = False
            if rest and self._can_draw():  # the rest after a reshuffle, then the turn is lost
                self.owed.append(_Owed(seat, rest, skip=True))
            else:
                self.turn = self._next(seat)
            return
        if self._drew is not None and not self._until:
            raise MoveError(f"seat {seat} has drawn already this turn")
        if not self._until and self.rules.forced_play and self.playable(seat):
            raise MoveError(f"seat {seat} can play and may not draw (forced play)")
        wanted = self._voluntary_draw()
        if count != wanted:
            raise MoveError(f"seat {seat} must draw {wanted}, drew {_show(count)}")
        self._close_windows(seat)
        self._take(seat, count, move)
        drawn = self.hands[seat][-count:]
        self._drew = drawn
        # Drawing until playable goes on after a reshuffle when the pile ran out first.
        self._until = (
            self.rules.draw == "until_playable"
            and not self._matches(drawn[-1])
            and self._can_draw()
        )

    def _final_draw(self, move: Mapping[str, Any]) -> None:
        seat = self._seat(move)
        if seat != self.turn:
            raise MoveError(f"seat {self.turn} must draw {self._final_owed}, not seat {seat}")
        self._owing(seat, move["draw"], self._final_owed, "the last card's penalty")
        self._final_owed -= self._take(seat, move["draw"], move)
        if self._final_owed and not self._can_draw():
            self._final_owed = 0
        self.pending = self._final_owed

    def _pass(self, move: Mapping[str, Any], t: int) -> None:
        seat = self._seat(move)
        if self.owed:
            owed = self.owed[0]
            raise MoveError(f"seat {owed.seat} must draw {owed.cards} first")
        if seat != self.turn:
            raise MoveError(f"seat {seat} passes, but it is seat {self.turn}'s turn")
        if self.pending:
            raise MoveError(f"seat {seat} must draw {self.pending}, not pass")
        drew = self._drew
        if drew is None:
            if self._can_draw():
                raise MoveError(f"seat {seat} passes without drawing")
        elif self._until:
            raise MoveError(f"seat {seat} must draw until it can play")
        elif (
            self.rules.forced_play
            and self._matches(drew[-1])
            and (not self.rules.last_card_number or len(self.hands[seat]) > 1)
        ):
            raise MoveError(f"seat {seat} drew {drew[-1]}, which it must play (forced play)")
        self._timed(move, t)
        self._close_windows(seat)
        self._drew = None
        self.turn = self._next(seat)

    def _uno(self, move: Mapping[str, Any]) -> None:
        seat = self._seat(move)
        size = len(self.hands[seat])
        if size == 1 or (size == 2 and seat == self.turn and not self.pending):
            self._called.add(seat)
            self._catchable.discard(seat)
            return
        self.owed.append(_Owed(seat, 2, skip=False))

    def _catch(self, move: Mapping[str, Any]) -> None:
        seat = self._seat(move)
        target = move["catch"]
        if type(target) is not int or not 0 <= target < self.n or target == seat:
            raise MoveError(f"seat {seat} catches {_show(target)}, not another seat")
        if target in self._catchable:
            self._catchable.discard(target)
            self.owed.append(_Owed(target, 2, skip=False))
        else:
            self.owed.append(_Owed(seat, 2, skip=False))

    def _challenge(self, move: Mapping[str, Any], t: int) -> None:
        seat = self._seat(move)
        if self.owed:
            owed = self.owed[0]
            raise MoveError(f"seat {owed.seat} must draw {owed.cards} first")
        if seat != self.turn or not self._challengeable or not self.pending:
            raise MoveError(f"seat {seat} challenges, but faces no +4 it may challenge")
        self._timed(move, t)
        self._close_windows(seat)
        by = self.pending_by if self.pending_by is not None else seat
        self.pending, self.pending_kind, self.pending_by = 0, "", None
        self._challengeable = False
        if self._guilty:
            self.owed.append(_Owed(by, 4, skip=False))
        else:
            self.owed.append(_Owed(seat, 6, skip=True))

    def _reshuffle(self, move: Mapping[str, Any]) -> None:
        if self.pile:
            raise MoveError(f"reshuffle, but the pile still holds {len(self.pile)} cards")
        new = move["reshuffle"]
        if type(new) is not list:
            raise MoveError("reshuffle must list the new pile's cards")
        under = Counter(self.discard[:-1])
        given = Counter(new)
        if given != under:
            raise MoveError(
                f"reshuffle holds {_counts_text(given - under)} that the discard pile does "
                f"not, and lacks {_counts_text(under - given)}"
            )
        self.discard = self.discard[-1:]
        self.pile = list(reversed(new))


def _check_deck(rules: Ruleset, deal: object, pile: object, n: int) -> str | None:
    """Why the deal and the pile are not one deck of the ruleset, or None."""
    if type(deal) is not list or len(deal) != n:
        return f"deal must hold one hand per seat ({n})"
    for seat, hand in enumerate(deal):
        if type(hand) is not list or len(hand) != rules.hand_size:
            return f"deal[{seat}] must hold {rules.hand_size} cards"
    if type(pile) is not list:
        return "pile must be a list of card codes"
    copies = rules.table.copies
    try:
        counts = Counter(pile)
        for hand in deal:
            counts.update(hand)
    except TypeError:
        return "the deal and the pile must hold card codes"
    unknown = sorted(str(code) for code in counts if code not in copies)
    if unknown:
        return f"unknown card {unknown[0]} in the deal or the pile"
    if counts != copies:
        deck = Counter(copies)
        return (
            f"the deal and the pile are not one {rules.deck} deck: extra "
            f"{_counts_text(counts - deck)}; missing {_counts_text(deck - counts)}"
        )
    return None


Observer = Callable[[int, Mapping[str, Any], Table], None]


def replay(record: Mapping[str, Any], rules: Ruleset, observe: Observer | None = None) -> Verdict:
    """Replay ``record["log"]`` (move log v1) under ``rules``; return the verdict.

    ``observe(index, move, table)``, when given, is called before each move is applied.
    A record without a log replays ok (there is nothing to check).
    """
    log = record.get("log")
    if log is None:
        return Verdict(ok=True)
    seats = record.get("seats")
    if not isinstance(log, Mapping) or log.get("v") != 1:
        return Verdict(ok=False, reason="log must be a move log v1 object (v: 1)")
    if type(seats) is not list or not 2 <= len(seats) <= 10:
        return Verdict(ok=False, reason="the record must have 2 to 10 seats")
    n = len(seats)
    deal, pile = log.get("deal"), log.get("pile")
    fault = _check_deck(rules, deal, pile, n)
    if fault:
        return Verdict(ok=False, reason=fault)
    first = log.get("first", 0)
    if type(first) is not int or not 0 <= first < n:
        return Verdict(ok=False, reason=f"first must be a seat 0 to {n - 1}, got {_show(first)}")
    extra = sorted(str(key) for key in log.keys() - _LOG_KEYS)
    if extra:
        return Verdict(ok=False, reason=f"the log may not hold {_show(extra[0])}")
    moves = log.get("moves")
    if type(moves) is not list:
        return Verdict(ok=False, reason="moves must be a list")
    table = Table(rules, cast("list[list[str]]", deal), cast("list[str]", pile), first)
    index = 0
    try:
        for index, move in enumerate(moves):  # noqa: B007 - the index names a bad move
            if type(move) is not dict:
                raise MoveError("a move must be an object")
            if observe is not None:
                observe(index, move, table)
            table.apply(move)
    except MoveError as exc:
        return Verdict(ok=False, move=index, reason=str(exc))
    except (KeyError, TypeError) as exc:
        return Verdict(ok=False, move=index, reason=f"malformed move: {exc}")
    return _ending(record, table)


def _ending(record: Mapping[str, Any], table: Table) -> Verdict:
    """Check that the log's ending and final hands are the record's."""
    ended = table.ended
    if ended is None or (ended != "time" and (table._final_owed or table.owed)):
        return Verdict(ok=False, reason="the log stops before the game is over")
    how = "time" if ended == "time" else "out"
    if record.get("ended_by") != how:
        return Verdict(
            ok=False,
            reason=f"the log ends by {how}, the record by {_show(record.get('ended_by'))}",
        )
    for seat, (entry, hand) in enumerate(zip(record["seats"], table.hands, strict=True)):
        recorded = entry.get("hand") if isinstance(entry, Mapping) else None
        if type(recorded) is not list:
            return Verdict(ok=False, reason=f"seats[{seat}].hand must be a list")
        mine, theirs = Counter(hand), Counter(recorded)
        if mine != theirs:
            return Verdict(
                ok=False,
                reason=(
                    f"hands at the end differ from seats[{seat}].hand: log has "
                    f"{_counts_text(mine - theirs)}, record has {_counts_text(theirs - mine)}"
                ),
            )
    return Verdict(ok=True)
