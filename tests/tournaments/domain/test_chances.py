"""Chances read from a replayed log (tournaments/domain/chances.py): to punish a threatening
next player, to challenge a +4, to hand over a better hand with a 7."""

from collections import Counter
from typing import Any

import pytest

from tournaments.domain.chances import CHALLENGE, PUNISH, SWAP, chances_of
from tournaments.domain.rules import ruleset_from_spec

RULES = ruleset_from_spec({"preset": "classic", "switches": {"hand_size": 3}})
DEAL = [["R1", "RD2", "G5"], ["R2", "B1", "Y1"], ["R3", "G7", "B9"]]


def record(last: list[dict[str, Any]], hands: list[list[str]]) -> dict[str, Any]:
    """Seats 0, 1, 2 play R1, R2, R3 on the start card R5; then seat 0 (two cards, holding
    RD2) faces seat 1 with two cards left: the ``last`` moves, then the game's time runs
    out with ``hands`` (the pile's cards after R5 named by index)."""
    deck = Counter(RULES.table.copies)
    for cards in [*DEAL, ["R5"]]:
        deck.subtract(cards)
    pile = ["R5", *sorted(deck.elements())]
    moves = [
        {"t": 0, "flip": "R5"},
        {"t": 1000, "seat": 0, "play": "R1"},  # seat 1 holds three cards: no threat
        {"t": 2000, "seat": 1, "play": "R2"},  # seat 2 holds three: no threat
        {"t": 3000, "seat": 2, "play": "R3"},  # seat 0 has two, but seat 2 holds no punisher
        *last,
        {"t": 180_000, "end": "time"},
    ]
    return {
        "seats": [
            {"player": {"id": f"p{i}"}, "hand": [pile[c] if isinstance(c, int) else c for c in h]}
            for i, h in enumerate(hands)
        ],
        "ended_by": "time",
        "log": {"v": 1, "deal": DEAL, "pile": pile, "first": 0, "moves": moves},
    }


@pytest.mark.parametrize(
    ("last", "hands", "punished"),
    [
        (
            [{"t": 4000, "seat": 0, "draw": 1}],
            [["RD2", "G5", 1], ["B1", "Y1"], ["G7", "B9"]],
            False,
        ),
        (
            [{"t": 4000, "seat": 0, "play": "RD2"}, {"t": 5000, "seat": 1, "draw": 2}],
            [["G5"], ["B1", "Y1", 1, 2], ["G7", "B9"]],
            True,
        ),
    ],
)
def test_a_threatening_next_player_spared_or_punished(
    last: list[dict[str, Any]], hands: list[list[Any]], punished: bool
) -> None:
    assert chances_of(record(last, hands), RULES) == [("p0", "p1", PUNISH, punished)]


def test_a_log_that_does_not_replay_gives_no_chance() -> None:
    game = record([{"t": 4000, "seat": 0, "play": "G5"}], [["RD2"], ["B1", "Y1"], ["G7", "B9"]])
    assert chances_of(game, RULES) == []
    assert chances_of({**game, "log": None}, RULES) == []


def game(
    rules: Any, deal: list[list[str]], moves: list[dict[str, Any]], hands: list[list[Any]]
) -> dict[str, Any]:
    """A game of ``deal`` on the start card R5, the ``moves``, then the end of its time with
    ``hands`` (the pile's cards after R5 named by index: draws take them in order)."""
    deck = Counter(rules.table.copies)
    for cards in [*deal, ["R5"]]:
        deck.subtract(cards)
    pile = ["R5", *sorted(deck.elements())]
    return {
        "seats": [
            {"player": {"id": f"p{i}"}, "hand": [pile[c] if isinstance(c, int) else c for c in h]}
            for i, h in enumerate(hands)
        ],
        "ended_by": "time",
        "log": {
            "v": 1,
            "deal": deal,
            "pile": pile,
            "first": 0,
            "moves": [{"t": 0, "flip": "R5"}, *moves, {"t": 180_000, "end": "time"}],
        },
    }


FOUR = [["WD4", "R1", "G5"], ["R2", "B1", "Y1"], ["R3", "G7", "B9"]]


def test_a_plus_four_challenged_or_let_pass() -> None:
    # seat 0 plays a +4 holding red, the active colour (guilty); seat 1 decides
    played = {"t": 1000, "seat": 0, "play": "WD4", "color": "G"}
    challenged = game(
        RULES,
        FOUR,
        [played, {"t": 2000, "seat": 1, "challenge": True}, {"t": 3000, "seat": 0, "draw": 4}],
        [["R1", "G5", 1, 2, 3, 4], ["R2", "B1", "Y1"], ["R3", "G7", "B9"]],
    )
    assert chances_of(challenged, RULES) == [("p1", "p0", CHALLENGE, True)]
    drawn = game(
        RULES,
        FOUR,
        [played, {"t": 2000, "seat": 1, "draw": 4}],
        [["R1", "G5"], ["R2", "B1", "Y1", 1, 2, 3, 4], ["R3", "G7", "B9"]],
    )
    assert chances_of(drawn, RULES) == [("p1", "p0", CHALLENGE, False)]
    # without the challenge rule there is nothing to decide
    plain = ruleset_from_spec(
        {"preset": "classic", "switches": {"hand_size": 3, "challenge": False}}
    )
    assert chances_of(drawn, plain) == []


def test_a_seven_that_swaps_hands_over_or_keeps_the_better_hand() -> None:
    sevens = ruleset_from_spec(
        {"preset": "classic", "switches": {"hand_size": 3, "seven_zero": True}}
    )
    deal = [["R7", "G5", "B2"], ["R2", "B1", "Y1"], ["R3", "G7", "B9"]]
    # seat 0 keeps two cards after its 7; seats 1 and 2 hold three: a swap hands either the
    # better hand. It swaps with seat 2: seat 1 is not handed it (punished), seat 2 is.
    swapped = game(
        sevens,
        deal,
        [{"t": 1000, "seat": 0, "play": "R7", "swap": 2}],
        [["R3", "G7", "B9"], ["R2", "B1", "Y1"], ["G5", "B2"]],
    )
    assert chances_of(swapped, sevens) == [("p0", "p1", SWAP, True), ("p0", "p2", SWAP, False)]
