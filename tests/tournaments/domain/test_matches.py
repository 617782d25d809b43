"""Matches at one table (SPEC §4 "Matches at one table"): tournaments/domain/matches.py."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tournaments.domain.matches import (
    CUMULATIVE,
    ELIMINATION,
    MatchError,
    MatchFormat,
    competition_places,
    game_additions,
    match_state,
)

# --- cumulative (累积法) ----------------------------------------------------------------------


def test_cumulative_the_winner_adds_the_others_hands_and_the_first_to_the_target_wins() -> None:
    games = [
        [0, 100, 25, 9],  # seat 0 out: +134
        [1, 0, 150, 70],  # seat 1 out: +221
        [0, 7, 100, 42],  # seat 0: 134 + 149 = 283
        [50, 53, 0, 20],  # seat 2: +123
    ]
    going = match_state(CUMULATIVE, 500, games)
    assert going.totals == (283, 221, 123, 0)
    assert going.held == (51, 160, 275, 141)
    assert (going.finished, going.decided_in, going.placements) == (False, None, None)
    assert going.active == (0, 1, 2, 3)

    done = match_state(CUMULATIVE, 500, [*games, [0, 109, 8, 120]])  # seat 0: 283 + 237

    assert done.totals == (520, 221, 123, 0)
    assert (done.finished, done.decided_in, done.games) == (True, 5, 5)
    assert done.placements == (1, 2, 3, 4)
    assert done.eliminated == ()
    assert done.active == ()


def test_cumulative_two_reaching_the_target_in_one_game_the_higher_total_wins() -> None:
    games = [
        [0, 30, 50, 40],  # seat 0: +120
        [30, 0, 50, 50],  # seat 1: +130
        [10, 10, 60, 45],  # time ran out, seats 0 and 1 tied on the lowest hand: +105 each
    ]
    state = match_state(CUMULATIVE, 200, games)
    assert state.totals == (225, 235, 0, 0)
    assert state.decided_in == 3
    # Seats 2 and 3 both have 0: fewer hand points held over the match is better.
    assert state.held == (40, 40, 160, 135)
    assert state.placements == (2, 1, 4, 3)


def test_cumulative_a_dead_heat_on_total_and_held_shares_the_place() -> None:
    state = match_state(CUMULATIVE, 100, [[5, 5, 50, 50]])
    assert state.totals == (100, 100, 0, 0)
    assert state.placements == (1, 1, 3, 3)


def test_cumulative_equal_totals_are_parted_by_the_hands_held() -> None:
    state = match_state(CUMULATIVE, 61, [[0, 20, 30, 10], [30, 0, 20, 10], [0, 1, 1, 1]])
    assert state.totals == (63, 60, 0, 0)
    assert state.held == (30, 21, 51, 21)
    assert state.placements == (1, 2, 4, 3)


def test_every_hand_equal_scores_nobody() -> None:
    assert match_state(CUMULATIVE, 10, [[4, 4, 4]]).totals == (0, 0, 0)


# --- elimination (淘汰法) ---------------------------------------------------------------------


def test_elimination_the_last_player_left_wins_and_later_eliminated_ranks_better() -> None:
    games: list[list[int | None]] = [
        [0, 50, 5, 59],
        [2, 50, 0, 50],  # seats 1 (100) and 3 (109) reach 100 in one game
        [1, None, 100, None],  # seat 2 reaches 105
    ]
    after_two = match_state(ELIMINATION, 100, games[:2])
    assert after_two.totals == (2, 100, 5, 109)
    assert after_two.eliminated == (1, 3)
    assert after_two.eliminated_in == (None, 2, None, 2)
    assert after_two.active == (0, 2)
    assert not after_two.finished

    done = match_state(ELIMINATION, 100, games)

    assert done.totals == (3, 100, 105, 109)
    assert done.eliminated == (1, 3, 2)
    assert done.decided_in == 3
    # Seat 0 is left; seat 2 was out last; seats 1 and 3 went together, fewer points first.
    assert done.placements == (1, 3, 2, 4)


def test_elimination_everyone_out_in_one_game_the_fewest_points_wins() -> None:
    state = match_state(ELIMINATION, 50, [[10, 20, 0], [45, 40, 60]])
    assert state.totals == (55, 60, 60)
    assert state.eliminated == (0, 1, 2)
    assert state.decided_in == 2
    assert state.placements == (1, 2, 2)


def test_elimination_a_game_adds_each_players_own_hand() -> None:
    assert game_additions(ELIMINATION, [3, None, 0]) == [3, None, 0]
    assert game_additions(CUMULATIVE, [3, 20, 0]) == [0, 0, 23]


# --- refused input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scoring", "games", "message"),
    [
        (
            CUMULATIVE,
            [[0, 60], [0, 10]],
            "game 2: the match was decided in game 1; no further game can be entered",
        ),
        (
            ELIMINATION,
            [[0, 60], [0, 10]],
            "game 2: the match was decided in game 1; no further game can be entered",
        ),
        (CUMULATIVE, [[0, 5, 5], [0, 5]], "game 2: expected hand points for 3 seats, got 2"),
        (CUMULATIVE, [[0, 5, -1]], "game 1, seat 2: hand points must be an int >= 0, got -1"),
        (CUMULATIVE, [[0, True, 1]], "game 1, seat 1: hand points must be an int >= 0, got True"),
        (CUMULATIVE, [[0, 5, None]], "game 1, seat 2: hand points must be an int >= 0, got None"),
        (
            ELIMINATION,
            [[0, 60, 0], [1, 0, 2]],
            "game 2, seat 1: eliminated in game 1; it holds no hand in a later game",
        ),
        (ELIMINATION, [[0, 5, 5], "055"], "game 2: a game must be a sequence"),
        ("penalty", [[0, 5]], "unknown match scoring 'penalty'"),
        (CUMULATIVE, [[0]], "a match needs at least 2 seats, got 1"),
    ],
)
def test_bad_or_late_games_are_refused_naming_the_game_and_seat(
    scoring: str, games: list[list[int | None]], message: str
) -> None:
    with pytest.raises(MatchError, match=message):
        match_state(scoring, 50, games)


def test_a_match_error_carries_the_game_and_seat() -> None:
    with pytest.raises(MatchError) as caught:
        match_state(CUMULATIVE, 50, [[0, 5], [0, 5, 3]])
    assert (caught.value.game, caught.value.seat) == (2, None)
    with pytest.raises(MatchError) as caught:
        match_state(CUMULATIVE, 50, [[0, 5], [0, -5]])
    assert (caught.value.game, caught.value.seat, caught.value.reason) == (
        2,
        1,
        "hand points must be an int >= 0, got -5",
    )


@pytest.mark.parametrize("target", [0, -5, True, 2.5])
def test_a_target_must_be_a_positive_int(target: object) -> None:
    with pytest.raises(MatchError, match="the target must be an int >= 1"):
        MatchFormat(CUMULATIVE, target)  # type: ignore[arg-type]


def test_no_games_yet() -> None:
    state = match_state(ELIMINATION, 100, [], seats=4)
    assert (state.totals, state.games, state.finished, state.active) == (
        (0, 0, 0, 0),
        0,
        False,
        (0, 1, 2, 3),
    )
    assert match_state(CUMULATIVE, 100, []).totals == ()


def test_competition_places() -> None:
    assert competition_places([(1,), (0,), (1,), (3,)]) == (2, 1, 2, 4)


# --- properties -------------------------------------------------------------------------------

SEATS = st.integers(min_value=2, max_value=5)


@st.composite
def cumulative_games(draw: st.DrawFn) -> tuple[int, int, list[list[int]]]:
    seats = draw(SEATS)
    target = draw(st.integers(min_value=1, max_value=400))
    games: list[list[int]] = []
    for _ in range(draw(st.integers(min_value=1, max_value=30))):
        game = draw(st.lists(st.integers(0, 120), min_size=seats, max_size=seats))
        if match_state(CUMULATIVE, target, games, seats=seats).finished:
            break
        games.append(game)
    return seats, target, games


@given(cumulative_games())
def test_cumulative_properties(case: tuple[int, int, list[list[int]]]) -> None:
    seats, target, games = case
    state = match_state(CUMULATIVE, target, games, seats=seats)
    stakes = sum(sum(p for p in game if p != min(game)) * game.count(min(game)) for game in games)
    assert sum(state.totals) == stakes
    assert state.held == tuple(sum(game[s] for game in games) for s in range(seats))
    if state.finished:
        assert state.decided_in == len(games)
        assert not match_state(CUMULATIVE, target, games[:-1], seats=seats).finished
        assert state.placements is not None
        winners = [s for s in range(seats) if state.placements[s] == 1]
        assert all(state.totals[s] == max(state.totals) >= target for s in winners)
        assert sorted(state.placements) == sorted(
            1 + sum(1 for o in state.placements if o < p) for p in state.placements
        )
    else:
        assert max(state.totals, default=0) < target


@st.composite
def elimination_games(draw: st.DrawFn) -> tuple[int, int, list[list[int | None]]]:
    seats = draw(SEATS)
    target = draw(st.integers(min_value=1, max_value=300))
    games: list[list[int | None]] = []
    for _ in range(draw(st.integers(min_value=1, max_value=30))):
        state = match_state(ELIMINATION, target, games, seats=seats)
        if state.finished:
            break
        games.append(
            [draw(st.integers(0, 120)) if s in state.active else None for s in range(seats)]
        )
    return seats, target, games


@given(elimination_games())
def test_elimination_properties(case: tuple[int, int, list[list[int | None]]]) -> None:
    seats, target, games = case
    state = match_state(ELIMINATION, target, games, seats=seats)
    assert state.totals == tuple(sum(game[s] or 0 for game in games) for s in range(seats))
    for seat, out in enumerate(state.eliminated_in):
        assert (out is not None) == (state.totals[seat] >= target)
    assert sorted(state.eliminated) == [s for s in range(seats) if state.eliminated_in[s]]
    if state.finished:
        assert state.placements is not None
        assert len([s for s in range(seats) if state.eliminated_in[s] is None]) <= 1
        # Eliminated later never ranks below eliminated earlier.
        for a in range(seats):
            for b in range(seats):
                out_a = state.eliminated_in[a] or len(games) + 1
                out_b = state.eliminated_in[b] or len(games) + 1
                if out_a > out_b:
                    assert state.placements[a] < state.placements[b]
    else:
        assert len(state.active) >= 2
