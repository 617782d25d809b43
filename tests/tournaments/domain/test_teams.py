"""Tests for team seating (SPEC §4 "Team events": teammates are never in adjacent seats)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tournaments.domain.teams import adjacent_teammates


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
