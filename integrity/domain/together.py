"""Better together than apart: a partner's play that helps (串谋, collusion) (SPEC §7).

However a pair colludes — the feeder dumping points when the partner goes out, finishing
last, letting the partner go out, or taking cards off the partner when he cannot win —
someone's hands at the pair's shared tables differ from their hands elsewhere: the
beneficiary ends with fewer points than the strangers at the table, the feeder with more.
This test asks exactly that, and nothing about how.

**Data.** :class:`~integrity.domain.data.TableObs` of the window (at least every game of
the pairs' players), hands read. In each game of a player ``x`` of the pair ``{x, y}``,
``x``'s *excess*: ``x``'s hand points minus the hand of one *stranger* at the table — one
of the others who is neither ``y`` nor anyone co-seating found queueing with ``x`` or
``y`` (a third friend or a farm's other accounts sit at every shared table and are no
reference), picked by the game id (:func:`zlib.crc32`), never by hands. A game without a
stranger (a farm filling its table) has none. Measured against the same table, the
game's length and the stranger's strength cancel, the partner's own strength never
enters, and a together excess and an apart one are the same difference of two hands.

**Statistic.** For each player of the pair, the excesses of the games with the partner at
the table (*together*) against those without (*apart*): one-sided Wilcoxon–Mann–Whitney
rank sums for *better together* (smaller excesses) and for *worse together* (larger),
ties broken against the pair (:func:`~integrity.domain.stats.log_rank_sum_tail`). A player
is tested only with ``>= min_shared`` games together and ``>= min_apart`` apart (a farm's
feeder who plays only on the farm has no apart games; its partner, who has, is tested).
The pair's p-value is the smallest of its tests times their number (Bonferroni over the
two or four tests, a number fixed by counts of games): the tests of one pair are
dependent (when one goes out the other does not), and Bonferroni needs no independence.

**Null.** A player's excess does not depend on whether the partner is at the table:
together and apart are exchangeable. Honest friends who queue together meet it: the
strangers at their tables come from the same queue as at their other tables.

**Family (opportunity).** The pairs co-seating discovered (who queue together: a seating
statistic that does not look at hands) with ``>= min_shared`` tables together.
Benjamini–Hochberg at ``q`` over the pairs with at least one test. **False-positive
control:** the FDR of the flagged pairs at ``q``, under the null above.

**Evidence:** per player, the games together and apart with their mean excess, and the
player and direction of the test that decided. Flags are ordered by p-value, then by
players.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Final

from integrity.domain.data import TableObs
from integrity.domain.stats import bh_log_qvalues, log_rank_sum_tail

__all__ = ["VERSION", "PlayerSides", "TogetherFlag", "TogetherResult", "detect_together"]

VERSION: Final = "together-1"

_LOG10: Final = math.log(10.0)


@dataclass(frozen=True, slots=True)
class PlayerSides:
    """One player's games with the partner at the table and without, with their mean
    excess over the strangers (evidence)."""

    player: str
    together: int
    apart: int
    mean_together: float
    mean_apart: float


@dataclass(frozen=True, slots=True)
class TogetherFlag:
    """A pair whose results differ with the partner at the table: ``player`` did
    ``direction`` (``better`` or ``worse``) together; ``tests`` is the Bonferroni factor,
    ``strength`` is ``-log10 q`` from the log-space q-value (finite when ``q`` underflows
    to 0.0)."""

    family: ClassVar[str] = "together"
    near_conclusive: ClassVar[bool] = False

    players: tuple[str, str]
    player: str
    direction: str
    sides: tuple[PlayerSides, ...]
    tests: int
    p: float
    q: float
    strength: float


@dataclass(frozen=True, slots=True)
class TogetherResult:
    """The discoveries and the family they were controlled over."""

    flags: tuple[TogetherFlag, ...]
    family_size: int
    version: str = VERSION


@dataclass(frozen=True, slots=True)
class _Tested:
    players: tuple[str, str]
    player: str
    direction: str
    sides: tuple[PlayerSides, ...]
    tests: int
    log_p: float


#: One game of a player: its id, the table's players and hands, and the player's seat.
_Game = tuple[str, tuple[str, ...], tuple[int, ...], int]


def _games(tables: Iterable[TableObs], pairs: Sequence[tuple[str, str]]) -> dict[str, list[_Game]]:
    """Per player of ``pairs``, each of their games."""
    wanted = {player for pair in pairs for player in pair}
    games: dict[str, list[_Game]] = {player: [] for player in wanted}
    for table in tables:
        for seat, player in enumerate(table.players):
            if player in wanted:
                games[player].append((table.game_id, table.players, table.hands, seat))
    return games


def _sides(
    games: Sequence[_Game], partner: str, known: frozenset[str]
) -> tuple[list[float], list[float]]:
    """The player's excesses over a stranger (module docstring), together with ``partner``
    and apart; ``known``: the players who queue with either of the pair, never strangers."""
    together: list[float] = []
    apart: list[float] = []
    for game_id, players, hands, seat in games:
        strangers = [k for k, p in enumerate(players) if k != seat and p not in known]
        if strangers:
            stranger = strangers[zlib.crc32(game_id.encode()) % len(strangers)]
            side = together if partner in players else apart
            side.append(hands[seat] - hands[stranger])
    return together, apart


def _test(
    pair: tuple[str, str],
    games: dict[str, list[_Game]],
    neighbours: dict[str, set[str]],
    min_shared: int,
    min_apart: int,
) -> _Tested | None:
    sides: list[PlayerSides] = []
    best: tuple[float, str, str] | None = None
    tests = 0
    known = frozenset(pair).union(*(neighbours.get(player, ()) for player in pair))
    for player, partner in (pair, pair[::-1]):
        together, apart = _sides(games[player], partner, known)
        if len(together) < min_shared or len(apart) < min_apart:
            continue
        sides.append(
            PlayerSides(
                player,
                len(together),
                len(apart),
                sum(together) / len(together),
                sum(apart) / len(apart),
            )
        )
        for direction, sign in (("better", -1.0), ("worse", 1.0)):
            tests += 1
            log_p = log_rank_sum_tail([sign * e for e in together], [sign * e for e in apart])
            if best is None or log_p < best[0]:
                best = (log_p, player, direction)
    if best is None:
        return None
    log_p = min(0.0, best[0] + math.log(tests))
    return _Tested(pair, best[1], best[2], tuple(sides), tests, log_p)


def detect_together(
    tables: Iterable[TableObs],
    pairs: Iterable[tuple[str, str]],
    *,
    q: float = 0.01,
    min_shared: int = 5,
    min_apart: int = 5,
) -> TogetherResult:
    """Test each pair (see the module docstring) and flag at BH ``q``."""
    chosen = sorted({(min(a, b), max(a, b)) for a, b in pairs})
    games = _games(tables, chosen)
    neighbours: dict[str, set[str]] = {}
    for a, b in chosen:
        neighbours.setdefault(a, set()).add(b)
        neighbours.setdefault(b, set()).add(a)
    tested = [t for pair in chosen if (t := _test(pair, games, neighbours, min_shared, min_apart))]
    log_q = bh_log_qvalues([t.log_p for t in tested])
    flags = [
        TogetherFlag(
            players=t.players,
            player=t.player,
            direction=t.direction,
            sides=t.sides,
            tests=t.tests,
            p=math.exp(t.log_p),
            q=math.exp(lq),
            strength=-lq / _LOG10,
        )
        for t, lq in zip(tested, log_q, strict=True)
        if lq <= math.log(q)
    ]
    flags.sort(key=lambda f: (f.p, f.players))
    return TogetherResult(flags=tuple(flags), family_size=len(tested))
