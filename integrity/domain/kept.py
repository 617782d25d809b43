"""Cards kept: one of a pair holds the other's cards (串谋) (SPEC §7).

A feeder can help without letting the partner go out: when the partner cannot win, the
feeder takes cards off him (passes him colours, draws for him), so the partner loses with
fewer cards and the feeder with more. Nobody wins more, so point flow and the wins of
"better together" see nothing, and the hands of "better together" need the partner's games
apart, which a pair that plays mostly together lacks. This test compares the two players
with each other at their shared tables, against what their strengths say.

**Data.** :class:`~integrity.domain.data.TableObs` with the cards each seat kept, of the
window and its history: at least every game of the tested pairs' players. Only the games
with one of them at the table are read (the database audit loads exactly those).

**Strength.** Each player's strength ``t`` (log of Luce's ``θ``) from his *decided* games
against the *strangers* at his tables (everyone but his co-seating partners), as "better
together" reads them: he won and no stranger did, or a stranger won and he did not; a game
with ``k`` strangers he wins with probability ``θ / (θ + k)``. The maximum-likelihood
estimate with half a win and half a loss against one stranger added (finite for a player
who always or never wins), and its standard error from the Fisher information.

**Card law.** Two losers of one game who do not queue together: the difference of their
cards kept, ``D = cards_i - cards_j``, has mean ``(β + γ s²) · (t_i - t_j)`` (a stronger
player ends with fewer cards) and variance ``σ²``, with ``s² = se_i² + se_j²``: estimated
strengths are noisy, and the noisier they are, the flatter ``D`` rises with their
difference (regression dilution; ``γ s²`` is its first order in the strengths' error, so
a pair whose strengths are read from many games is held to the steeper slope their
difference has). ``β`` and ``γ`` by least squares through 0 on ``Δt`` and ``Δt · s²``,
``σ²`` the mean squared residual, over every such pair of losers whose players both have
``>= MIN_DECIDED`` decided games. All three are read from the games the audit reads, not
assumed. Where ``σ² = 0`` (the games were stored without hands: every loser counts 0
cards) there is no law and no pair is tested.

**Style.** Players differ in the cards they keep beyond their strength (a hoarder of wilds
ends heavier): an offset of their own, the same in all their games, of variance ``τ²``
across players. The law's ``σ²`` holds it once per game; in a pair's ``n`` games it adds up
like the strengths' error. ``τ²`` is read by moments from the tested pairs' players in
their games *apart* (no partner at the table, so no feeding): per such game he lost with
a losing stranger, his residual ``r`` against them (the mean of ``D - b · Δt``), and over
his ``g >= MIN_APART`` games (his strength read from those games alone, so that what he
won or lost beside his partner does not move it) his mean ``r̄`` has variance
``v + τ²``, ``v = var(r)/g + b̄² se²`` (its sampling variance and his strength's error),
around the players' median ``c`` (a shift common to them all cancels in a pair's
difference). ``τ²`` is the value at which the median of ``(r̄ - c)² / (v + τ²)`` over the
players is the median of chi-square with one degree of freedom, 0 when it is below that
already (players who keep cards as their strengths say). The median, not the mean: a
player fed in his games apart by an accomplice co-seating did not discover is an outlier,
not a style.

**Statistic.** For a pair ``{x, y}``, the ``n`` games together that both lost (neither
among the winners): ``S = Σ (D - b · Δt)`` with ``D = cards_x - cards_y``,
``Δt = t_x - t_y`` and the pair's slope ``b = β + γ s²``, ``s² = se_x² + se_y²``, and
``z = S / sqrt(n σ² + (n b)² s² + 2 n (n - 1) τ²)`` (the strengths' error and the two
styles are common to the ``n`` games). Two-sided normal p-value: either may be the feeder.

**Null.** Friends who queue together keep cards as two losers who do not: given their
strengths, the difference of their cards follows the week's law, their styles drawn like
the other players'.

**Family (opportunity).** The pairs co-seating discovered with ``>= min_shared`` tables
together, ``>= min_shared`` of them both lost, and both players with ``>= MIN_DECIDED``
decided games: counts, never cards. Weighted Benjamini–Hochberg at ``q`` with the weights of
"better together" (the pair's tables together over their mean in the family: a count of
seats fixed before any outcome is read). **False-positive control:** the FDR of the flagged
pairs at ``q``, under the null above.

**Evidence:** the games both lost, the mean difference of the cards kept against its
expectation, the two strengths, the week's ``τ²``; the player who kept more (the feeder)
and the one who kept fewer. Flags are ordered by ``p / w``, then by players.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Final

from integrity.domain.data import TableObs, partners_of
from integrity.domain.stats import log_normal_sf
from integrity.domain.together import shared_bh

__all__ = [
    "MIN_APART",
    "MIN_DECIDED",
    "VERSION",
    "CardLaw",
    "KeptFlag",
    "KeptResult",
    "detect_kept",
]

VERSION: Final = "kept-3"

#: The decided games a player needs for his strength to enter the card law or a test.
MIN_DECIDED: Final = 10

#: The games apart, lost beside a losing stranger, a player needs to enter ``τ²``.
MIN_APART: Final = 10

#: The median of the chi-square distribution with one degree of freedom.
_CHI2_MEDIAN: Final = statistics.NormalDist().inv_cdf(0.75) ** 2


@dataclass(frozen=True, slots=True)
class CardLaw:
    """How two losers who do not queue together split their cards: ``D`` has mean
    ``slope(s²) · Δt`` and variance ``variance``, fitted on ``losers`` pairs of losers."""

    beta: float
    dilution: float
    variance: float
    losers: int

    def slope(self, noise: float) -> float:
        """How many cards a unit of estimated strength is worth when the two strengths'
        squared errors sum to ``noise``."""
        return self.beta + self.dilution * noise


@dataclass(frozen=True, slots=True)
class KeptFlag:
    """A pair whose cards kept at their shared tables differ from what their strengths say:
    ``feeder`` kept more than ``partner``; ``games`` both lost, ``kept`` the mean of
    ``cards_feeder - cards_partner`` over them and ``expected`` its mean under the law;
    ``strengths`` in the order of ``players``; ``style`` the week's ``τ²`` the spread allowed
    for; ``shared`` the tables together and ``weight`` the weighted-BH weight; ``strength``
    is ``-log10 q``."""

    family: ClassVar[str] = "kept"
    near_conclusive: ClassVar[bool] = False

    players: tuple[str, str]
    feeder: str
    partner: str
    games: int
    kept: float
    expected: float
    strengths: tuple[float, float]
    style: float
    z: float
    shared: int
    weight: float
    p: float
    q: float
    strength: float


@dataclass(frozen=True, slots=True)
class KeptResult:
    """The discoveries, the family they were controlled over, the card law and the
    variance of the players' styles (``τ²``, cards²)."""

    flags: tuple[KeptFlag, ...]
    family_size: int
    law: CardLaw | None
    style: float = 0.0
    version: str = VERSION


#: Per player, per number of strangers: [wins, decided games].
_Record = dict[int, list[int]]


def strength(record: _Record) -> tuple[float, float]:
    """Luce's log strength and its standard error (module docstring) from a player's
    decided games, by number of strangers."""
    games = [(k, won, n) for k, (won, n) in record.items()] + [(1, 0.5, 1)]
    t = 0.0
    for _ in range(100):
        theta = math.exp(t)
        score = math.fsum(won - n * theta / (theta + k) for k, won, n in games)
        info = math.fsum(n * theta * k / (theta + k) ** 2 for k, won, n in games)
        step = score / info
        t += max(-1.0, min(1.0, step))
        if abs(step) < 1e-12:
            break
    theta = math.exp(t)
    info = math.fsum(n * theta * k / (theta + k) ** 2 for k, _, n in games)
    return t, 1.0 / math.sqrt(info)


def _records(
    tables: Sequence[TableObs], partners: dict[str, frozenset[str]], only: str | None = None
) -> dict[str, _Record]:
    """Every player's decided games against the strangers (module docstring); ``only``'s
    when given."""
    records: dict[str, _Record] = defaultdict(dict)
    for table in tables:
        winners = table.winners
        others = len(table.players) - 1
        for seat, player in enumerate(table.players):
            if only is not None and player != only:
                continue
            won = seat in winners
            known = partners.get(player)
            if known is None:  # everyone else a stranger: decided unless co-winners
                if won and len(winners) > 1:
                    continue
                cell = records[player].setdefault(others, [0, 0])
            else:
                strangers = [k for k, p in enumerate(table.players) if k != seat and p not in known]
                if not strangers:
                    continue
                if won == any(k in winners for k in strangers):
                    continue  # co-winners, or a partner won: not decided
                cell = records[player].setdefault(len(strangers), [0, 0])
            cell[0] += won
            cell[1] += 1
    return records


def _law(
    tables: Sequence[TableObs],
    partners: dict[str, frozenset[str]],
    strengths: dict[str, tuple[float, float]],
) -> CardLaw | None:
    """The card law (module docstring) from the pairs of losers who do not queue together."""
    pairs: list[tuple[float, float, int]] = []  # (Δt, s², D)
    for table in tables:
        if not table.cards:
            continue
        losers = [
            k for k, p in enumerate(table.players) if k not in table.winners and p in strengths
        ]
        for a, i in enumerate(losers):
            (ti, si) = strengths[table.players[i]]
            for j in losers[a + 1 :]:
                if table.players[j] not in partners.get(table.players[i], ()):
                    (tj, sj) = strengths[table.players[j]]
                    pairs.append((ti - tj, si * si + sj * sj, table.cards[i] - table.cards[j]))
    if len(pairs) < 3:
        return None
    # Least squares through 0 on x = Δt and y = Δt · s²: the normal equations.
    sxx = math.fsum(dt * dt for dt, _, _ in pairs)
    if not sxx:
        return None
    sxy = math.fsum(dt * dt * s2 for dt, s2, _ in pairs)
    syy = math.fsum((dt * s2) ** 2 for dt, s2, _ in pairs)
    sxd = math.fsum(dt * d for dt, _, d in pairs)
    syd = math.fsum(dt * s2 * d for dt, s2, d in pairs)
    det = sxx * syy - sxy * sxy
    if det > 1e-9 * sxx * syy:
        beta, dilution, fitted = (sxd * syy - sxy * syd) / det, (sxx * syd - sxy * sxd) / det, 2
    else:  # the strengths' errors all alike: one slope
        beta, dilution, fitted = sxd / sxx, 0.0, 1
    variance = math.fsum((d - (beta + dilution * s2) * dt) ** 2 for dt, s2, d in pairs) / (
        len(pairs) - fitted
    )
    if not variance > 0:
        return None  # the cards fit their strengths exactly: no hands stored, no law
    return CardLaw(beta, dilution, variance, len(pairs))


def _offset(
    player: str, own: Sequence[TableObs], strengths: dict[str, tuple[float, float]], law: CardLaw
) -> tuple[float, float] | None:
    """The player's mean residual ``r̄`` in his games apart ``own`` and its variance without a
    style, his strength read from those games alone (module docstring); None with fewer
    than ``MIN_DECIDED`` decided or ``MIN_APART`` residual games."""
    record = _records(own, {}, player).get(player, {})  # everyone else a stranger
    if sum(n for _, n in record.values()) < MIN_DECIDED:
        return None
    (ti, si) = strength(record)
    residuals: list[tuple[float, float]] = []  # (r, the slope)
    for table in own:
        seat = table.players.index(player)
        if seat in table.winners:
            continue
        terms = []
        for j, other in enumerate(table.players):
            if j != seat and j not in table.winners and other in strengths:
                (tj, sj) = strengths[other]
                slope = law.slope(si * si + sj * sj)
                terms.append((table.cards[seat] - table.cards[j] - slope * (ti - tj), slope))
        if terms:
            residuals.append(
                (
                    math.fsum(r for r, _ in terms) / len(terms),
                    math.fsum(b for _, b in terms) / len(terms),
                )
            )
    g = len(residuals)
    if g < MIN_APART:
        return None
    mean = math.fsum(r for r, _ in residuals) / g
    slope = math.fsum(b for _, b in residuals) / g
    noise = math.fsum((r - mean) ** 2 for r, _ in residuals) / (g - 1) / g
    return mean, noise + (slope * si) ** 2


def _style(
    tables: Sequence[TableObs],
    partners: dict[str, frozenset[str]],
    strengths: dict[str, tuple[float, float]],
    law: CardLaw,
) -> float:
    """``τ²`` (module docstring) from the tested pairs' players' games apart."""
    apart: dict[str, list[TableObs]] = defaultdict(list)
    for table in tables:
        for player in table.players:
            known = partners.get(player)
            if known and known.isdisjoint(table.players):
                apart[player].append(table)
    players = [
        offset
        for player, own in sorted(apart.items())
        if (offset := _offset(player, own, strengths, law)) is not None
    ]
    if not players:
        return 0.0

    centre = statistics.median(mean for mean, _ in players)
    squares = [((mean - centre) ** 2, noise) for mean, noise in players]

    def ratio(square: float, spread: float) -> float:
        """``(r̄ - c)² / (v + τ²)``; a player whose residuals do not vary is infinitely
        far from ``c`` unless he is at it."""
        return square / spread if spread > 0 else math.inf if square > 0 else 0.0

    def median_ratio(style: float) -> float:
        return statistics.median(ratio(square, noise + style) for square, noise in squares)

    if median_ratio(0.0) <= _CHI2_MEDIAN:
        return 0.0
    low, high = 0.0, max(square for square, _ in squares) / _CHI2_MEDIAN
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if median_ratio(middle) > _CHI2_MEDIAN else (low, middle)
    return (low + high) / 2


def detect_kept(
    tables: Iterable[TableObs],
    pairs: Iterable[tuple[str, str]],
    *,
    q: float = 0.01,
    min_shared: int = 5,
) -> KeptResult:
    """Test each pair (see the module docstring) and flag at weighted BH ``q``."""
    chosen = sorted({(min(a, b), max(a, b)) for a, b in pairs})
    partners = partners_of(chosen)
    read = [t for t in tables if t.cards and not partners.keys().isdisjoint(t.players)]
    strengths = {
        player: strength(record)
        for player, record in _records(read, partners).items()
        if sum(n for _, n in record.values()) >= MIN_DECIDED
    }
    law = _law(read, partners, strengths)
    if law is None:
        return KeptResult((), 0, None)
    style = _style(read, partners, strengths, law)
    together: dict[tuple[str, str], list[TableObs]] = defaultdict(list)
    for table in read:
        seated = set(table.players)
        for a in seated:
            for b in partners.get(a, ()):
                if a < b and b in seated:
                    together[(a, b)].append(table)
    tested: list[tuple[float, KeptFlag]] = []
    for a, b in chosen:
        shared = together[(a, b)]
        if len(shared) < min_shared or a not in strengths or b not in strengths:
            continue
        kept = []
        for table in shared:
            i, j = table.players.index(a), table.players.index(b)
            if i not in table.winners and j not in table.winners:
                kept.append(table.cards[i] - table.cards[j])
        n = len(kept)
        if n < min_shared:
            continue
        (ta, sa), (tb, sb) = strengths[a], strengths[b]
        noise = sa * sa + sb * sb
        slope = law.slope(noise)
        expected = slope * (ta - tb)
        spread = math.sqrt(n * law.variance + (n * slope) ** 2 * noise + 2 * n * (n - 1) * style)
        z = (math.fsum(kept) - n * expected) / spread
        log_p = min(0.0, math.log(2.0) + log_normal_sf(abs(z)))
        feeder, partner, sign = (a, b, 1.0) if z >= 0 else (b, a, -1.0)
        flag = KeptFlag(
            players=(a, b),
            feeder=feeder,
            partner=partner,
            games=n,
            kept=sign * math.fsum(kept) / n,
            expected=sign * expected,
            strengths=(ta, tb),
            style=style,
            z=abs(z),
            shared=len(shared),
            weight=1.0,
            p=math.exp(log_p),
            q=1.0,
            strength=0.0,
        )
        tested.append((log_p, flag))
    return KeptResult(tuple(shared_bh(tested, q)), len(tested), law, style)
