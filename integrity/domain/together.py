"""Better together than apart: a partner's play that helps (串谋, collusion) (SPEC §7).

However a pair colludes — the feeder dumping points when the partner goes out, finishing
last, letting the partner go out, or taking cards off the partner when he cannot win —
someone's games with the partner at the table differ from their other games: the
beneficiary beats the strangers at the table more often, or ends with fewer points than
they do; the feeder the other way round. This test asks exactly that, and nothing about how.

**Data.** :class:`~integrity.domain.data.TableObs` of the window (at least every game of
the pairs' players), winners and hands read. In each game of a player ``x`` of the pair
``{x, y}``, ``x`` is compared with the *strangers* at the table: the others who are neither
``y`` nor anyone co-seating found queueing with ``x`` or ``y`` (a third friend or a farm's
other accounts sit at every shared table and are no reference). A game without a stranger
(a farm filling its table) is not used. Per game:

* *decided*: ``x`` won and no stranger did, or a stranger won and ``x`` did not; with the
  number ``k`` of strangers at the table;
* *hand*: when ``x`` lost and a stranger lost too, ``x``'s hand against one losing stranger,
  picked by the game id (:func:`zlib.crc32`), never by the game's outcome: 1 when ``x``
  holds more points, 0 when fewer, 1/2 when as many. One stranger, so a game's comparison
  has the same spread whether the table holds one losing stranger or three.

**Statistic.** For each player, the games with the partner at the table (*together*)
against those without (*apart*), in two parts: the wins, by the exact conditional test of
``x``'s wins together given its wins in all decided games, each game won with odds
``θ / S`` (:func:`~integrity.domain.stats.log_luce_tails`: Luce's choice axiom; ``S`` the
strangers' summed strength, :func:`~integrity.domain.strengths.luce_strengths`, or their
number when no strengths are given; ``x``'s strength ``θ`` conditioned out); the hands, by
the one-sided Wilcoxon–Mann–Whitney rank sum of the comparisons together against apart,
tied values at their mean rank (normal approximation,
:func:`~integrity.domain.stats.log_mid_rank_sum_tail`).
Each in the direction asked — *better together* (more wins, fewer points) or *worse* — and
the two parts combined by Fisher's method (:func:`~integrity.domain.stats.log_fisher_combined`):
a partner who plays for the beneficiary makes him win more *and* lose with fewer points,
and a feeder who only lets him go out, or only takes cards off him, moves one part, which
Fisher's method still carries. The parts are independent under the null: given which games
``x`` lost, the hand comparisons are exchangeable between together and apart whatever the
wins were. A part with no game on one side is left out (a count, never an outcome). A
player is tested only with ``>= min_shared`` games together and ``>= min_apart`` apart (a
farm's feeder who plays only on the farm has no apart games; its partner, who has, is
tested). The pair's p-value is the smallest of its player's and direction's times their
number (Bonferroni over the two or four tests, a number fixed by counts of games): the
tests of one pair are dependent (when one goes out the other does not), and Bonferroni
needs no independence.

**Null.** Whether the partner sits at the table changes neither who wins between ``x`` and
the strangers when one of them wins (Luce's choice axiom, which the simulator's winner draw
satisfies: the partner's own strength changes how often the winner is among them, which the
test conditions on; the strangers' strengths are estimates, so a friend who sits with fewer
strangers than his other games hold meets it only as far as they are right) nor how
``x``'s hand compares with a losing stranger's (the game's length is common to both).
Honest friends who queue together meet it: their strangers come from the same queue as at
their other tables.

**Family (opportunity).** The pairs co-seating discovered (who queue together: a seating
statistic that looks at no outcome) with ``>= min_shared`` tables together. Weighted
Benjamini–Hochberg (Genovese, Roeder & Wasserman 2006) at ``q`` over the pairs with at least
one test: a pair's weight is its tables together over their mean in the family (a pair that
profits must sit together often; friends who queue together now and then sit together
less), a count of seats fixed before any outcome is read, averaging 1. **False-positive
control:** the FDR of the flagged pairs at ``q``, under the null above (weighted BH on
independent pairs).

**Evidence:** per player, the games together and apart, the wins and losses against the
strangers in each, and the share of the hand comparisons ``x`` held more points in; the
player and direction of the test that decided; the tables together and the weight. Flags
are ordered by ``p / w``, then by players.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Final, Protocol, TypeVar, cast

from integrity.domain.data import TableObs, partners_of
from integrity.domain.stats import (
    bh_log_qvalues,
    log_fisher_combined,
    log_luce_tails,
    log_mid_rank_sum_tail,
)

__all__ = [
    "VERSION",
    "PairTest",
    "PlayerSides",
    "Side",
    "TogetherFlag",
    "TogetherResult",
    "detect_together",
    "shared_bh",
]

VERSION: Final = "together-5"

_LOG10: Final = math.log(10.0)


@dataclass(frozen=True, slots=True)
class Side:
    """A player's games against the strangers on one side (together or apart): how many
    enter a part (``games``; a game lost to a stranger may enter both), the strangers'
    summed strength at each decided game it won (``won``) and lost (``lost``), and its hand
    comparisons with a losing stranger (``heavier``: 1, 1/2 or 0)."""

    games: int = 0
    won: tuple[float, ...] = ()
    lost: tuple[float, ...] = ()
    heavier: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class PlayerSides:
    """One player's games with the partner at the table and without (evidence)."""

    player: str
    together: int
    apart: int
    won_together: int
    lost_together: int
    won_apart: int
    lost_apart: int
    heavier_together: float | None
    heavier_apart: float | None


@dataclass(frozen=True, slots=True)
class TogetherFlag:
    """A pair whose games differ with the partner at the table: ``player`` did
    ``direction`` (``better`` or ``worse``) together; ``tests`` is the Bonferroni factor
    (one test per player and direction),
    ``shared`` the pair's tables together and ``weight`` its weighted-BH weight;
    ``strength`` is ``-log10 q`` from the log-space q-value (finite when ``q`` underflows
    to 0.0)."""

    family: ClassVar[str] = "together"
    near_conclusive: ClassVar[bool] = False

    players: tuple[str, str]
    player: str
    direction: str
    sides: tuple[PlayerSides, ...]
    tests: int
    shared: int
    weight: float
    p: float
    q: float
    strength: float


@dataclass(frozen=True, slots=True)
class TogetherResult:
    """The discoveries and the family they were controlled over."""

    flags: tuple[TogetherFlag, ...]
    family_size: int
    version: str = VERSION


#: One game of a player: its id, the table's players, hands and winners, and the seat.
_Game = tuple[str, tuple[str, ...], tuple[int, ...], tuple[int, ...], int]


def _games(tables: Iterable[TableObs], pairs: Sequence[tuple[str, str]]) -> dict[str, list[_Game]]:
    """Per player of ``pairs``, each of their games."""
    wanted = {player for pair in pairs for player in pair}
    games: dict[str, list[_Game]] = {player: [] for player in wanted}
    for table in tables:
        for seat, player in enumerate(table.players):
            if player in wanted:
                games[player].append(
                    (table.game_id, table.players, table.hands, table.winners, seat)
                )
    return games


def _sides(
    games: Sequence[_Game], partner: str, known: frozenset[str], strengths: Mapping[str, float]
) -> tuple[Side, Side]:
    """The player's games against the strangers (module docstring), together with
    ``partner`` and apart; ``known``: the players who queue with either of the pair, never
    strangers; ``strengths``: the strangers' (1 for one without)."""
    used = {True: 0, False: 0}
    won: dict[bool, list[float]] = {True: [], False: []}
    lost: dict[bool, list[float]] = {True: [], False: []}
    heavier: dict[bool, list[float]] = {True: [], False: []}
    for game_id, players, hands, winners, seat in games:
        strangers = [k for k, p in enumerate(players) if k != seat and p not in known]
        if not strangers:
            continue
        together = partner in players
        wins = seat in winners
        beaten = any(k in winners for k in strangers)
        if wins and beaten:
            continue  # co-winners: neither part
        used[together] += 1
        if wins or beaten:
            rivals = math.fsum(strengths.get(players[k], 1.0) for k in strangers)
            (won if wins else lost)[together].append(rivals)
            if wins:
                continue
        losing = [k for k in strangers if k not in winners]
        if losing:
            other = hands[losing[zlib.crc32(game_id.encode()) % len(losing)]]
            hand = hands[seat]
            heavier[together].append(1.0 if hand > other else 0.5 if hand == other else 0.0)
    together_side, apart_side = (
        Side(used[side], tuple(won[side]), tuple(lost[side]), tuple(heavier[side]))
        for side in (True, False)
    )
    return together_side, apart_side


def _log_wins(together: Side, apart: Side) -> tuple[float, float]:
    """The exact conditional test of the wins over the strangers, together against apart
    (:func:`~integrity.domain.stats.log_luce_tails`), one-sided: more wins together, and
    fewer."""
    decided = len(together.won) + len(together.lost)
    total = decided + len(apart.won) + len(apart.lost)
    if not decided or decided == total:
        return 0.0, 0.0
    return log_luce_tails(
        len(together.won),
        [*together.won, *together.lost],
        [*apart.won, *apart.lost],
        len(together.won) + len(apart.won),
    )


def _log_directions(together: Side, apart: Side) -> dict[str, float]:
    """Per direction (``better``, ``worse``), the two parts' log p-values combined by
    Fisher's method (the parts with games on both sides)."""
    parts: dict[str, list[float]] = {"better": [], "worse": []}
    if (together.won or together.lost) and (apart.won or apart.lost):
        more, fewer = _log_wins(together, apart)
        parts["better"].append(more)
        parts["worse"].append(fewer)
    if together.heavier and apart.heavier:
        for direction, sign in (("better", -1), ("worse", 1)):
            parts[direction].append(
                log_mid_rank_sum_tail(
                    [sign * v for v in together.heavier], [sign * v for v in apart.heavier]
                )
            )
    return {direction: log_fisher_combined(logs) for direction, logs in parts.items()}


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _test(
    pair: tuple[str, str],
    games: dict[str, list[_Game]],
    neighbours: dict[str, frozenset[str]],
    min_shared: int,
    min_apart: int,
    strengths: Mapping[str, float],
) -> tuple[float, TogetherFlag] | None:
    """The pair's log p-value (module docstring) and its flag before BH (``q`` = 1)."""
    sides: list[PlayerSides] = []
    best: tuple[float, str, str] | None = None
    tests = 0
    known = frozenset(pair).union(*(neighbours.get(player, ()) for player in pair))
    for player, partner in (pair, pair[::-1]):
        together, apart = _sides(games[player], partner, known, strengths)
        if together.games < min_shared or apart.games < min_apart:
            continue
        sides.append(
            PlayerSides(
                player,
                together.games,
                apart.games,
                len(together.won),
                len(together.lost),
                len(apart.won),
                len(apart.lost),
                _mean(together.heavier),
                _mean(apart.heavier),
            )
        )
        for direction, log_p in _log_directions(together, apart).items():
            tests += 1
            if best is None or log_p < best[0]:
                best = (log_p, player, direction)
    if best is None:
        return None
    log_p = min(0.0, best[0] + math.log(tests))
    shared = sum(1 for game in games[pair[0]] if pair[1] in game[1])
    flag = TogetherFlag(
        pair, best[1], best[2], tuple(sides), tests, shared, 1.0, math.exp(log_p), 1.0, 0.0
    )
    return log_p, flag


def detect_together(
    tables: Iterable[TableObs],
    pairs: Iterable[tuple[str, str]],
    *,
    q: float = 0.01,
    min_shared: int = 5,
    min_apart: int = 5,
    strengths: Mapping[str, float] | None = None,
) -> TogetherResult:
    """Test each pair (see the module docstring) and flag at weighted BH ``q``; ``strengths``:
    the players' strengths (1 for a player without; all 1 when not given)."""
    chosen = sorted({(min(a, b), max(a, b)) for a, b in pairs})
    games = _games(tables, chosen)
    neighbours = partners_of(chosen)
    strength_of = strengths or {}
    tested = [
        t
        for pair in chosen
        if (t := _test(pair, games, neighbours, min_shared, min_apart, strength_of))
    ]
    return TogetherResult(flags=tuple(shared_bh(tested, q)), family_size=len(tested))


class PairTest(Protocol):
    """A pair test's flag as :func:`shared_bh` weighs it: the pair's tables together."""

    @property
    def players(self) -> tuple[str, str]: ...

    @property
    def shared(self) -> int: ...


_Flag = TypeVar("_Flag", bound=PairTest)


def shared_bh(tested: Sequence[tuple[float, _Flag]], q: float) -> list[_Flag]:
    """The flags of the pairs ``tested`` (log p-value, flag: a frozen dataclass with
    ``weight``, ``q`` and ``strength`` fields) that weighted BH discovers at ``q``, those
    fields set; a pair's weight is its tables together over their mean in the family
    (module docstring). Ordered by ``p / w``, then by players."""
    mean = math.fsum(flag.shared for _, flag in tested) / len(tested) if tested else 1.0
    weighted = [(log_p - math.log(flag.shared / mean), flag) for log_p, flag in tested]
    log_q = bh_log_qvalues([log_pw for log_pw, _ in weighted])
    found = [
        (log_pw, flag, lq)
        for (log_pw, flag), lq in zip(weighted, log_q, strict=True)
        if lq <= math.log(q)
    ]
    found.sort(key=lambda item: (item[0], item[1].players))
    return [
        cast(
            _Flag,
            replace(
                cast(Any, flag),
                weight=flag.shared / mean,
                q=math.exp(lq),
                strength=-lq / _LOG10,
            ),
        )
        for _, flag, lq in found
    ]
