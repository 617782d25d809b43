"""The move-log replay (SPEC §9 move log v1, §3 rulesets): tournaments/domain/movelog.py.

Scenarios are dealt by hand: :func:`table` gives each seat the cards named and puts the
named cards on top of the pile, the rest of the deck under them in a fixed order.
"""

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pytest

from tournaments.domain.movelog import MoveError, Table, Verdict, replay
from tournaments.domain.rules import PRESETS, Ruleset

CLASSIC = PRESETS["classic"]


def table(
    rules: Ruleset, hands: list[list[str]], top: list[str], first: int = 0, *, flip: bool = True
) -> Table:
    """A table with these hands and these cards on top of the pile (the first is flipped)."""
    deck = Counter(rules.table.copies)
    for cards in [*hands, top]:
        deck.subtract(cards)
    assert all(count >= 0 for count in deck.values())
    game = Table(rules, hands, [*top, *sorted(deck.elements())], first)
    if flip:
        game.apply({"t": 0, "flip": top[0]})
    return game


def go(game: Table, *moves: dict[str, Any], gap: int = 1000) -> None:
    """Apply moves ``gap`` ms apart unless they give their own ``t``."""
    for move in moves:
        t = move.get("t", game._last_t + gap)
        game.apply({"t": t, **move})


def refused(game: Table, move: dict[str, Any], reason: str) -> None:
    with pytest.raises(MoveError) as caught:
        go(game, move)
    assert str(caught.value) == reason


def rules(**switches: Any) -> Ruleset:
    return replace(CLASSIC, **switches)


# -- the seeds' edge cases -------------------------------------------------------------


@pytest.mark.parametrize(("last", "owed"), [("RD2", 2), ("WD4", 4)])
def test_a_last_card_that_draws_still_makes_the_next_player_draw(last: str, owed: int) -> None:
    game = table(rules(stacking="seeds"), [[last], ["G1", "RD2", "WD4"], ["B1"]], ["R5", "Y3"])
    move: dict[str, Any] = {"seat": 0, "play": last}
    if last == "WD4":
        move["color"] = "G"
    go(game, move)
    assert (game.ended, game.out, game.turn, game.final_owed) == ("out", 0, 1, owed)
    refused(game, {"seat": 1, "play": "RD2"}, "the game is over (seat 0 went out)")
    refused(game, {"seat": 1, "challenge": True}, "the game is over (seat 0 went out)")
    refused(
        game,
        {"seat": 1, "draw": 2 if owed == 4 else 1},
        f"seat 1 must draw {owed} (the last card's penalty), drew {2 if owed == 4 else 1}",
    )


def test_the_last_cards_draw_is_in_the_final_hands() -> None:
    game = table(CLASSIC, [["RD2"], ["G1"], ["B1"]], ["R5", "Y3", "Y4"])
    go(game, {"seat": 0, "play": "RD2"}, {"seat": 1, "draw": 2})
    assert sorted(game.hands[1]) == ["G1", "Y3", "Y4"]
    assert game.final_owed == 0


def test_stacking_a_two_on_a_four_is_refused_under_the_seeds_rule() -> None:
    game = table(rules(stacking="seeds"), [["WD4", "R1"], ["RD2", "G2"], ["B1"]], ["R5"])
    go(game, {"seat": 0, "play": "WD4", "color": "R"})
    refused(game, {"seat": 1, "play": "RD2"}, "seat 1 must draw 4 or stack on WD4, not play RD2")


def test_stacking_a_four_on_a_two_is_the_seeds_rule_and_refused_by_ubisofts() -> None:
    hands = [["RD2", "R1"], ["WD4", "G2"], ["B1", "B2"]]
    seeds = table(rules(stacking="seeds"), hands, ["R5"])
    go(seeds, {"seat": 0, "play": "RD2"}, {"seat": 1, "play": "WD4", "color": "B"})
    assert (seeds.turn, seeds.pending, seeds.pending_kind) == (2, 6, "WD4")
    refused(
        seeds, {"seat": 2, "challenge": True}, "seat 2 challenges, but faces no +4 it may challenge"
    )  # a stacked +4 cannot be challenged
    go(seeds, {"seat": 2, "draw": 6})
    assert (seeds.turn, len(seeds.hands[2]), seeds.pending) == (0, 8, 0)
    ubisoft = table(PRESETS["ubisoft"], hands, ["R5"])
    go(ubisoft, {"seat": 0, "play": "RD2"})
    refused(
        ubisoft,
        {"seat": 1, "play": "WD4", "color": "B"},
        "seat 1 must draw 2 or stack on D2, not play WD4",
    )


def test_a_successful_challenge_makes_the_bluffer_draw_four_and_the_challenger_plays_on() -> None:
    game = table(
        CLASSIC, [["WD4", "R1", "Y1"], ["G2", "B7"], ["B1"]], ["R5", "Y2", "Y3", "Y4", "Y5"]
    )
    go(game, {"seat": 0, "play": "WD4", "color": "G"}, {"seat": 1, "challenge": True})
    refused(game, {"seat": 1, "play": "G2"}, "seat 0 must draw 4 first")
    refused(game, {"seat": 1, "draw": 4}, "seat 0 must draw 4 first, not seat 1")
    go(game, {"seat": 0, "draw": 4})
    assert sorted(game.hands[0]) == ["R1", "Y1", "Y2", "Y3", "Y4", "Y5"]
    assert (game.turn, game.colour, game.pending) == (1, "G", 0)
    go(game, {"seat": 1, "play": "G2"})
    assert game.turn == 2


def test_a_failed_challenge_costs_the_challenger_six_and_the_turn() -> None:
    game = table(CLASSIC, [["WD4", "G1", "Y1"], ["G2", "B7"], ["B1"]], ["R5"])
    go(game, {"seat": 0, "play": "WD4", "color": "G"}, {"seat": 1, "challenge": True})
    refused(game, {"seat": 1, "draw": 4}, "seat 1 must draw 6 (a penalty), drew 4")
    go(game, {"seat": 1, "draw": 6})
    assert (len(game.hands[1]), game.turn) == (8, 2)


@pytest.mark.parametrize("last", ["R0", "R7"])
def test_a_last_zero_or_seven_wins_without_swapping(last: str) -> None:
    game = table(rules(seven_zero=True), [[last], ["G1", "G2"], ["B1"]], ["R5"])
    refused(
        game,
        {"seat": 0, "play": last, "swap": 1},
        f"seat 0 swaps hands, but {last} is not a 7 that swaps",
    )
    go(game, {"seat": 0, "play": last})
    assert (game.ended, game.hands) == ("out", [[], ["G1", "G2"], ["B1"]])


def test_a_seven_must_swap_and_a_zero_passes_every_hand_on() -> None:
    game = table(rules(seven_zero=True), [["R7", "R0", "B9"], ["G1", "G2"], ["B1"]], ["R5"])
    refused(game, {"seat": 0, "play": "R7"}, "seat 0 plays a 7 and must swap with another seat")
    game = table(rules(seven_zero=True), [["R7", "R0", "B9"], ["G1", "R2"], ["B1"]], ["R5"])
    go(game, {"seat": 0, "play": "R7", "swap": 2})
    assert game.hands == [["B1"], ["G1", "R2"], ["R0", "B9"]]
    assert game.catchable() == set()  # a hand of one received by a swap needs no call
    go(game, {"seat": 1, "play": "R2"})
    go(game, {"seat": 2, "play": "R0"})
    assert game.hands == [["B9"], ["B1"], ["G1"]]
    assert game.turn == 0


def test_jump_in_on_an_identical_card() -> None:
    game = table(
        rules(jump_in="identical_numbers"), [["R5", "R1"], ["G2"], ["R5", "B2"], ["Y1"]], ["R3"]
    )
    go(game, {"seat": 0, "play": "R5"})
    refused(game, {"seat": 2, "play": "B2"}, "seat 2 plays B2 out of turn (seat 1's turn)")
    go(game, {"seat": 2, "play": "R5"})
    assert (game.turn, game.hands[2], game.top) == (3, ["B2"], "R5")


def test_jump_in_of_an_action_card_voids_the_jumped_cards_draw() -> None:
    hands = [["RD2", "R1"], ["G2"], ["RD2", "B2"], ["Y1"]]
    numbers = table(rules(jump_in="identical_numbers"), hands, ["R3"])
    go(numbers, {"seat": 0, "play": "RD2"})
    refused(numbers, {"seat": 2, "play": "RD2"}, "seat 2 plays RD2 out of turn (seat 1's turn)")
    every = table(rules(jump_in="all"), hands, ["R3"])
    go(every, {"seat": 0, "play": "RD2"}, {"seat": 2, "play": "RD2"})
    assert (every.turn, every.pending, every.pending_by) == (3, 2, 2)  # 2, not 4


@pytest.mark.parametrize("card", ["RS", "RR"])
def test_two_players_skip_and_reverse_give_another_turn(card: str) -> None:
    game = table(CLASSIC, [[card, "R1"], ["G2", "G3"]], ["R5"])
    go(game, {"seat": 0, "play": card})
    assert game.turn == 0
    go(game, {"seat": 0, "play": "R1"})
    assert game.ended == "out"


def test_two_players_reverse_variant_passes_the_turn() -> None:
    game = table(rules(two_player_reverse="reverse"), [["RR", "R1"], ["G2", "G3"]], ["R5"])
    go(game, {"seat": 0, "play": "RR"})
    assert (game.turn, game.direction) == (1, -1)


# -- turns, plays and draws --------------------------------------------------------------


def test_a_card_that_does_not_match_is_refused_with_the_top_card_named() -> None:
    game = table(CLASSIC, [["G5", "R1"], ["G2"], ["B1"]], ["R3"])
    refused(game, {"seat": 0, "play": "G5"}, "seat 0 plays G5 on R3")
    refused(game, {"seat": 0, "play": "R9"}, "seat 0 plays R9, which is not in its hand")
    refused(game, {"seat": 1, "play": "G2"}, "seat 1 plays G2 out of turn (seat 0's turn)")
    go(game, {"seat": 0, "play": "R1"})
    go(game, {"seat": 1, "draw": 1})
    refused(game, {"seat": 1, "draw": 1}, "seat 1 has drawn already this turn")


def test_after_a_wild_the_named_colour_is_matched() -> None:
    game = table(CLASSIC, [["W", "R1"], ["R2", "G2"], ["B1"]], ["R3"])
    refused(game, {"seat": 0, "play": "W"}, "seat 0 plays W and must name a colour R Y G B")
    go(game, {"seat": 0, "play": "W", "color": "G"})
    refused(game, {"seat": 1, "play": "R2"}, "seat 1 plays R2 on W (G)")
    go(game, {"seat": 1, "play": "G2"})


def test_skip_and_reverse_move_the_turn() -> None:
    game = table(CLASSIC, [["RS", "R1"], ["G2"], ["RR", "B1"], ["Y1"]], ["R3"])
    go(game, {"seat": 0, "play": "RS"})
    assert game.turn == 2
    go(game, {"seat": 2, "play": "RR"})
    assert (game.turn, game.direction) == (1, -1)


def test_draw_one_then_play_or_pass() -> None:
    game = table(CLASSIC, [["G5", "R1"], ["G2"], ["B1"]], ["R3", "R7"])
    refused(game, {"seat": 0, "pass": True}, "seat 0 passes without drawing")
    refused(game, {"seat": 0, "draw": 2}, "seat 0 must draw 1, drew 2")
    go(game, {"seat": 0, "draw": 1})
    go(game, {"seat": 0, "play": "R1"})  # one: any playable card after the draw
    wango = table(PRESETS["wango"], [["G5", "R1"], ["G2"], ["B1"]], ["R3", "R7"])
    go(wango, {"seat": 0, "draw": 1})
    refused(wango, {"seat": 0, "play": "R1"}, "seat 0 drew R7 and may play only that card")
    go(wango, {"seat": 0, "play": "R7"})


def test_forced_play_refuses_a_draw_and_a_pass_over_a_playable_card() -> None:
    game = table(rules(forced_play=True), [["G5", "R1"], ["G2"], ["B1"]], ["R3", "R7"])
    refused(game, {"seat": 0, "draw": 1}, "seat 0 can play and may not draw (forced play)")
    game = table(rules(forced_play=True), [["G5", "B1"], ["G2"], ["B2"]], ["R3", "R7"])
    go(game, {"seat": 0, "draw": 1})
    refused(game, {"seat": 0, "pass": True}, "seat 0 drew R7, which it must play (forced play)")


def test_drawing_until_playable_draws_to_the_first_playable_card() -> None:
    game = table(rules(draw="until_playable"), [["G5"], ["G2"], ["B1"]], ["R3", "B4", "Y6", "R8"])
    refused(game, {"seat": 0, "draw": 1}, "seat 0 must draw 3, drew 1")
    go(game, {"seat": 0, "draw": 3})
    assert sorted(game.hands[0]) == ["B4", "G5", "R8", "Y6"]
    go(game, {"seat": 0, "play": "R8"})


def test_multi_card_plays() -> None:
    hands = [["RS", "GS", "R1"], ["G2"], ["B1"], ["Y1"]]
    refused(
        table(CLASSIC, hands, ["R3"]),
        {"seat": 0, "play": ["RS", "GS"], "color": "G"},
        "seat 0 plays 2 cards, but multi-card plays are off",
    )
    game = table(rules(multi_play=True), hands, ["R3"])
    refused(
        game, {"seat": 0, "play": ["RS", "GS"]}, "seat 0 must name one of the colours played (G R)"
    )
    refused(
        game, {"seat": 0, "play": ["RS", "R1"]}, "seat 0 plays RS R1: not one number or one action"
    )
    go(game, {"seat": 0, "play": ["RS", "GS"], "color": "G"})
    assert (game.turn, game.colour, game.top) == (3, "G", "GS")  # two players skipped
    twos = table(rules(multi_play=True), [["RD2", "BD2", "R1"], ["G2"], ["B1"]], ["R3"])
    go(twos, {"seat": 0, "play": ["RD2", "BD2"], "color": "B"})
    assert (twos.turn, twos.pending) == (1, 4)
    reverses = table(rules(multi_play=True), [["RR", "BR", "R1"], ["G2"], ["B1"]], ["R3"])
    go(reverses, {"seat": 0, "play": ["RR", "BR"], "color": "R"})
    assert (reverses.turn, reverses.direction) == (1, 1)


def test_the_last_card_must_be_a_number_when_the_switch_is_on() -> None:
    game = table(rules(last_card_number=True), [["RS"], ["G2"], ["B1"]], ["R3"])
    refused(game, {"seat": 0, "play": "RS"}, "seat 0's last card must be a number card, not RS")


def test_no_challenge_when_bluffing_is_off() -> None:
    game = table(rules(challenge=False), [["WD4", "R1"], ["G2"], ["B1"]], ["R3"])
    go(game, {"seat": 0, "play": "WD4", "color": "G"})
    refused(
        game, {"seat": 1, "challenge": True}, "seat 1 challenges, but faces no +4 it may challenge"
    )


def test_forced_stacking_refuses_a_draw_when_holding_a_stack() -> None:
    game = table(PRESETS["yiqiyounuo"], [["RD2", "R1"], ["GD2", "G2"], ["B1"]], ["R3"])
    go(game, {"seat": 0, "play": "RD2"})
    refused(game, {"seat": 1, "draw": 2}, "seat 1 holds a card that stacks and must stack")
    go(game, {"seat": 1, "play": "GD2"})
    assert (game.turn, game.pending) == (2, 4)


def test_the_happy_decks_bounce_and_all_of_one_colour() -> None:
    happy = rules(deck="happy")
    game = table(happy, [["RD2", "R1"], ["WB", "G2"], ["B1"]], ["R3"])
    go(game, {"seat": 0, "play": "RD2"}, {"seat": 1, "play": "WB", "color": "B"})
    assert (game.turn, game.pending, game.direction) == (0, 2, -1)
    go(game, {"seat": 0, "draw": 2})
    assert game.turn == 2
    bundle = table(happy, [["RA", "R1", "RS", "G1"], ["G2"], ["B1"]], ["R3"])
    refused(bundle, {"seat": 0, "play": ["RA", "R1"]}, "seat 0 plays RA but keeps RS of its colour")
    go(bundle, {"seat": 0, "play": ["RA", "R1", "RS"]})
    assert (bundle.top, bundle.turn, bundle.hands[0]) == ("RA", 1, ["G1"])  # RS's skip is void


# -- UNO calls and catches ---------------------------------------------------------------


def test_a_missed_uno_caught_before_the_next_play_costs_two() -> None:
    game = table(CLASSIC, [["R1", "R2"], ["G2", "R4"], ["B1"]], ["R3", "Y1", "Y2"])
    go(game, {"seat": 0, "play": "R1"})
    assert game.catchable() == {0}
    go(game, {"seat": 2, "catch": 0}, {"seat": 0, "draw": 2})
    assert sorted(game.hands[0]) == ["R2", "Y1", "Y2"]


def test_a_catch_after_the_next_play_costs_the_caller_two() -> None:
    game = table(CLASSIC, [["R1", "R2"], ["G2", "G3", "R4"], ["B1"]], ["R3"])
    go(game, {"seat": 0, "play": "R1"}, {"seat": 1, "play": "R4"})
    assert game.catchable() == set()
    go(game, {"seat": 2, "catch": 0})
    refused(game, {"seat": 0, "draw": 2}, "seat 2 must draw 2 first, not seat 0")
    go(game, {"seat": 2, "draw": 2})


def test_calling_uno_before_or_after_the_play_is_safe_and_a_wrong_call_costs_two() -> None:
    before = table(CLASSIC, [["R1", "R2"], ["G2"], ["B1"]], ["R3"])
    go(before, {"seat": 0, "uno": True}, {"seat": 0, "play": "R1"})
    assert before.catchable() == set()
    after = table(CLASSIC, [["R1", "R2"], ["G2"], ["B1"]], ["R3"])
    go(after, {"seat": 0, "play": "R1"}, {"seat": 0, "uno": True})
    assert after.catchable() == set()
    wrong = table(CLASSIC, [["R1", "R2"], ["G2", "G3", "G4"], ["B1"]], ["R3"])
    go(wrong, {"seat": 1, "uno": True})
    refused(wrong, {"seat": 0, "play": "R1"}, "seat 1 must draw 2 first")


# -- start card, time, reshuffle -----------------------------------------------------------


def test_mattel_start_cards_take_effect_and_a_four_is_flipped_again() -> None:
    skip = table(CLASSIC, [["R1"], ["G2"], ["B1"]], ["RS"], first=0)
    assert skip.turn == 1
    reverse = table(CLASSIC, [["R1"], ["G2"], ["B1"]], ["RR"], first=1)
    assert (reverse.turn, reverse.direction) == (0, -1)
    two = table(CLASSIC, [["R1"], ["G2"], ["B1"]], ["RD2"], first=0)
    assert (two.turn, two.pending) == (0, 2)
    four = table(CLASSIC, [["R1"], ["G2"], ["B1"]], ["WD4", "G7"])
    assert not four.started
    refused(four, {"seat": 0, "play": "R1"}, "no start card has been flipped")
    go(four, {"flip": "G7"})
    assert (four.started, four.top, four.colour) == (True, "G7", "G")
    wild = table(CLASSIC, [["R1"], ["G2"], ["B1"]], ["W"])
    go(wild, {"seat": 0, "play": "R1"})  # a wild start card leaves any colour open


def test_number_start_card_flips_until_a_number() -> None:
    game = table(rules(start_card="number"), [["R1"], ["G2"], ["B1"]], ["RS", "W", "G7"])
    refused(game, {"flip": "G7"}, "flip shows 'G7' but the pile's top card is W")
    go(game, {"flip": "W"}, {"flip": "G7"})
    assert (game.turn, game.top) == (0, "G7")
    refused(game, {"flip": "R5"}, "a flip after the game has started")


def test_the_turn_and_game_time_limits() -> None:
    game = table(PRESETS["yiqiyounuo"], [["R1", "R4"], ["G2", "R2"], ["B1", "R5"]], ["R3"])
    refused(
        game,
        {"seat": 0, "play": "R1", "t": 10_001},
        "seat 0 acts 10001 ms after the move before, over the 10 s turn limit, and the "
        "move is not marked auto",
    )
    go(game, {"seat": 0, "play": "R1", "t": 10_001, "auto": True})
    go(game, {"seat": 1, "play": "R2", "t": 125_000, "auto": True})
    refused(
        game,
        {"seat": 2, "play": "R5", "t": 130_001},
        "seat 2 acts 5001 ms after the move "
        "before, over the 5 s turn limit, and the move is not marked auto",
    )
    refused(
        game, {"end": "time", "t": 179_999}, "end time at t 179999, before the game limit of 180 s"
    )
    refused(
        game,
        {"seat": 2, "play": "R5", "t": 180_001, "auto": True},
        "t 180001 is after the game limit of 180 s",
    )
    refused(game, {"seat": 2, "play": "R5", "t": 1}, "t 1 is before the move before it (125000)")
    go(game, {"end": "time", "t": 180_000})
    assert game.ended == "time"


def test_reshuffle_only_on_an_empty_pile_and_with_the_discard_pile() -> None:
    game = table(rules(hand_size=1), [["R1"], ["G2"]], ["R3"])
    refused(game, {"reshuffle": []}, f"reshuffle, but the pile still holds {len(game.pile)} cards")
    game.pile.clear()
    refused(
        game,
        {"reshuffle": ["R3"]},
        "reshuffle holds R3 that the discard pile does not, and lacks nothing",
    )


# -- the verdict of a whole record -------------------------------------------------------


def record(log: dict[str, Any], hands: list[list[str]], ended_by: str) -> dict[str, Any]:
    return {"seats": [{"hand": hand} for hand in hands], "ended_by": ended_by, "log": log}


def short_game() -> tuple[dict[str, Any], list[list[str]]]:
    """Two seats, hand size 2 (rules(hand_size=2)): seat 0 goes out in two plays."""
    deal = [["R1", "R2"], ["G5", "G6"]]
    rest = Counter(CLASSIC.table.copies)
    rest.subtract(["R1", "R2", "G5", "G6", "R3"])
    pile = ["R3", *sorted(rest.elements())]
    moves = [
        {"t": 0, "flip": "R3"},
        {"t": 1000, "seat": 0, "play": "R1"},
        {"t": 1200, "seat": 0, "uno": True},
        {"t": 2000, "seat": 1, "draw": 1},
        {"t": 3000, "seat": 1, "pass": True},
        {"t": 4000, "seat": 0, "play": "R2"},
    ]
    drawn = pile[1]
    return {"v": 1, "deal": deal, "pile": pile, "first": 0, "moves": moves}, [
        [],
        ["G5", "G6", drawn],
    ]


def test_a_whole_record_replays_ok() -> None:
    log, hands = short_game()
    assert replay(record(log, hands, "out"), rules(hand_size=2)) == Verdict(ok=True)
    assert replay({"seats": [{}, {}], "log": None}, CLASSIC) == Verdict(ok=True)


def test_the_verdict_names_the_first_bad_move() -> None:
    log, hands = short_game()
    log["moves"][3] = {"t": 2000, "seat": 1, "play": "G5"}
    verdict = replay(record(log, hands, "out"), rules(hand_size=2))
    assert verdict == Verdict(ok=False, move=3, reason="seat 1 plays G5 on R1")
    assert str(verdict) == "move 3: seat 1 plays G5 on R1"


def test_the_final_hands_and_the_ending_must_be_the_records() -> None:
    log, hands = short_game()
    hands[1][0] = "G7"
    assert str(replay(record(log, hands, "out"), rules(hand_size=2))) == (
        "hands at the end differ from seats[1].hand: log has G5, record has G7"
    )
    log, hands = short_game()
    assert str(replay(record(log, hands, "time"), rules(hand_size=2))) == (
        "the log ends by out, the record by 'time'"
    )
    log, hands = short_game()
    log["moves"].pop()
    assert str(replay(record(log, hands, "out"), rules(hand_size=2))) == (
        "the log stops before the game is over"
    )


def test_the_deal_and_pile_must_be_one_deck() -> None:
    log, hands = short_game()
    lost = log["pile"][-1]
    log["pile"][-1] = "R1"
    assert str(replay(record(log, hands, "out"), rules(hand_size=2))) == (
        f"the deal and the pile are not one classic deck: extra R1; missing {lost}"
    )
    log, hands = short_game()
    assert replay(record(log, hands, "out"), CLASSIC).reason == "deal[0] must hold 7 cards"
    log, hands = short_game()
    log["v"] = 2
    assert replay(record(log, hands, "out"), rules(hand_size=2)).reason == (
        "log must be a move log v1 object (v: 1)"
    )


def test_an_observer_sees_the_state_before_every_move() -> None:
    log, hands = short_game()
    seen: list[tuple[int, int, list[str]]] = []

    def observe(index: int, move: Mapping[str, Any], game: Table) -> None:
        if "seat" in move:
            seen.append((index, game.turn, game.playable(move["seat"])))

    assert replay(record(log, hands, "out"), rules(hand_size=2), observe).ok
    assert seen == [(1, 0, ["R1", "R2"]), (2, 1, ["R2"]), (3, 1, []), (4, 1, []), (5, 0, ["R2"])]
