"""Card codes, points and decks (SPEC §3): tournaments/domain/cards.py."""

import json
import pickle
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tournaments.domain.cards import (
    CLASSIC,
    HAPPY,
    TABLES,
    CardError,
    CardTable,
    double_deck,
    hand_points,
    parse_hand,
    validate_deal,
)

COLOURS = "RYGB"
NUMBER = re.compile(r"[RYGB][0-9]")
ACTION = re.compile(r"[RYGB](S|R|D2)")
WILD = re.compile(r"W|WD4")


def kind_counts(table: CardTable) -> dict[str, int]:
    counts = {"number": 0, "action": 0, "wild": 0, "other": 0}
    for code, copies in table.copies.items():
        kind = next(
            (
                name
                for name, rx in (("number", NUMBER), ("action", ACTION), ("wild", WILD))
                if rx.fullmatch(code)
            ),
            "other",
        )
        counts[kind] += copies
    return counts


# --- the classic table --------------------------------------------------------------


@pytest.mark.parametrize("colour", COLOURS)
def test_classic_points_per_colour(colour: str) -> None:
    for face in range(10):
        assert hand_points([f"{colour}{face}"]) == face
    for action in ("S", "R", "D2"):
        assert hand_points([f"{colour}{action}"]) == 20


def test_classic_wild_points() -> None:
    assert hand_points(["W"]) == 50
    assert hand_points(["WD4"]) == 50


def test_classic_deck_has_108_cards_by_kind() -> None:
    assert CLASSIC.size == 108
    assert sum(CLASSIC.copies.values()) == 108
    assert kind_counts(CLASSIC) == {"number": 76, "action": 24, "wild": 8, "other": 0}
    assert len(CLASSIC.points) == 4 * 13 + 2


@pytest.mark.parametrize(
    ("code", "copies"),
    [("R0", 1), ("Y0", 1), ("G1", 2), ("B9", 2), ("RS", 2), ("YR", 2), ("GD2", 2)]
    + [("W", 4), ("WD4", 4)],
)
def test_classic_copies(code: str, copies: int) -> None:
    assert CLASSIC.copies[code] == copies


def test_hand_points_sums_the_hand() -> None:
    assert hand_points(["R5", "WD4", "GS"]) == 75
    assert hand_points([]) == 0
    assert hand_points(("B9", "B9", "Y0")) == 18


# --- bad codes ----------------------------------------------------------------------


@pytest.mark.parametrize("code", ["X9", "r5", " R5", "R5 ", "R10", "", "WD2", "RA", "WB"])
def test_unknown_code_is_rejected_naming_it(code: str) -> None:
    with pytest.raises(CardError, match=re.escape(f"unknown card {code!r}")) as info:
        hand_points(["R1", code])
    assert info.value.code == code
    assert info.value.seat is None
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("bad", [5, None, ["R5"]])
def test_non_string_code_is_rejected(bad: object) -> None:
    with pytest.raises(CardError, match="card code must be a string") as info:
        parse_hand(["R1", bad])  # type: ignore[list-item]
    assert info.value.code == bad


def test_a_string_is_not_a_hand() -> None:
    with pytest.raises(CardError, match="not the string 'R5'"):
        hand_points("R5")
    with pytest.raises(CardError, match="not the string 'R5'"):
        parse_hand("R5")


def test_parse_hand_returns_the_codes_and_names_the_seat() -> None:
    assert parse_hand(["R5", "W"]) == ("R5", "W")
    with pytest.raises(CardError) as info:
        parse_hand(["R5", "X9"], seat=2)
    assert str(info.value) == "seat 2: unknown card 'X9'"
    assert (info.value.code, info.value.seat) == ("X9", 2)


def test_card_error_survives_pickling() -> None:
    # our own bytes, round-tripped as Celery's result backend would
    raw = pickle.dumps(CardError("unknown card 'X9'", code="X9", seat=3))
    error = pickle.loads(raw)  # noqa: S301
    assert (str(error), error.code, error.seat) == ("seat 3: unknown card 'X9'", "X9", 3)


# --- deals --------------------------------------------------------------------------


def test_validate_deal_accepts_a_possible_deal() -> None:
    validate_deal([[], ["R0", "W"], ["W", "W", "W"], ["B1", "B1"]])  # raises on a bad deal


def test_three_r0_are_rejected_naming_r0() -> None:
    with pytest.raises(CardError) as info:
        validate_deal([["R0"], ["R0", "G5"], [], ["R0"]])
    assert str(info.value) == "card 'R0' appears 3 times but the deck holds 1"
    assert info.value.code == "R0"


def test_five_wilds_are_rejected() -> None:
    with pytest.raises(CardError, match="card 'W' appears 5 times but the deck holds 4"):
        validate_deal([["W", "W"], ["W"], ["W", "W"]])


def test_validate_deal_names_the_seat_of_a_bad_code() -> None:
    with pytest.raises(CardError) as info:
        validate_deal([["R1"], ["G2"], ["X9"]])
    assert str(info.value) == "seat 2: unknown card 'X9'"


def test_more_cards_than_the_deck_are_rejected() -> None:
    every_card = [code for code, n in CLASSIC.copies.items() for _ in range(n)]
    validate_deal([every_card])
    with pytest.raises(CardError, match="the hands hold 109 cards but the deck holds 108"):
        validate_deal([every_card, ["R0"]])


@given(st.lists(st.lists(st.sampled_from(sorted(CLASSIC.points)), max_size=12), max_size=6))
def test_validate_deal_agrees_with_the_deck_counts(hands: list[list[str]]) -> None:
    counts: dict[str, int] = {}
    for hand in hands:
        for code in hand:
            counts[code] = counts.get(code, 0) + 1
    possible = all(n <= CLASSIC.copies[code] for code, n in counts.items())
    if possible:
        validate_deal(hands)
    else:
        with pytest.raises(CardError, match="appears"):
            validate_deal(hands)


@given(st.lists(st.sampled_from(sorted(CLASSIC.points)), max_size=20))
def test_hand_points_is_the_sum_of_card_points(hand: list[str]) -> None:
    assert hand_points(hand) == sum(CLASSIC.points[code] for code in hand)
    assert hand_points(list(reversed(hand))) == hand_points(hand)


# --- tables -------------------------------------------------------------------------


def test_tables_by_name_and_size() -> None:
    assert {name: table.size for name, table in TABLES.items()} == {
        "classic": 108,
        "classic-double": 216,
        "happy": 120,
        "happy-double": 240,
    }
    assert TABLES["classic"] is CLASSIC
    assert TABLES["happy"] is HAPPY


def test_double_deck_doubles_every_count() -> None:
    double = double_deck(CLASSIC)
    assert double.name == "classic-double"
    assert double.points == CLASSIC.points
    assert {code: n // 2 for code, n in double.copies.items()} == dict(CLASSIC.copies)
    assert all(n % 2 == 0 for n in double.copies.values())
    validate_deal([["R0", "R0"]], double)
    with pytest.raises(CardError, match="card 'R0' appears 3 times but the deck holds 2"):
        validate_deal([["R0", "R0"], ["R0"]], double)


def test_happy_table_adds_all_of_one_colour_and_bounce() -> None:
    added = {code: (HAPPY.points[code], HAPPY.copies[code]) for code in HAPPY.points}
    for code in CLASSIC.points:
        assert added.pop(code) == (CLASSIC.points[code], CLASSIC.copies[code])
    assert added == {"RA": (20, 2), "YA": (20, 2), "GA": (20, 2), "BA": (20, 2), "WB": (50, 4)}
    assert hand_points(["RA", "WB", "R5"], HAPPY) == 75
    with pytest.raises(CardError, match="unknown card 'WB'"):
        hand_points(["WB"])


@pytest.mark.parametrize("name", sorted(TABLES))
def test_tables_round_trip_through_json(name: str) -> None:
    table = TABLES[name]
    data = json.loads(json.dumps(table.to_dict()))
    assert data["name"] == name
    again = CardTable.from_dict(data)
    assert again == table
    assert again.size == table.size
    assert list(again.points) == list(table.points)


def test_tables_are_read_only() -> None:
    with pytest.raises(TypeError):
        CLASSIC.points["R0"] = 99  # type: ignore[index]
    assert hand_points(["R0"]) == 0


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"points": {**CLASSIC.points, "R5": -1}}, "points['R5'] must be an int >= 0, got -1"),
        ({"points": {**CLASSIC.points, "R5": "5"}}, "points['R5'] must be an int >= 0, got '5'"),
        ({"copies": {**CLASSIC.copies, "W": 0}}, "copies['W'] must be an int >= 1, got 0"),
        ({"copies": {**CLASSIC.copies, "W": True}}, "copies['W'] must be an int >= 1, got True"),
        ({"points": {**CLASSIC.points, "ZZ": 1}}, "card 'ZZ' has points but no copies"),
        ({"copies": {**CLASSIC.copies, "ZZ": 1}}, "card 'ZZ' has copies but no points"),
        ({"points": {**CLASSIC.points, "R 5": 5}}, "card code 'R 5' must be a non-empty"),
        ({"name": ""}, "card table name must be a non-empty string"),
        ({"points": {}, "copies": {}}, "the deck holds no cards"),
        ({"copies": [1, 2]}, "copies must be a mapping"),
        ({"colour": "red"}, "unknown key(s) 'colour'"),
    ],
)
def test_from_dict_names_the_bad_entry(patch: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        CardTable.from_dict({**CLASSIC.to_dict(), **patch})


def test_from_dict_requires_every_key() -> None:
    with pytest.raises(ValueError, match="missing 'copies'"):
        CardTable.from_dict({"name": "x", "points": {"R0": 0}})
    with pytest.raises(ValueError, match="must be a JSON object"):
        CardTable.from_dict([])  # type: ignore[arg-type]


def test_custom_table_from_dict() -> None:
    table = CardTable.from_dict(
        {"name": "mini", "points": {"A": 3, "B": 7}, "copies": {"A": 1, "B": 2}}
    )
    assert table.size == 3
    assert hand_points(["B", "B", "A"], table) == 17
    with pytest.raises(CardError, match="card 'A' appears 2 times but the deck holds 1"):
        validate_deal([["A"], ["A"]], table)
