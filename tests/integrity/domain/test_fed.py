"""The fed account (issue 28): integrity/domain/fed.py."""

import math
import random
from collections import Counter
from fractions import Fraction
from itertools import combinations

import pytest

from integrity.domain.data import TableObs
from integrity.domain.fed import STYLE_MARGIN, _add, _Samples, detect_fed

from .sim import FRIENDS, thurstone_week


def table(game: str, players: tuple[str, ...], hands: tuple[int, ...]) -> TableObs:
    """A game won by the seat with the lightest hand (0 when out)."""
    winner = hands.index(min(hands))
    scores = tuple(0 if k == winner else -h for k, h in enumerate(hands))
    return TableObs(game, 0, players, hands, scores, (winner,))


FARM = ("b", "f1", "f2", "f3")
#: Every pair of the farm queues together (what co-seating finds).
QUEUED = list(combinations(FARM, 2))


def test_each_game_of_the_account_falls_in_one_sample() -> None:
    samples = _Samples()
    group = frozenset({"f1", "f2"})
    games = [
        table("won-with-group", ("b", "f1", "f2", "s"), (0, 30, 50, 10)),
        table("won-with-one", ("b", "f1", "s", "t"), (0, 60, 20, 5)),
        table("won-apart", ("b", "s", "t"), (0, 9, 12)),
        table("f1-won", ("b", "f1", "f2", "s"), (40, 0, 7, 8)),
        table("s-won", ("b", "f2", "s"), (40, 11, 0)),
        table("s-won-apart", ("b", "s", "t"), (40, 0, 3)),
    ]
    for game in games:
        _add(samples, game, 0, group)
    assert samples.group_in_wins == [Fraction(40), Fraction(60)]
    assert samples.losers_in_wins == [Fraction(30), Fraction(85, 3)]
    # f1 won: f2 is the group's only losing member; s won: f2 again
    assert samples.group_in_other_wins == [Fraction(7), Fraction(11)]
    assert samples.losers_apart == [Fraction(21, 2)]


def test_a_member_among_the_winners_is_no_win_of_the_account() -> None:
    samples = _Samples()
    tie = TableObs("tie", 0, ("b", "f1", "s"), (0, 0, 30), (0, 0, -30), (0, 1))
    _add(samples, tie, 0, frozenset({"f1"}))
    assert samples == _Samples()


def _farm_week(feed: int) -> list[TableObs]:
    """The fed account wins 8 games, each feeder 4; feeders hold 40-47 points when a feeder
    wins and 40-47 + ``feed`` when ``b`` wins; ``b`` also wins 2 games apart."""
    games = []
    for k in range(8):
        games.append(table(f"b{k}", FARM, (0, 40 + feed + k, 41 + feed + k, 42 + feed + k)))
    for j in range(3):
        for k in range(4):
            hands = [45 + k, 40 + k, 41 + k, 42 + k]
            hands[1 + j] = 0
            games.append(table(f"f{j}{k}", FARM, tuple(hands)))
    games += [table(f"apart{k}", ("b", "s", "t", "u"), (0, 20, 30, 40)) for k in range(2)]
    return games


def test_a_closed_farm_is_flagged_with_the_exact_rank_sum() -> None:
    result = detect_fed(_farm_week(feed=60), QUEUED)
    # b (8 wins) and each feeder (4 wins: too few) could be tested: b only
    assert result.family_size == 1
    (flag,) = result.flags
    n, m = 8, 12  # b's 8 wins against the 12 games a feeder won
    assert (flag.account, flag.group, flag.players) == ("b", ("f1", "f2", "f3"), FARM)
    assert (flag.wins, flag.other_wins, flag.apart_wins) == (n, m, 2)
    assert flag.rank_sum == n * (2 * (n + m) - n + 1) // 2  # every win above every other
    assert flag.expected == n * (n + m + 1) / 2
    assert flag.margin == STYLE_MARGIN
    assert flag.p == pytest.approx(1 / math.comb(n + m, n), rel=1e-12)
    assert flag.q == pytest.approx(flag.p, rel=1e-12)  # a family of one
    assert flag.strength == pytest.approx(-math.log10(flag.p), rel=1e-12)
    assert flag.group_in_wins == pytest.approx(sum(101 + k for k in range(8)) / 8)
    assert flag.losers_in_wins == flag.group_in_wins  # nobody else at the farm's tables
    assert flag.losers_apart == 30.0


def test_hands_within_the_style_margin_are_not_feeding() -> None:
    # b's wins leave the group exactly the margin heavier than the feeders' wins: the ranks
    # of the shifted hands tie or fall below, and ties count against b
    within = detect_fed(_farm_week(feed=STYLE_MARGIN - 4), QUEUED)
    assert (within.family_size, within.flags) == (1, ())
    beyond = detect_fed(_farm_week(feed=STYLE_MARGIN + 5), QUEUED)
    assert [flag.account for flag in beyond.flags] == ["b"]


def test_the_family_needs_enough_wins_and_games_to_compare() -> None:
    games = _farm_week(feed=60)
    four_wins = [g for g in games if g.game_id not in {"b4", "b5", "b6", "b7"}]
    assert detect_fed(four_wins, QUEUED).family_size == 0
    # 8 wins against 1 game of the others: C(9, 8) = 9 < 1 / q, the test could never flag
    one_other = [g for g in games if not g.game_id.startswith("f") or g.game_id == "f00"]
    assert detect_fed(one_other, QUEUED).family_size == 0
    assert detect_fed(one_other, QUEUED, q=0.2).family_size == 1
    assert detect_fed(games, []).family_size == 0  # nobody queues with anybody


def test_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="0 < q < 1"):
        detect_fed([], QUEUED, q=1.0)
    with pytest.raises(ValueError, match="min_shared_wins"):
        detect_fed([], QUEUED, min_shared_wins=0)


def test_honest_groups_are_not_flagged_and_a_feeding_one_is() -> None:
    """Forty groups of four who queue together, hands drawn whoever wins; one group's
    feeders add 40-250 points when its first account wins. BH over the tested accounts."""
    rng = random.Random(28)
    queued, games = [], []
    for g in range(40):
        members = tuple(f"g{g}-{k}" for k in range(4))
        queued += list(combinations(members, 2))
        for n in range(40):
            winner = rng.randrange(4)
            hands = [0 if k == winner else rng.randint(10, 150) for k in range(4)]
            if g == 0 and winner == 0:
                hands = [0, *(h + 20 * rng.randint(2, 5) for h in hands[1:])]
            games.append(
                TableObs(f"{g}-{n}", 0, members, tuple(hands), tuple(-h for h in hands), (winner,))
            )
    wins = Counter(game.players[game.winners[0]] for game in games)
    result = detect_fed(games, queued)
    # every account with 5 wins or more (its others' wins are always enough to compare)
    assert result.family_size == sum(1 for n in wins.values() if n >= 5) == 156
    assert [flag.account for flag in result.flags] == ["g0-0"]
    assert result.flags[0].p < result.flags[0].q <= 0.01


def test_honest_friends_raise_no_flag_where_luces_axiom_fails() -> None:
    """Thurstone's winner model (:func:`~tests.integrity.domain.sim.thurstone_week`): a
    strong player's friends hold no heavier hands in his wins than strangers do."""
    found = [detect_fed(thurstone_week(seed), FRIENDS) for seed in (1, 2, 3)]
    sizes_and_flags = [(result.family_size, len(result.flags)) for result in found]
    assert sizes_and_flags == [(82, 0), (72, 0), (83, 0)]
