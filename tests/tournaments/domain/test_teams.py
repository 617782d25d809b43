"""Team events (SPEC §4 "Team events"): teammates never in adjacent seats, the rotating
partners schedule and the team scoring of its games (tournaments/domain/teams.py)."""

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tournaments.domain.teams import (
    OPPOSITE_TEAMS,
    adjacent_teammates,
    individual_totals,
    opponent_pairs,
    partner_pairs,
    partners_game_scores,
    rotating_partners,
)


@pytest.mark.parametrize(
    ("teams", "expected"),
    [
        ((0, 1, 0, 1), None),
        ((1, 0, 1, 0), None),
        ((0, 0, 1, 1), (0, 1)),
        ((0, 1, 1, 0), (1, 2)),
        ((1, 0, 0, 1), (1, 2)),
        ((0, 1, 0, 1, 0, 1), None),
        ((0, 1, 0, 1, 1, 0), (3, 4)),
        ((0, 1, 0, 0, 1, 1), (2, 3)),
    ],
)
def test_the_first_pair_of_neighbours_of_one_team(
    teams: tuple[int, ...], expected: tuple[int, int] | None
) -> None:
    assert adjacent_teammates(teams) == expected


def test_the_seat_order_is_circular() -> None:
    # The last seat sits next to the first.
    assert adjacent_teammates((0, 1, 0, 1, 0)) == (4, 0)
    assert adjacent_teammates((1, 0, 1)) == (2, 0)


def test_two_seats_of_two_teams_are_apart() -> None:
    assert adjacent_teammates((0, 1)) is None
    assert adjacent_teammates((1, 1)) == (0, 1)


@given(st.lists(st.sampled_from((0, 1)), min_size=2, max_size=10))
def test_no_pair_found_means_the_teams_alternate(teams: list[int]) -> None:
    pair = adjacent_teammates(teams)
    n = len(teams)
    neighbours = [(i, (i + 1) % n) for i in range(n)]
    if pair is None:
        assert all(teams[a] != teams[b] for a, b in neighbours)
    else:
        a, b = pair
        assert b == (a + 1) % n
        assert teams[a] == teams[b]
        assert all(teams[x] != teams[y] for x, y in neighbours[:a])


# --- rotating partners (SPEC §4 "Team events") --------------------------------------------


def test_four_players_play_three_partnerships_of_four_games() -> None:
    schedule = rotating_partners(["d", "b", "a", "c"])

    # Sorted a, b, c, d; d stays put, a, b, c circle: a+d v b+c, b+d v c+a, c+d v a+b.
    assert schedule.order == ("a", "b", "c", "d")
    assert schedule.rounds == (
        (("a", "b", "d", "c"),),
        (("b", "c", "d", "a"),),
        (("c", "a", "d", "b"),),
    )
    assert (schedule.games_per_round, schedule.games_per_player) == (4, 12)


def test_eight_players_play_seven_rounds_at_two_tables() -> None:
    schedule = rotating_partners([f"p{i}" for i in range(8)])

    assert len(schedule.rounds) == 7
    assert all(len(tables) == 2 for tables in schedule.rounds)
    assert schedule.games_per_player == 28
    assert schedule.rounds[0] == (("p0", "p1", "p7", "p6"), ("p2", "p3", "p5", "p4"))
    assert set(partner_pairs(schedule).values()) == {1}
    assert len(partner_pairs(schedule)) == 28
    assert sum(opponent_pairs(schedule).values()) == 7 * 2 * 4


def test_the_order_is_the_sorted_ids_shuffled_by_the_seed() -> None:
    players = [f"p{i:02d}" for i in range(12)]
    seeded = rotating_partners(players, seed=42)
    assert rotating_partners(list(reversed(players)), seed=42) == seeded
    assert seeded.order == tuple(random_order(players, 42))
    assert rotating_partners(players, seed=43).order != seeded.order
    assert rotating_partners(players).order == tuple(players)
    assert rotating_partners(players, seed=42, games_per_round=2).games_per_player == 22


def random_order(players: list[str], seed: int) -> list[str]:
    order = sorted(players)
    random.Random(f"{seed}:partners").shuffle(order)
    return order


@pytest.mark.parametrize(
    ("players", "message"),
    [
        (["a", "b", "c", "d", "e", "f"], "a multiple of 4 players .*, got 6"),
        (["a", "b"], "a multiple of 4 players .*, got 2"),
        ([], "a multiple of 4 players .*, got 0"),
        (["a", "b", "c", "a"], "player 'a' is in the field twice"),
    ],
)
def test_a_field_that_is_not_a_multiple_of_four_is_refused(
    players: list[str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        rotating_partners(players)


@pytest.mark.parametrize("games", [0, -1, True])
def test_games_per_round_must_be_positive(games: int) -> None:
    with pytest.raises(ValueError, match="games per round must be an int >= 1"):
        rotating_partners(["a", "b", "c", "d"], games_per_round=games)


@given(
    st.sampled_from([4, 8, 12, 16]),
    st.one_of(st.none(), st.integers(min_value=0, max_value=2**62)),
    st.randoms(use_true_random=False),
)
def test_every_pair_partners_once_teammates_opposite_everyone_every_round(
    n: int, seed: int | None, rng: Any
) -> None:
    players = [f"x{rng.randrange(10**9):09d}-{i}" for i in range(n)]
    rng.shuffle(players)
    schedule = rotating_partners(players, seed=seed)

    assert len(schedule.rounds) == n - 1
    partners: Counter[frozenset[str]] = Counter()
    for tables in schedule.rounds:
        assert len(tables) == n // 4
        seated = [player for table in tables for player in table]
        assert sorted(seated) == sorted(players)  # each player plays every round, once
        for table in tables:
            assert len(set(table)) == 4
            partners[frozenset((table[0], table[2]))] += 1  # teammates opposite: 0 and 2
            partners[frozenset((table[1], table[3]))] += 1  # 1 and 3
    assert len(partners) == n * (n - 1) // 2
    assert set(partners.values()) == {1}
    assert adjacent_teammates(OPPOSITE_TEAMS) is None  # the teams of seats 0-3: 0, 1, 0, 1
    assert schedule == rotating_partners(sorted(players), seed=seed)


# --- team scoring -----------------------------------------------------------------------


def test_a_partners_game_is_scored_by_tour_doubles_teammates_opposite() -> None:
    # Seat 1 went out: seats 1 and 3 win seats 0 and 2's 25 + 50; seat 3's own hand is ignored.
    assert partners_game_scores([25, 0, 50, 40]) == [-75, 75, -75, 75]
    with pytest.raises(ValueError, match="a partners game has 4 seats, got 3"):
        partners_game_scores([0, 1, 2])


def test_individual_totals_over_a_four_player_event() -> None:
    schedule = rotating_partners(["a", "b", "c", "d"], games_per_round=2)
    games = [
        [[[0, 10, 5, 20], [7, 0, 3, 3]]],  # a b d c: a+d win 30, then b+c win 10
        [[[0, 1, 2, 3], [1, 1, 1, 0]]],  # b c d a: b+d win 4, then a (seat 3) out: c+a win 2
        [[[40, 0, 0, 9], [0, 5, 5, 5]]],  # c a d b: a and d tie lowest, a+b (9) beat c+d (40)
    ]
    totals = individual_totals(schedule, games)
    assert totals == {
        "a": 30 - 10 - 4 + 2 + 40 - 10,
        "b": -30 + 10 + 4 - 2 + 40 - 10,
        "c": -30 + 10 - 4 + 2 - 40 + 10,
        "d": 30 - 10 + 4 - 2 - 40 + 10,
    }
    assert totals == {"a": 48, "b": 12, "c": -52, "d": -8}
    assert sum(totals.values()) == 0


def test_individual_totals_need_every_game() -> None:
    schedule = rotating_partners(["a", "b", "c", "d"], games_per_round=1)
    with pytest.raises(ValueError, match="round 2, table 1: expected 1 games, got 0"):
        individual_totals(schedule, [[[[0, 1, 1, 1]]], [[]], [[[0, 1, 1, 1]]]])
    with pytest.raises(ValueError, match="expected games for 3 rounds, got 1"):
        individual_totals(schedule, [[[[0, 1, 1, 1]]]])
