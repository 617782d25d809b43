"""Rulesets of play as data (SPEC §3): tournaments/domain/rules.py."""

import pytest

from tournaments.domain.rules import (
    PRESETS,
    SWITCHES,
    Ruleset,
    ruleset_from_spec,
    ruleset_from_text,
)


def test_the_presets_and_their_switches() -> None:
    assert list(PRESETS) == ["classic", "yiqiyounuo", "ubisoft", "wango"]
    assert PRESETS["classic"].switches() == {
        "deck": "classic",
        "challenge": True,
        "stacking": "none",
        "seven_zero": False,
        "jump_in": "none",
        "draw": "one",
        "forced_play": False,
        "multi_play": False,
        "last_card_number": False,
        "two_player_reverse": "skip",
        "start_card": "mattel",
        "hand_size": 7,
        "turn_seconds": 10,
        "final_minute_turn_seconds": None,
        "game_seconds": 180,
    }
    assert PRESETS["yiqiyounuo"].to_spec() == {"preset": "yiqiyounuo", "switches": {}}
    assert {name: PRESETS[name].to_spec()["switches"] for name in PRESETS} == {
        "classic": {},
        "yiqiyounuo": {},
        "ubisoft": {},
        "wango": {},
    }
    assert (PRESETS["ubisoft"].stacking, PRESETS["wango"].draw) == ("same", "one_only")
    yiqi = PRESETS["yiqiyounuo"]
    assert (yiqi.stacking, yiqi.jump_in, yiqi.start_card, yiqi.final_minute_turn_seconds) == (
        "forced",
        "all",
        "number",
        5,
    )


def test_a_preset_with_switches_changed_round_trips() -> None:
    spec = {"preset": "ubisoft", "switches": {"seven_zero": True, "jump_in": "all"}}
    rules = ruleset_from_spec(spec)
    assert (rules.preset, rules.stacking, rules.seven_zero, rules.jump_in) == (
        "ubisoft",
        "same",
        True,
        "all",
    )
    assert rules.to_spec() == spec
    assert ruleset_from_spec(rules.to_spec()) == rules
    assert ruleset_from_spec("wango") == PRESETS["wango"]
    assert ruleset_from_spec({"preset": "classic", "switches": {"stacking": "none"}}).to_spec() == {
        "preset": "classic",
        "switches": {},
    }
    assert ruleset_from_text('{"preset": "classic", "switches": {"hand_size": 5}}').hand_size == 5
    assert ruleset_from_text(" yiqiyounuo ") == PRESETS["yiqiyounuo"]
    assert set(SWITCHES) == set(Ruleset().switches())


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("hearts", "unknown preset 'hearts' (known: classic, yiqiyounuo, ubisoft, wango)"),
        (7, "a ruleset is a preset name or an object, got int"),
        ({"preset": "classic", "extra": 1}, "a ruleset has only preset and switches, not extra"),
        (
            {"switches": {"stack": "none"}},
            "unknown switch 'stack' (known: deck, challenge, "
            "stacking, seven_zero, jump_in, draw, forced_play, multi_play, last_card_number, "
            "two_player_reverse, start_card, hand_size, turn_seconds, final_minute_turn_seconds, "
            "game_seconds)",
        ),
        (
            {"switches": {"stacking": "all"}},
            "stacking: 'all' is not one of none, same, seeds, forced",
        ),
        ({"switches": {"challenge": "yes"}}, "challenge: must be true or false, got 'yes'"),
        ({"switches": {"hand_size": 0}}, "hand_size: must be 1 to 20 cards, got 0"),
        ({"switches": {"turn_seconds": True}}, "turn_seconds: must be a whole number, got True"),
        (
            {"switches": {"game_seconds": 0}},
            "game_seconds: must be 1 to 3600 seconds or null, got 0",
        ),
        (
            {"switches": {"deck": "uno-flip"}},
            "deck: 'uno-flip' is not one of classic, classic-double, happy, happy-double",
        ),
        ({"switches": []}, "switches must be an object of switch names to values"),
    ],
)
def test_a_bad_spec_is_refused_naming_what_is_wrong(spec: object, message: str) -> None:
    with pytest.raises(ValueError, match="^") as caught:
        ruleset_from_spec(spec)
    assert str(caught.value) == message


def test_a_bad_json_text_is_refused() -> None:
    with pytest.raises(ValueError, match="^not valid JSON: "):
        ruleset_from_text("{preset: classic}")
