"""Better together than apart: a partner's play that helps (串谋, collusion) (SPEC §7).

However a pair colludes — the feeder dumping points when the partner goes out, finishing
last, letting the partner go out, or taking cards off the partner when he cannot win —
someone's games with the partner at the table differ from their other games: the
beneficiary beats the strangers at the table more often, or ends with fewer points than
they do; the feeder the other way round. This test asks exactly that, and nothing about how.

**Data.** :class:`~integrity.domain.data.TableObs` of the window (at least every game of
the pairs' players), winners and hands read. In each game of a player ``x`` of the pair
``{x, y}``, ``x`` is compared with one *stranger* at the table: one of the others who is
neither ``y`` nor anyone co-seating found queueing with ``x`` or ``y`` (a third friend or a
farm's other accounts sit at every shared table and are no reference), picked by the game
id (:func:`zlib.crc32`), never by the game's outcome. A game without a stranger (a farm
filling its table) is not used. Per game, one of:

* *decided*: one of ``x`` and the stranger won and the other did not;
* *both lost*: the share of the strangers who lost that ``x``'s hand outweighs (ties count
  half): 0 when ``x`` holds fewer points than each of them, 1 when more. Every losing
  stranger is a comparison, so a game with three says more than one hand difference would.

**Statistic.** For each player, the games with the partner at the table (*together*)
against those without (*apart*), in two parts on disjoint games: the decided games, by
Fisher's exact test of ``x``'s wins over the stranger together against apart (a 2×2 table);
the games both lost, by the one-sided Wilcoxon–Mann–Whitney rank sum of the shares, tied
shares at their mean rank (normal approximation,
:func:`~integrity.domain.stats.log_mid_rank_sum_tail`). Each in the direction asked —
*better together* (more wins, fewer points) or *worse* — and the two p-values combined by
Fisher's method (``-2 Σ log p`` against χ² with 4 degrees of freedom). A player is tested
only with ``>= min_shared`` games together and ``>= min_apart`` apart (a farm's feeder who
plays only on the farm has no apart games; its partner, who has, is tested). The pair's
p-value is the smallest of its tests times their number (Bonferroni over the two or four
tests, a number fixed by counts of games): the tests of one pair are dependent (when one
goes out the other does not), and Bonferroni needs no independence.

**Null.** Whether the partner sits at the table changes neither how ``x`` fares against a
stranger when one of them wins (who wins between two players does not depend on who else
is at the table: Luce's choice axiom, which the simulator's winner draw satisfies) nor how
``x``'s hand compares with a losing stranger's (the game's length is common to both; the
share's mean is the chance that ``x`` outweighs one stranger, however many lost). The
partner's own strength changes how often a game is decided between ``x`` and the stranger,
which both parts condition on, so it never enters. Honest friends who queue together meet
it: their strangers come from the same queue as at their other tables.

**Family (opportunity).** The pairs co-seating discovered (who queue together: a seating
statistic that looks at no outcome) with ``>= min_shared`` tables together. Weighted
Benjamini–Hochberg (Genovese, Roeder & Wasserman 2006) at ``q`` over the pairs with at least
one test: a pair's weight is its tables together over their mean in the family (a pair that
profits must sit together often; friends who queue together now and then sit together
less), a count of seats fixed before any outcome is read, averaging 1. **False-positive
control:** the FDR of the flagged pairs at ``q``, under the null above (weighted BH on
independent pairs).

**Evidence:** per player, the games together and apart, the wins and losses against the
stranger in each, and the mean share of the games both lost; the player and direction of
the test that decided; the tables together and the weight. Flags are ordered by ``p / w``,
then by players.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar, Final

from integrity.domain.data import TableObs
from integrity.domain.stats import bh_log_qvalues, log_fisher_lower, log_mid_rank_sum_tail

__all__ = ["VERSION", "PlayerSides", "Side", "TogetherFlag", "TogetherResult", "detect_together"]

VERSION: Final = "together-2"

_LOG10: Final = math.log(10.0)


@dataclass(frozen=True, slots=True)
class Side:
    """A player's games against the stranger on one side (together or apart): the decided
    ones (``won``, ``lost``) and, in those both lost, the share of the losing strangers
    the player's hand outweighs (``heavier``)."""

    won: int = 0
    lost: int = 0
    heavier: tuple[float, ...] = ()

    @property
    def games(self) -> int:
        return self.won + self.lost + len(self.heavier)


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
    ``direction`` (``better`` or ``worse``) together; ``tests`` is the Bonferroni factor,
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


def _sides(games: Sequence[_Game], partner: str, known: frozenset[str]) -> tuple[Side, Side]:
    """The player's games against a stranger (module docstring), together with ``partner``
    and apart; ``known``: the players who queue with either of the pair, never strangers."""
    won = {True: 0, False: 0}
    lost = {True: 0, False: 0}
    heavier: dict[bool, list[float]] = {True: [], False: []}
    for game_id, players, hands, winners, seat in games:
        strangers = [k for k, p in enumerate(players) if k != seat and p not in known]
        if not strangers:
            continue
        stranger = strangers[zlib.crc32(game_id.encode()) % len(strangers)]
        together = partner in players
        wins, beaten = seat in winners, stranger in winners
        if wins and not beaten:
            won[together] += 1
        elif beaten and not wins:
            lost[together] += 1
        elif not wins:
            hand = hands[seat]
            losing = [hands[k] for k in strangers if k not in winners]
            outweighs = sum((hand > other) + (hand == other) / 2 for other in losing)
            heavier[together].append(outweighs / len(losing))
    return (
        Side(won[True], lost[True], tuple(heavier[True])),
        Side(won[False], lost[False], tuple(heavier[False])),
    )


def _log_wins(together: Side, apart: Side, better: bool) -> float:
    """Fisher's exact test of the wins over the stranger, together against apart, one-sided."""
    decided = together.won + together.lost
    total = decided + apart.won + apart.lost
    wins = together.won + apart.won
    if not decided or decided == total:
        return 0.0
    if better:  # P(won together >= observed) = P(lost together <= observed)
        return log_fisher_lower(together.lost, decided, total - wins, total)
    return log_fisher_lower(together.won, decided, wins, total)


def _log_direction(together: Side, apart: Side, better: bool) -> float:
    """The two parts combined by Fisher's method (χ² with 4 degrees of freedom)."""
    sign = -1 if better else 1
    log_hands = log_mid_rank_sum_tail(
        [sign * v for v in together.heavier], [sign * v for v in apart.heavier]
    )
    x = -2.0 * (_log_wins(together, apart, better) + log_hands)
    return min(0.0, -x / 2 + math.log1p(x / 2))


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _test(
    pair: tuple[str, str],
    games: dict[str, list[_Game]],
    neighbours: dict[str, set[str]],
    min_shared: int,
    min_apart: int,
) -> tuple[float, TogetherFlag] | None:
    """The pair's log p-value (module docstring) and its flag before BH (``q`` = 1)."""
    sides: list[PlayerSides] = []
    best: tuple[float, str, str] | None = None
    tests = 0
    known = frozenset(pair).union(*(neighbours.get(player, ()) for player in pair))
    for player, partner in (pair, pair[::-1]):
        together, apart = _sides(games[player], partner, known)
        if together.games < min_shared or apart.games < min_apart:
            continue
        sides.append(
            PlayerSides(
                player,
                together.games,
                apart.games,
                together.won,
                together.lost,
                apart.won,
                apart.lost,
                _mean(together.heavier),
                _mean(apart.heavier),
            )
        )
        for direction in ("better", "worse"):
            tests += 1
            log_p = _log_direction(together, apart, direction == "better")
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
) -> TogetherResult:
    """Test each pair (see the module docstring) and flag at weighted BH ``q``."""
    chosen = sorted({(min(a, b), max(a, b)) for a, b in pairs})
    games = _games(tables, chosen)
    neighbours: dict[str, set[str]] = {}
    for a, b in chosen:
        neighbours.setdefault(a, set()).add(b)
        neighbours.setdefault(b, set()).add(a)
    tested = [t for pair in chosen if (t := _test(pair, games, neighbours, min_shared, min_apart))]
    mean = math.fsum(flag.shared for _, flag in tested) / len(tested) if tested else 1.0
    weighted = [(log_p - math.log(flag.shared / mean), flag) for log_p, flag in tested]
    log_q = bh_log_qvalues([log_pw for log_pw, _ in weighted])
    found = [
        (log_pw, replace(flag, weight=flag.shared / mean, q=math.exp(lq), strength=-lq / _LOG10))
        for (log_pw, flag), lq in zip(weighted, log_q, strict=True)
        if lq <= math.log(q)
    ]
    found.sort(key=lambda item: (item[0], item[1].players))
    flags = [flag for _, flag in found]
    return TogetherResult(flags=tuple(flags), family_size=len(tested))
