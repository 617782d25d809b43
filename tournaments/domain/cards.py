"""Card codes, card points and the decks that hold them (SPEC §3).

The rule: a player's hand is worth the sum of its card points. In the classic 108-card deck
number cards are worth their face value, the coloured actions skip ``S``, reverse ``R`` and
draw two ``D2`` are worth 20, and the wilds ``W`` and wild draw four ``WD4`` are worth 50.
A hand the deck cannot hold (an unknown code, three ``R0``, five ``W``) is bad input and
is rejected with a :class:`CardError` naming the card and, when known, the seat.

Card codes: a colour letter ``R`` ``Y`` ``G`` ``B`` followed by ``0``-``9``, ``S``, ``R`` or
``D2`` (``R5``, ``GS``, ``BR``, ``YD2``), and the colourless ``W`` and ``WD4``. Per colour
the deck holds one 0, two each of 1-9, two S, two R and two D2; plus four W and four WD4:
76 number cards + 24 action cards + 8 wild cards = 108.

Codes are matched strictly: case-sensitive and without any whitespace tolerance, so
``"r5"`` and ``" R5"`` are unknown cards. The game servers send the codes of §9 verbatim;
normalising them here would hide a broken producer.

A :class:`CardTable` is pure data (name, points per code, copies per code) that belongs to
a season's ruleset and round-trips through JSON (:meth:`CardTable.to_dict` /
:meth:`CardTable.from_dict`). Provided tables (:data:`TABLES`):

- ``classic``: the 108-card deck above.
- ``happy``: 《一起UNO》 欢乐场 (the "happy" variant): classic plus the "all of one colour"
  action cards 同色全出 ``RA`` ``YA`` ``GA`` ``BA`` (two per colour, 20 points) and the
  bounce wild 反弹牌 ``WB`` (four copies, 50 points): 108 + 8 + 4 = 120 cards.
- ``classic-double`` (216 cards) and ``happy-double`` (240 cards, the seeds' "two decks,
  240 cards together" is the happy deck doubled): every count doubled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from types import MappingProxyType
from typing import Any, Final, cast

__all__ = [
    "CLASSIC",
    "HAPPY",
    "TABLES",
    "CardError",
    "CardTable",
    "double_deck",
    "hand_points",
    "parse_hand",
    "validate_deal",
]


class CardError(ValueError):
    """A card code the table does not know, or a deal the deck cannot hold.

    ``code`` is the offending card (as received, so possibly not a str; ``None`` when the
    problem is the deal's size) and ``seat`` the 0-based seat index when known.
    """

    def __init__(self, message: str, *, code: object = None, seat: int | None = None) -> None:
        self.code = code
        self.seat = seat
        self.reason = message
        super().__init__(message if seat is None else f"seat {seat}: {message}")

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only arguments do not survive the default exception pickling.
        return (_rebuild_card_error, (self.reason, self.code, self.seat))


def _rebuild_card_error(message: str, code: object, seat: int | None) -> CardError:
    return CardError(message, code=code, seat=seat)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_code(table_name: str, code: object) -> None:
    if not isinstance(code, str) or not code or any(ch.isspace() for ch in code):
        raise ValueError(
            f"card table {table_name!r}: card code {code!r} must be a non-empty string "
            "without whitespace"
        )


@dataclass(frozen=True)
class CardTable:
    """A deck and its card points: ``points[code]`` and ``copies[code]`` (copies in the deck).

    Both mappings are read-only copies with the same codes; ``size`` is the number of cards
    in the deck. Construction validates and raises ValueError naming the bad entry.
    """

    name: str
    points: Mapping[str, int] = field(hash=False)
    copies: Mapping[str, int] = field(hash=False)
    size: int = field(init=False, compare=False)

    def __post_init__(self) -> None:
        name = self.name
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"card table name must be a non-empty string, got {name!r}")
        for label, mapping in (("points", self.points), ("copies", self.copies)):
            if not isinstance(mapping, Mapping):
                raise ValueError(
                    f"card table {name!r}: {label} must be a mapping of card code to int, "
                    f"got {type(mapping).__name__}"
                )
        points = dict(self.points)
        copies = dict(self.copies)
        if not points:
            raise ValueError(f"card table {name!r}: the deck holds no cards")
        for code, value in points.items():
            _check_code(name, code)
            if not _is_int(value) or value < 0:
                raise ValueError(
                    f"card table {name!r}: points[{code!r}] must be an int >= 0, got {value!r}"
                )
            if code not in copies:
                raise ValueError(f"card table {name!r}: card {code!r} has points but no copies")
        for code, value in copies.items():
            _check_code(name, code)
            if not _is_int(value) or value < 1:
                raise ValueError(
                    f"card table {name!r}: copies[{code!r}] must be an int >= 1, got {value!r}"
                )
            if code not in points:
                raise ValueError(f"card table {name!r}: card {code!r} has copies but no points")
        # Keep the same code order in both (the order of ``points``).
        copies = {code: copies[code] for code in points}
        object.__setattr__(self, "points", MappingProxyType(points))
        object.__setattr__(self, "copies", MappingProxyType(copies))
        object.__setattr__(self, "size", sum(copies.values()))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CardTable:
        """Build a table from ``{"name": str, "points": {code: int}, "copies": {code: int}}``."""
        if not isinstance(data, Mapping):
            raise ValueError(f"card table must be a JSON object, got {type(data).__name__}")
        expected = {"name", "points", "copies"}
        missing = sorted(expected - data.keys())
        if missing:
            raise ValueError(f"card table is missing {', '.join(map(repr, missing))}")
        extra = sorted(str(key) for key in data.keys() - expected)
        if extra:
            raise ValueError(f"card table has unknown key(s) {', '.join(map(repr, extra))}")
        return cls(name=data["name"], points=data["points"], copies=data["copies"])

    def to_dict(self) -> dict[str, Any]:
        """Return a plain JSON-able dict that :meth:`from_dict` turns back into this table."""
        return {"name": self.name, "points": dict(self.points), "copies": dict(self.copies)}


def double_deck(table: CardTable, name: str | None = None) -> CardTable:
    """Return ``table`` with every card count doubled (two decks shuffled together)."""
    return CardTable(
        name=f"{table.name}-double" if name is None else name,
        points=table.points,
        copies={code: 2 * count for code, count in table.copies.items()},
    )


def _classic_cards() -> tuple[dict[str, int], dict[str, int]]:
    points: dict[str, int] = {}
    copies: dict[str, int] = {}
    for colour in "RYGB":
        for face in range(10):
            points[f"{colour}{face}"] = face
            copies[f"{colour}{face}"] = 1 if face == 0 else 2
        for action in ("S", "R", "D2"):
            points[f"{colour}{action}"] = 20
            copies[f"{colour}{action}"] = 2
    for wild in ("W", "WD4"):
        points[wild] = 50
        copies[wild] = 4
    return points, copies


def _happy_cards() -> tuple[dict[str, int], dict[str, int]]:
    points, copies = _classic_cards()
    for colour in "RYGB":
        points[f"{colour}A"] = 20
        copies[f"{colour}A"] = 2
    points["WB"] = 50
    copies["WB"] = 4
    return points, copies


CLASSIC: Final = CardTable("classic", *_classic_cards())
"""The classic 108-card deck."""

HAPPY: Final = CardTable("happy", *_happy_cards())
"""《一起UNO》 欢乐场: classic + RA/YA/GA/BA (2 each, 20 points) + WB (4, 50 points) = 120 cards."""

TABLES: Final[Mapping[str, CardTable]] = {
    table.name: table for table in (CLASSIC, double_deck(CLASSIC), HAPPY, double_deck(HAPPY))
}
"""The provided tables by name: classic, classic-double, happy, happy-double."""


def _codes(cards: object, seat: int | None) -> tuple[object, ...]:
    """Return the hand as a tuple, rejecting a str or a non-iterable as a hand."""
    if isinstance(cards, str):
        raise CardError(
            f"a hand must be a list of card codes, not the string {cards!r}", code=cards, seat=seat
        )
    if not isinstance(cards, Iterable):
        raise CardError(
            f"a hand must be a list of card codes, got {type(cards).__name__}",
            code=cards,
            seat=seat,
        )
    return tuple(cards)


def _check_codes(codes: tuple[object, ...], table: CardTable, seat: int | None) -> None:
    """Raise the CardError for the first code of ``codes`` the table does not know."""
    points = table.points
    for code in codes:
        if not isinstance(code, str):
            raise CardError(f"card code must be a string, got {code!r}", code=code, seat=seat)
        if code not in points:
            raise CardError(f"unknown card {code!r}", code=code, seat=seat)


def parse_hand(
    cards: Sequence[str], table: CardTable | None = None, *, seat: int | None = None
) -> tuple[str, ...]:
    """Validate every code of a hand (strict: case-sensitive, no whitespace) and return them.

    Raises CardError naming the card (and ``seat``, a 0-based index, when given).
    """
    codes = _codes(cards, seat)
    _check_codes(codes, CLASSIC if table is None else table, seat)
    return cast("tuple[str, ...]", codes)  # every code was just checked to be a str


def hand_points(cards: Sequence[str], table: CardTable | None = None) -> int:
    """Return the points of a hand: the sum of its card points (classic table by default).

    Raises CardError naming the first bad card.
    """
    table = CLASSIC if table is None else table
    if not isinstance(cards, str):
        try:
            return sum(map(table.points.__getitem__, cards))
        except (KeyError, TypeError):
            pass
    # Slow path, only for bad input: find and name the bad card.
    _check_codes(_codes(cards, None), table, None)
    # Only reachable when ``cards`` was a one-shot iterator already consumed above.
    raise CardError("the hand holds a card the table does not know")


_SEQUENCE_TYPES = frozenset({list, tuple})
_STR_TYPE = frozenset({str})


def _known_counts(hands: Sequence[Sequence[str]], table: CardTable) -> dict[str, int] | None:
    """The fast path of `validate_deal`: each code's count over hands that are all lists or
    tuples of known codes (in first-seen order), or None when any is not."""
    if not _SEQUENCE_TYPES.issuperset(map(type, hands)):
        return None
    try:
        counts = Counter(chain.from_iterable(hands))
    except TypeError:  # an unhashable code
        return None
    if _STR_TYPE.issuperset(map(type, counts)) and table.points.keys() >= counts.keys():
        return counts
    return None


def validate_deal(hands: Sequence[Sequence[str]], table: CardTable | None = None) -> None:
    """Check that the deck can hold all these hands (one per seat, in seat order) together.

    Every hand must parse (errors name the 0-based seat); the hands together may not hold
    more cards than the deck, nor any card more often than the deck holds it.
    """
    table = CLASSIC if table is None else table
    seen = _known_counts(hands, table)
    if seen is None:  # some hand is malformed: find and name the first bad card, seat by seat
        seen = {}
        for seat, hand in enumerate(hands):
            for code in parse_hand(hand, table, seat=seat):
                seen[code] = seen.get(code, 0) + 1
    total = sum(seen.values())
    if total > table.size:
        raise CardError(f"the hands hold {total} cards but the deck holds {table.size}")
    copies = table.copies
    for code, count in seen.items():
        if count > copies[code]:
            raise CardError(
                f"card {code!r} appears {count} times but the deck holds {copies[code]}",
                code=code,
            )
