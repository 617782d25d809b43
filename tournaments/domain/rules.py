"""Rulesets of play as data (SPEC §3 "Rulesets of play"; seeds: UNO's rules and variants).

A season, and optionally an event, names a ruleset: a preset, or a preset with switches
changed. Its JSON form is ``{"preset": "classic", "switches": {"jump_in": "all"}}``; the
switches left out keep the preset's value. :func:`ruleset_from_spec` validates a spec and
names the bad switch; :meth:`Ruleset.to_spec` writes the smallest spec that gives it back.

The switches:

- ``deck``: a card table of ``tournaments.domain.cards.TABLES`` (``classic``, 108 cards;
  ``happy``, 一起优诺 欢乐场 with 同色全出 ``RA``… and 反弹 ``WB``; and their doubles).
- ``challenge``: a single +4 may be challenged by its target (False: 不虚张声势).
- ``stacking`` (叠加): ``none``; ``same`` (+2 on +2, +4 on +4: Ubisoft); ``seeds`` (+2 or
  +4 on a +2, only +4 on a +4); ``forced`` (the seeds' stacks, and a player holding a card
  that stacks must stack: 一起优诺).
- ``seven_zero``: a 7 swaps hands with a chosen seat, a 0 passes every hand on.
- ``jump_in`` (抢牌): ``none``; ``identical_numbers`` (a number card identical to the top
  card, out of turn); ``all`` (any identical card, as online; the jumped card's effect is
  void).
- ``draw``: ``one`` (draw one card, then play or pass); ``one_only`` (after a voluntary
  draw only the drawn card may be played: WANGO); ``until_playable`` (抓到匹配: draw until
  a card can be played).
- ``forced_play`` (强制出牌): a player who can play may not draw instead.
- ``multi_play`` (叠牌): several cards of one number or one action in one play.
- ``last_card_number`` (特殊牌限制): the last card must be a number card.
- ``two_player_reverse``: with two players a reverse acts as a skip (``skip``, the seeds'
  rule) or only turns the direction (``reverse``, the variant).
- ``start_card``: ``mattel`` (a +4 start card is re-flipped; a skip, reverse, +2 or wild
  start card takes effect on the first player) or ``number`` (re-flip until a number card:
  the seeds' Original-rules text).
- ``hand_size``: cards dealt to each seat (7).
- ``turn_seconds`` / ``final_minute_turn_seconds`` / ``game_seconds``: the time limits
  (10 s a turn, 5 s in the last minute in 一起优诺, 3 minutes a game); None for no limit.

Presets (decided; see docs/decisions.md): ``classic`` is Mattel's rules with the tour's
time limits; ``yiqiyounuo`` adds forced stacking, jump-in of every card, a number start
card and 5-second turns in the last minute; ``ubisoft`` stacks only the same kind;
``wango`` lets a player draw one card and play only that card.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from types import MappingProxyType
from typing import Any, Final

from tournaments.domain.cards import TABLES, CardTable

__all__ = [
    "PRESETS",
    "SWITCHES",
    "Ruleset",
    "ruleset_from_spec",
    "ruleset_from_text",
]

_CHOICES: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        "deck": tuple(TABLES),
        "stacking": ("none", "same", "seeds", "forced"),
        "jump_in": ("none", "identical_numbers", "all"),
        "draw": ("one", "one_only", "until_playable"),
        "two_player_reverse": ("skip", "reverse"),
        "start_card": ("mattel", "number"),
    }
)
_FLAGS: Final = frozenset(
    {"challenge", "seven_zero", "forced_play", "multi_play", "last_card_number"}
)


@dataclass(frozen=True, slots=True)
class Ruleset:
    """One ruleset of play: a preset's name and the value of every switch."""

    preset: str = "classic"
    deck: str = "classic"
    challenge: bool = True
    stacking: str = "none"
    seven_zero: bool = False
    jump_in: str = "none"
    draw: str = "one"
    forced_play: bool = False
    multi_play: bool = False
    last_card_number: bool = False
    two_player_reverse: str = "skip"
    start_card: str = "mattel"
    hand_size: int = 7
    turn_seconds: int | None = 10
    final_minute_turn_seconds: int | None = None
    game_seconds: int | None = 180

    @property
    def table(self) -> CardTable:
        """The card table of the ruleset's deck."""
        return TABLES[self.deck]

    def switches(self) -> dict[str, Any]:
        """Every switch and its value (the preset's name left out)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "preset"}

    def to_spec(self) -> dict[str, Any]:
        """``{"preset", "switches"}`` with only the switches that differ from the preset."""
        base = PRESETS[self.preset].switches()
        changed = {name: value for name, value in self.switches().items() if base[name] != value}
        return {"preset": self.preset, "switches": changed}


PRESETS: Final[Mapping[str, Ruleset]] = MappingProxyType(
    {
        "classic": Ruleset(),
        "yiqiyounuo": Ruleset(
            preset="yiqiyounuo",
            stacking="forced",
            jump_in="all",
            start_card="number",
            final_minute_turn_seconds=5,
        ),
        "ubisoft": Ruleset(preset="ubisoft", stacking="same"),
        "wango": Ruleset(preset="wango", draw="one_only"),
    }
)
"""The named presets."""

SWITCHES: Final = tuple(f.name for f in fields(Ruleset) if f.name != "preset")
"""The switch names, in a stable order."""


def _switch(name: str, value: object) -> object:
    """Return a switch's value after checking it; ValueError says what is allowed."""
    if name in _CHOICES:
        if value not in _CHOICES[name]:
            raise ValueError(f"{name}: {value!r} is not one of {', '.join(_CHOICES[name])}")
        return value
    if name in _FLAGS:
        if not isinstance(value, bool):
            raise ValueError(f"{name}: must be true or false, got {value!r}")
        return value
    if isinstance(value, bool) or (value is not None and not isinstance(value, int)):
        raise ValueError(f"{name}: must be a whole number, got {value!r}")
    if name == "hand_size":
        if value is None or not 1 <= value <= 20:
            raise ValueError(f"hand_size: must be 1 to 20 cards, got {value!r}")
        return value
    if value is not None and not 1 <= value <= 3600:
        raise ValueError(f"{name}: must be 1 to 3600 seconds or null, got {value!r}")
    return value


def ruleset_from_spec(spec: object) -> Ruleset:
    """Build the ruleset a spec names: a preset name, or ``{"preset", "switches"}``.

    Raises ValueError naming the unknown preset or the bad switch.
    """
    if isinstance(spec, str):
        spec = {"preset": spec}
    if not isinstance(spec, Mapping):
        raise ValueError(f"a ruleset is a preset name or an object, got {type(spec).__name__}")
    extra = sorted(str(key) for key in spec.keys() - {"preset", "switches"})
    if extra:
        raise ValueError(f"a ruleset has only preset and switches, not {', '.join(extra)}")
    name = spec.get("preset", "classic")
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r} (known: {', '.join(PRESETS)})")
    switches = spec.get("switches")
    if switches is None:
        switches = {}
    if not isinstance(switches, Mapping):
        raise ValueError("switches must be an object of switch names to values")
    unknown = sorted(str(key) for key in switches.keys() - set(SWITCHES))
    if unknown:
        raise ValueError(f"unknown switch {unknown[0]!r} (known: {', '.join(SWITCHES)})")
    changes: dict[str, Any] = {key: _switch(key, value) for key, value in switches.items()}
    return replace(PRESETS[name], **changes)


def ruleset_from_text(text: str) -> Ruleset:
    """The ruleset a command-line value names: a preset name, or a spec as a JSON object.

    Raises ValueError naming what is wrong."""
    if not text.lstrip().startswith("{"):
        return ruleset_from_spec(text.strip())
    try:
        spec = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
    return ruleset_from_spec(spec)
