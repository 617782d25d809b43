"""Soft play (issue 28): integrity/domain/softplay.py on chances read from engine-played
logs by tournaments/domain/chances.py: to punish, to challenge a +4, to hand over a better
hand with a 7, each kind tested against itself and the kinds combined per pair."""

import math
import random
from collections import Counter
from typing import Any

import pytest

from integrity.domain.softplay import Chance, KindCounts, detect_softplay
from integrity.domain.stats import log_fisher_lower, log_fisher_sum_lower
from tournaments.domain.chances import chances_of
from tournaments.domain.engine import Bot, play_game
from tournaments.domain.rules import PRESETS, ruleset_from_spec

CLASSIC = PRESETS["classic"]


def test_the_fisher_lower_tail_is_exact() -> None:
    # 5 chances against the target drawn from 10, of which 5 were punishments; none punished
    assert math.exp(log_fisher_lower(0, 5, 5, 10)) == pytest.approx(1 / 252, rel=1e-12)
    # P(X <= 1) = (C(5,0)C(5,5) + C(5,1)C(5,4)) / C(10,5) = 26 / 252
    assert math.exp(log_fisher_lower(1, 5, 5, 10)) == pytest.approx(26 / 252, rel=1e-12)
    assert log_fisher_lower(5, 5, 5, 10) == 0.0
    # six chances from ten with only five spared: at least one was punished
    assert log_fisher_lower(0, 6, 5, 10) == -math.inf


def chances(actor: str, target: str, punished: int, of: int, kind: int = 0) -> list[Chance]:
    return [(actor, target, kind, i < punished) for i in range(of)]


def test_an_actor_sparing_one_target_is_flagged_and_an_even_one_is_not() -> None:
    found = detect_softplay(
        chances("a", "b", 0, 12)
        + chances("a", "c", 30, 40)
        + chances("d", "b", 9, 12)
        + chances("d", "c", 30, 40),
        q=0.01,
    )
    assert found.family_size == 4
    assert [(f.actor, f.target, f.chances, f.punished, f.punished_others) for f in found.flags] == [
        ("a", "b", 12, 0, 30)
    ]
    flag = found.flags[0]
    assert flag.p == pytest.approx(math.exp(log_fisher_lower(0, 12, 30, 52)), rel=1e-9)
    assert flag.kinds == (KindCounts("punish", 12, 0, 40, 30, flag.p),)
    assert flag.q <= 0.01


def test_each_kind_is_tested_against_itself_and_the_kinds_stratified() -> None:
    """a challenges b's +4s 0 of 6 times and everyone else's 6 of 20; a punishes b 3 of 6
    times and everyone else 15 of 30. Pooled, a's rates against b would mix the kinds; the
    test is the sum of b's punishments over the two tables, each with its margins."""
    found = detect_softplay(
        chances("a", "b", 0, 6, kind=1)
        + chances("a", "c", 6, 20, kind=1)
        + chances("a", "b", 3, 6)
        + chances("a", "c", 15, 30),
        q=1.0,
    )
    flag = next(f for f in found.flags if f.players == ("a", "b"))
    challenge = math.exp(log_fisher_lower(0, 6, 6, 26))
    punish = math.exp(log_fisher_lower(3, 6, 18, 36))
    assert [
        (k.kind, k.chances, k.punished, k.chances_others, k.punished_others) for k in flag.kinds
    ] == [
        ("punish", 6, 3, 30, 15),
        ("challenge", 6, 0, 20, 6),
    ]
    assert [k.p for k in flag.kinds] == pytest.approx([punish, challenge], rel=1e-12)
    assert flag.p == pytest.approx(math.exp(log_fisher_sum_lower([(3, 6, 18, 36), (0, 6, 6, 26)])))
    assert (flag.chances, flag.punished, flag.chances_others, flag.punished_others) == (
        12,
        3,
        50,
        21,
    )


def test_the_stratified_tail_sums_the_tables_exactly() -> None:
    """P(X + Y <= 1) for X ~ 2 draws of 4 with 2 successes, Y ~ 1 draw of 3 with 1 success,
    by enumeration: P(X=0) = 1/6, P(X=1) = 4/6; P(Y=0) = 2/3, P(Y=1) = 1/3."""
    expected = 1 / 6 * 2 / 3 + 1 / 6 * 1 / 3 + 4 / 6 * 2 / 3
    assert math.exp(log_fisher_sum_lower([(1, 2, 2, 4), (0, 1, 1, 3)])) == pytest.approx(
        expected, rel=1e-12
    )
    # one table: Fisher's own tail
    assert log_fisher_sum_lower([(1, 5, 5, 10)]) == pytest.approx(log_fisher_lower(1, 5, 5, 10))
    assert log_fisher_sum_lower([]) == 0.0
    with pytest.raises(ValueError, match="impossible"):
        log_fisher_sum_lower([(3, 2, 2, 4)])


def test_a_pair_is_tested_with_enough_chances_of_one_kind() -> None:
    # four chances to punish and four +4s: eight against b, but never five of one kind
    spread = chances("a", "b", 0, 4) + chances("a", "b", 0, 4, kind=1)
    others = chances("a", "c", 30, 40) + chances("a", "c", 8, 20, kind=1)
    assert detect_softplay(spread + others, min_chances=5).family_size == 1  # a -> c only
    assert detect_softplay(spread + others, min_chances=4).family_size == 2


def test_pairs_who_queue_together_hold_nine_tenths_of_the_weight() -> None:
    """a punishes b 1 of 8 times and c 30 of 40 times: p = 0.0017, not flagged unweighted
    at q = 0.01 in a family of 20 (q = 0.033). With a and b queueing together, their two
    ordered pairs weigh 0.9 * 20 / 2 = 9 and the 18 others 0.1 * 20 / 18 each: a -> b is
    kept at q = 20 p / 9 = 0.0037."""
    rows = chances("a", "b", 1, 8) + chances("a", "c", 30, 40)
    rows += chances("b", "a", 8, 8) + chances("b", "c", 30, 40)
    for k in range(8):
        rows += chances(f"x{k}", "y", 6, 8) + chances(f"x{k}", "z", 30, 40)
    p = math.exp(log_fisher_lower(1, 8, 31, 48))
    plain = detect_softplay(rows, q=0.01)
    assert (plain.family_size, plain.flags) == (20, ())
    found = detect_softplay(rows, q=0.01, queued=[("b", "a")])
    assert found.family_size == 20
    (flag,) = found.flags
    assert (flag.actor, flag.target, flag.queued) == ("a", "b", True)
    assert flag.weight == pytest.approx(9.0)
    assert flag.p == pytest.approx(p, rel=1e-9)
    assert flag.q == pytest.approx(20 * p / 9.0, rel=1e-9)
    # with every pair queued the weights are all 1 again
    everyone = [(f"x{k}", t) for k in range(8) for t in ("y", "z")]
    everyone += [("a", "b"), ("a", "c"), ("b", "c")]
    assert detect_softplay(rows, q=0.01, queued=everyone).flags == ()


def test_pairs_with_too_few_chances_are_not_tested() -> None:
    found = detect_softplay(chances("a", "b", 0, 4) + chances("a", "c", 40, 40), min_chances=5)
    assert (found.family_size, found.flags) == (1, ())


def logged_week(
    soft: bool, games: int, seed: int, rules: Any = CLASSIC
) -> tuple[list[Chance], Counter[str]]:
    """Engine games among 16 players; with ``soft``, p00 spares p01 and p01 spares p00.
    The pair sits together in about a third of p00's games."""
    rng = random.Random(seed)
    names = [f"p{i:02d}" for i in range(16)]
    found: list[Chance] = []
    tables: Counter[str] = Counter()
    for _ in range(games):
        table = rng.sample(names[2:], 2)
        if rng.random() < 0.35:
            table += ["p00", "p01"]
        else:
            table += rng.sample([n for n in names if n not in table], 2)
        rng.shuffle(table)
        pair = {table.index(n) for n in ("p00", "p01") if n in table}
        bots = [
            Bot(soft_on=frozenset(pair - {k})) if soft and k in pair and len(pair) == 2 else Bot()
            for k in range(4)
        ]
        game = play_game(rules, random.Random(rng.getrandbits(64)), bots=bots)
        record = {
            "seats": [
                {"player": {"id": n}, "hand": h} for n, h in zip(table, game.hands, strict=True)
            ],
            "ended_by": game.ended_by,
            "log": game.log,
        }
        found.extend(chances_of(record, rules))
        tables.update(table)
    return found, tables


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_simulated_colluders_who_soft_play_are_found_and_honest_players_are_not(
    seed: int,
) -> None:
    honest, _ = logged_week(soft=False, games=1500, seed=seed)
    assert detect_softplay(honest, q=0.01).flags == ()
    colluding, _ = logged_week(soft=True, games=1500, seed=seed)
    flags = detect_softplay(colluding, q=0.01).flags
    assert {(f.actor, f.target) for f in flags} == {("p00", "p01"), ("p01", "p00")}
    assert all(f.q <= 0.01 and f.punished == 0 for f in flags)


def test_colluders_spare_each_other_on_every_kind_of_chance() -> None:
    """With 7s that swap, a colluding bot also hands its partner the better hand and never
    challenges the partner's +4: every kind against the partner is spared."""
    sevens = ruleset_from_spec({"preset": "classic", "switches": {"seven_zero": True}})
    honest, _ = logged_week(soft=False, games=1500, seed=4, rules=sevens)
    assert detect_softplay(honest, q=0.01).flags == ()
    colluding, _ = logged_week(soft=True, games=1500, seed=4, rules=sevens)
    flags = detect_softplay(colluding, q=0.01).flags
    assert {(f.actor, f.target) for f in flags} == {("p00", "p01"), ("p01", "p00")}
    for flag in flags:
        assert {kind.kind for kind in flag.kinds} == {"punish", "challenge", "swap"}
        assert all(kind.punished == 0 for kind in flag.kinds)
        swap = next(kind for kind in flag.kinds if kind.kind == "swap")
        assert swap.chances > 0
        assert swap.punished_others > 0
