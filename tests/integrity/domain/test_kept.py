"""Cards kept (issue 28): integrity/domain/kept.py."""

import math
import random
import statistics
from unittest import mock

import pytest

from integrity.domain import kept
from integrity.domain.data import TableObs
from integrity.domain.kept import (
    MIN_APART,
    MIN_DECIDED,
    CardLaw,
    _law,
    _records,
    _style,
    detect_kept,
    strength,
)


def test_the_records_count_decided_games_against_strangers() -> None:
    def table(game: str, players: tuple[str, ...], scores: tuple[int, ...]) -> TableObs:
        best = max(scores)
        winners = tuple(k for k, score in enumerate(scores) if score == best)
        return TableObs(game, 0, players, (0,) * len(players), scores, winners)

    tables = [
        table("g1", ("a", "b", "x", "y"), (30, -10, -10, -10)),  # b: his partner won
        table("g2", ("x", "y", "z"), (5, 5, -10)),  # x and y co-winners
        table("g3", ("a", "x"), (-5, 5)),
        table("g4", ("a", "b"), (5, -5)),  # no stranger
    ]
    partners = {"a": frozenset({"b"}), "b": frozenset({"a"})}

    assert _records(tables, partners) == {
        "a": {2: [1, 1], 1: [0, 1]},
        "x": {3: [0, 1], 1: [1, 1]},
        "y": {3: [0, 1]},
        "z": {2: [0, 1]},
    }
    assert _records(tables, partners, "x") == {"x": {3: [0, 1], 1: [1, 1]}}
    assert _records(tables, {}, "b") == {"b": {3: [0, 1], 1: [0, 1]}}


def test_the_strength_solves_luces_likelihood() -> None:
    # 3 wins in 6 games against one stranger, with half a win and half a loss: theta = 1.
    t, se = strength({1: [3, 6]})
    assert t == pytest.approx(0.0, abs=1e-12)
    assert se == pytest.approx(1 / math.sqrt(7 / 4), rel=1e-12)

    record = {3: [2, 8], 1: [1, 2]}
    t, se = strength(record)
    theta = math.exp(t)
    expected_wins = 8 * theta / (theta + 3) + 2 * theta / (theta + 1) + theta / (theta + 1)
    assert expected_wins == pytest.approx(2 + 1 + 0.5, rel=1e-12)
    info = 8 * 3 * theta / (theta + 3) ** 2 + 3 * theta / (theta + 1) ** 2
    assert se == pytest.approx(1 / math.sqrt(info), rel=1e-12)

    always, _ = strength({3: [20, 20]})  # finite for a player who always wins
    assert 3 < always < 10


def test_the_card_law_is_fitted_on_losers_who_do_not_queue_together() -> None:
    strengths = {"a": (1.0, 0.1), "b": (0.0, 0.1), "c": (-1.0, 0.1), "d": (0.5, 0.1)}
    partners = {"a": frozenset({"d"}), "d": frozenset({"a"})}
    tables = [
        # d won: (a, b) dt 1, D -2; (a, c) dt 2, D -4; (b, c) dt 1, D -2
        TableObs(
            "g1", 0, ("a", "b", "c", "d"), (5, 15, 25, 0), (45, -15, -25, 0), (3,), (1, 3, 5, 0)
        ),
        # a won: (b, c) dt 1, D 0; d and b: dt 0.5, D 3; d and c: dt 1.5, D 3
        TableObs(
            "g2", 0, ("a", "b", "c", "d"), (0, 8, 8, 11), (27, -8, -8, -11), (0,), (0, 4, 4, 7)
        ),
        # a and d queue together: (a, d) is no pair of the law; (b, x): x has no strength
        TableObs("g3", 0, ("a", "d", "b", "x"), (9, 6, 0, 3), (-9, -6, 18, -3), (2,), (3, 2, 0, 1)),
        TableObs("g4", 0, ("a", "b"), (0, 9), (9, -9), (0,)),  # no cards read: not in the law
    ]
    pairs = [(1.0, -2), (2.0, -4), (1.0, -2), (1.0, 0), (0.5, 3), (1.5, 3)]
    beta = sum(dt * d for dt, d in pairs) / sum(dt * dt for dt, _ in pairs)
    variance = sum((d - beta * dt) ** 2 for dt, d in pairs) / (len(pairs) - 1)

    law = _law(tables, partners, strengths)

    assert law is not None
    assert law.losers == 6
    assert law.beta == pytest.approx(beta, rel=1e-12)
    assert law.variance == pytest.approx(variance, rel=1e-12)


def test_the_slope_flattens_with_the_strengths_noise() -> None:
    # Four players whose strengths are read with different errors: the law's residuals are
    # orthogonal to both of its regressors, Δt and Δt · s².
    strengths = {"a": (1.0, 0.2), "b": (0.0, 0.5), "c": (-1.0, 0.3), "d": (0.4, 0.6)}
    tables = [
        TableObs(
            "g1", 0, ("a", "b", "c", "d"), (5, 15, 25, 0), (45, -15, -25, 0), (3,), (1, 3, 5, 0)
        ),
        TableObs(
            "g2", 0, ("a", "b", "c", "d"), (0, 8, 8, 11), (27, -8, -8, -11), (0,), (0, 4, 4, 7)
        ),
        TableObs("g3", 0, ("a", "b", "c", "d"), (9, 0, 6, 3), (-9, 18, -6, -3), (1,), (3, 0, 2, 1)),
        TableObs("g4", 0, ("a", "b", "c", "d"), (9, 7, 0, 2), (-9, -7, 18, -2), (2,), (6, 3, 0, 1)),
    ]
    pairs = []
    for table in tables:
        losers = [k for k in range(4) if k not in table.winners]
        for a, i in enumerate(losers):
            for j in losers[a + 1 :]:
                (ti, si), (tj, sj) = strengths[table.players[i]], strengths[table.players[j]]
                pairs.append((ti - tj, si * si + sj * sj, table.cards[i] - table.cards[j]))

    law = _law(tables, {}, strengths)

    assert law is not None
    assert law.losers == len(pairs) == 12
    residuals = [(d - law.slope(s2) * dt, dt, s2) for dt, s2, d in pairs]
    assert math.fsum(r * dt for r, dt, _ in residuals) == pytest.approx(0.0, abs=1e-9)
    assert math.fsum(r * dt * s2 for r, dt, s2 in residuals) == pytest.approx(0.0, abs=1e-9)
    assert law.dilution != 0.0
    assert law.variance == pytest.approx(math.fsum(r * r for r, _, _ in residuals) / 10)


#: a, c and e queue with b, d and f.
COUPLES = {
    **{p: frozenset({q}) for p, q in (("a", "b"), ("c", "d"), ("e", "f"))},
    **{q: frozenset({p}) for p, q in (("a", "b"), ("c", "d"), ("e", "f"))},
}


def apart(player: str, diffs: tuple[int, int]) -> list[TableObs]:
    """``MIN_APART`` games ``player`` loses beside the stranger s, u winning: he keeps
    ``diffs`` more cards than s in turn."""
    return [
        TableObs(
            f"{player}{g}",
            0,
            (player, "s", "u"),
            (0, 0, 0),
            (0, 0, 0),
            (2,),
            (10 + diffs[g % 2], 10, 0),
        )
        for g in range(MIN_APART)
    ]


def test_the_style_is_read_from_the_games_apart() -> None:
    # a, c and e (partners b, d and f) lose 10 games apart each, u winning: their strength
    # from those games alone is t0, the stranger s's too, so a residual is the difference
    # of the cards. Over them a keeps 12 and 4 cards more than s in turn (r̄ 8, var(r)
    # 160/9), c 4 more and 4 fewer (r̄ 0), e 0 and 8 fewer (r̄ -4).
    t0, se0 = strength({2: [0, MIN_APART]})
    law = CardLaw(beta=-1.0, dilution=0.0, variance=9.0, losers=100)
    strengths = {"s": (t0, 0.5), "a": (3.0, 0.1), "c": (3.0, 0.1), "e": (3.0, 0.1)}
    partners = COUPLES
    a, c, e = apart("a", (12, 4)), apart("c", (4, -4)), apart("e", (0, -8))
    ignored = [
        # with the partner at the table: feeding may move cards there
        TableObs("ab", 0, ("a", "b", "s", "u"), (0,) * 4, (0,) * 4, (3,), (12, 1, 1, 0)),
        # no other loser with a strength
        TableObs("ax", 0, ("a", "x", "u"), (0, 0, 0), (0, 0, 0), (2,), (9, 1, 0)),
    ]
    # the variance of each r̄ without a style: its sampling variance and the strength's error
    v = (160 / 9) / MIN_APART + (law.slope(se0 * se0 + 0.25) * se0) ** 2
    median = statistics.NormalDist().inv_cdf(0.75) ** 2  # of chi-square, 1 degree

    three = _style([*a, *c, *e, *ignored], partners, strengths, law)
    two = _style([*a[1:], *c, *e], partners, strengths, law)  # a: too few games apart
    one = _style(c, partners, strengths, law)

    # around the median r̄ (c's 0), the median player is e: 16 / (v + τ²) is chi-square's
    # median (not the mean: a counts as one player however far he lies)
    assert three == pytest.approx(16 / median - v, rel=1e-9)
    # c and e around their median, -2: each 4 / (v + τ²)
    assert two == pytest.approx(4 / median - v, rel=1e-9)
    assert one == 0.0  # c keeps cards as his strength says: r̄² / v = 0, held to 0


def _week(
    seed: int, *, quiet: bool, style: float = 0.0
) -> tuple[list[TableObs], list[tuple[str, str]], int]:
    """A seeded week of 4-seat tables: Luce's winner at each player's skill, a loser's cards
    by skill (and his own offset of SD ``style``); the pairs who queue together (p000 with
    p001, feeder p001, sit together in a quarter of the games; five honest pairs in a tenth
    each). ``quiet``: when p000 does not win, p001 (losing too) takes half of his cards.
    With the games p000 and p001 both lost."""
    rng = random.Random(seed)
    names = [f"p{i:03d}" for i in range(120)]
    skill = {name: rng.gauss(0.0, 1.0) for name in names}
    offset = {name: random.Random(f"style:{seed}:{name}").gauss(0.0, style) for name in names}
    pairs = [("p000", "p001")] + [(names[2 * k + 2], names[2 * k + 3]) for k in range(5)]
    tables: list[TableObs] = []
    both_lost = 0
    for g in range(1600):
        share = 0.25 if g % 4 == 0 else 0.1
        pair = pairs[0] if g % 4 == 0 else pairs[1 + g % 5]
        seated = list(pair) if rng.random() < share * 4 else []
        while len(seated) < 4:
            name = rng.choice(names)
            if name not in seated:
                seated.append(name)
        rng.shuffle(seated)
        weights = [math.exp(skill[name]) for name in seated]
        winner = rng.choices(range(4), weights)[0]
        cards = [
            0
            if k == winner
            else min(12, max(1, round(rng.gauss(6.5 + offset[name] - 1.5 * skill[name], 3.0))))
            for k, name in enumerate(seated)
        ]
        if "p000" in seated and "p001" in seated:
            fed, feeder = seated.index("p000"), seated.index("p001")
            if winner not in (fed, feeder):
                both_lost += 1
                if quiet:
                    half = cards[fed] // 2
                    cards[fed] -= half
                    cards[feeder] += half
        hands = tuple(5 * c for c in cards)
        scores = tuple(sum(hands) if k == winner else -h for k, h in enumerate(hands))
        tables.append(TableObs(f"g{g}", 0, tuple(seated), hands, scores, (winner,), tuple(cards)))
    return tables, pairs, both_lost


def test_a_feeder_who_takes_the_partners_cards_is_found() -> None:
    tables, pairs, both_lost = _week(5, quiet=True)

    result = detect_kept(tables, pairs, q=0.01, min_shared=5)

    assert result.family_size == 6
    assert [flag.players for flag in result.flags] == [("p000", "p001")]
    flag = result.flags[0]
    assert (flag.feeder, flag.partner) == ("p001", "p000")
    assert flag.games == both_lost
    assert flag.kept > flag.expected + 3
    assert flag.q <= 0.01
    assert flag.strength == pytest.approx(-math.log10(flag.q))


def test_honest_friends_keep_cards_as_strangers_do() -> None:
    tables, pairs, _ = _week(5, quiet=False)

    result = detect_kept(tables, pairs, q=0.01, min_shared=5)

    assert result.family_size == 6
    assert result.flags == ()
    assert result.law is not None
    # a stronger loser keeps fewer cards: 1.5 a unit of skill, less the cards' floor and
    # ceiling; the noisier the two strengths, the flatter the slope
    assert -1.6 < result.law.beta < -1.2
    assert result.law.dilution > 0
    assert result.law.slope(0.4) == pytest.approx(result.law.beta + 0.4 * result.law.dilution)


def test_friends_with_styles_of_their_own_are_not_flagged() -> None:
    # Every player ends his lost games with an offset of SD 1.5 cards of his own: the
    # honest pairs' cards differ by more than their strengths say, game after game.
    tables, pairs, _ = _week(1, quiet=False, style=1.5)

    result = detect_kept(tables, pairs, q=0.01, min_shared=5)

    assert result.family_size == 6
    assert result.flags == ()
    assert 0.5 < result.style < 4.5  # τ² read from twelve players' games apart (2.25 drawn)
    with mock.patch.object(kept, "_style", return_value=0.0):
        unstyled = detect_kept(tables, pairs, q=0.01, min_shared=5)
    assert len(unstyled.flags) == 4  # without τ², four of the six pairs


def test_without_the_cards_nothing_is_tested() -> None:
    tables, pairs, _ = _week(5, quiet=True)
    bare = [TableObs(t.game_id, t.hour, t.players, t.hands, t.scores, t.winners) for t in tables]

    result = detect_kept(bare, pairs)

    assert (result.flags, result.family_size, result.law) == ((), 0, None)


def test_cards_that_never_differ_test_nothing() -> None:
    """Games stored without hands count no cards: every loser holds 0, the law has no
    spread, and no pair is tested (rather than divided by a zero variance)."""
    tables, pairs, _ = _week(5, quiet=True)
    empty = [t._replace(cards=(0,) * len(t.players)) for t in tables]

    result = detect_kept(empty, pairs)

    assert (result.flags, result.family_size, result.law) == ((), 0, None)


def test_a_player_whose_residuals_do_not_vary_is_read_as_far_from_the_median() -> None:
    """A player who keeps exactly as many cards as the stranger in every game apart has a
    mean residual without sampling variance: at τ² = 0 his ratio is infinite unless his
    residual is the median's (here c's 0 is), and the style is still read (e: r̄ -4)."""
    law = CardLaw(beta=0.0, dilution=0.0, variance=9.0, losers=100)
    t0, _ = strength({2: [0, MIN_APART]})
    strengths = {"s": (t0, 0.0), "a": (3.0, 0.1), "c": (3.0, 0.1), "e": (3.0, 0.1)}
    partners = COUPLES
    tables = [*apart("a", (5, 5)), *apart("c", (0, 0)), *apart("e", (-4, -4))]
    # every r̄ exact (v = 0, the slope 0): at τ² = 0 the ratios are 25 / 0, 0 / 0 and
    # 16 / 0, read as inf, 0 and inf; above it, the median is e's 16 / τ²
    median = statistics.NormalDist().inv_cdf(0.75) ** 2
    assert _style(tables, partners, strengths, law) == pytest.approx(16 / median, rel=1e-9)


def test_a_player_with_few_decided_games_is_not_tested() -> None:
    tables, pairs, _ = _week(5, quiet=True)
    # p000's first games only: fewer decided games than MIN_DECIDED
    kept, seen = [], 0
    for table in tables:
        if "p000" in table.players:
            seen += 1
            if seen > MIN_DECIDED - 1:
                continue
        kept.append(table)

    result = detect_kept(kept, pairs)

    assert result.family_size == 5
    assert all("p000" not in flag.players for flag in result.flags)


def test_cards_need_one_entry_per_seat() -> None:
    with pytest.raises(ValueError, match="g1: cards need one entry per seat"):
        TableObs("g1", 0, ("a", "b"), (0, 9), (9, -9), (0,), (0,))
