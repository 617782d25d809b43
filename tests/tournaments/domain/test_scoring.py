"""Game scorings (SPEC §3): tournaments/domain/scoring.py."""

from collections.abc import Callable, Sequence

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from tournaments.domain.scoring import (
    SCORINGS,
    cumulative,
    penalty,
    score_game,
    tour_doubles,
    tour_singles,
)

HANDS = st.lists(st.integers(min_value=0, max_value=600), min_size=2, max_size=10)
Scorer = Callable[[Sequence[int]], list[int]]
SINGLE_SCORERS: list[Scorer] = [tour_singles, cumulative, penalty]


@st.composite
def doubles_games(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    hands = draw(HANDS)
    teams = draw(st.lists(st.sampled_from([0, 1]), min_size=len(hands), max_size=len(hands)))
    assume(0 in teams and 1 in teams)
    return hands, teams


# --- worked examples ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("hands", "scores"),
    [
        ([0, 12, 30, 50], [92, -12, -30, -50]),
        ([50, 30, 0, 12], [-50, -30, 92, -12]),
        ([7, 20, 40, 13], [20 - 7 + 40 - 7 + 13 - 7, -20, -40, -13]),
        ([0, 75], [75, -75]),
        ([5, 5, 20], [15, 15, -20]),  # co-winners: margins 0 + 15 each
        ([0, 0, 10, 30], [40, 40, -10, -30]),
        ([8, 8, 8, 8], [0, 0, 0, 0]),
    ],
)
def test_tour_singles_examples(hands: list[int], scores: list[int]) -> None:
    assert tour_singles(hands) == scores


@pytest.mark.parametrize(
    ("hands", "teams", "scores"),
    [
        ([0, 10, 20, 30], [0, 1, 0, 1], [40, -40, 40, -40]),
        # the team of the player who went out wins, even with the higher total
        ([0, 5, 90, 10], [0, 1, 0, 1], [15, -15, 15, -15]),
        ([30, 0, 20, 10], [0, 1, 0, 1], [-50, 50, -50, 50]),
        # lowest hand in both teams: the lower total wins
        ([5, 5, 10, 20], [0, 1, 0, 1], [25, -25, 25, -25]),
        ([5, 5, 30, 20], [0, 1, 0, 1], [-35, 35, -35, 35]),
        # ... and equal totals too: a draw
        ([5, 5, 10, 10], [0, 1, 0, 1], [0, 0, 0, 0]),
        ([0, 0, 0, 0], [0, 0, 1, 1], [0, 0, 0, 0]),
        ([3, 9, 9, 3], [0, 0, 1, 1], [0, 0, 0, 0]),
        # unequal teams are scored by the same rule
        ([0, 10, 20], [0, 1, 1], [30, -30, -30]),
    ],
)
def test_tour_doubles_examples(hands: list[int], teams: list[int], scores: list[int]) -> None:
    assert tour_doubles(hands, teams) == scores


@pytest.mark.parametrize(
    ("hands", "scores"),
    [
        ([0, 12, 30, 50], [92, 0, 0, 0]),
        ([40, 3, 3, 10], [0, 50, 50, 0]),
        ([6, 6], [0, 0]),
    ],
)
def test_cumulative_examples(hands: list[int], scores: list[int]) -> None:
    assert cumulative(hands) == scores


def test_penalty_is_minus_own_hand() -> None:
    assert penalty([0, 12, 30, 50]) == [0, -12, -30, -50]
    assert penalty([9, 9]) == [-9, -9]


# --- registry -----------------------------------------------------------------------


def test_registry_names() -> None:
    assert set(SCORINGS) == {"tour_singles", "tour_doubles", "cumulative", "penalty"}
    assert {name: entry.needs_teams for name, entry in SCORINGS.items()} == {
        "tour_singles": False,
        "tour_doubles": True,
        "cumulative": False,
        "penalty": False,
    }
    assert all(entry.name == name for name, entry in SCORINGS.items())


def test_score_game_dispatches() -> None:
    hands = [0, 12, 30, 50]
    assert score_game("tour_singles", hands) == [92, -12, -30, -50]
    assert score_game("tour_singles", hands, [None, None, None, None]) == [92, -12, -30, -50]
    assert score_game("cumulative", hands) == [92, 0, 0, 0]
    assert score_game("penalty", hands) == [0, -12, -30, -50]
    assert score_game("tour_doubles", hands, [0, 1, 0, 1]) == [62, -62, 62, -62]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("elo", [1, 2]), "unknown scoring 'elo'"),
        (("tour_doubles", [1, 2]), "scoring 'tour_doubles' needs a team"),
        (("tour_doubles", [1, 2], [None, None]), "scoring 'tour_doubles' needs a team"),
        (("tour_doubles", [1, 2], [0, None]), "seat 1: team must be 0 or 1, got None"),
        (("tour_singles", [1, 2], [0, 1]), "scoring 'tour_singles' does not use teams"),
    ],
)
def test_score_game_rejects(args: tuple[object, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        score_game(*args)  # type: ignore[arg-type]


# --- validation ---------------------------------------------------------------------


@pytest.mark.parametrize("scorer", SINGLE_SCORERS)
@pytest.mark.parametrize(
    ("hands", "message"),
    [
        ([], "at least 2 seats, got 0"),
        ([5], "at least 2 seats, got 1"),
        ([5, -1], "seat 1: hand points must be an int >= 0, got -1"),
        ([5, 2.5], "seat 1: hand points must be an int >= 0, got 2.5"),
        ([True, 3], "seat 0: hand points must be an int >= 0, got True"),
        ("12", "must be a sequence of ints, got str"),
    ],
)
def test_bad_hand_points_are_rejected(scorer: Scorer, hands: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        scorer(hands)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("hands", "teams", "message"),
    [
        ([1, 2, 3], [0, 1], "got 3 hand points but 2 teams"),
        ([1, 2], [0, 2], "seat 1: team must be 0 or 1, got 2"),
        ([1, 2], [0, True], "seat 1: team must be 0 or 1, got True"),
        ([1, 2], [1, 1], "team 0 has none"),
        ([1, 2], [0, 0], "team 1 has none"),
        ([1, -2], [0, 1], "seat 1: hand points must be an int >= 0"),
    ],
)
def test_bad_doubles_are_rejected(hands: list[int], teams: list[int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tour_doubles(hands, teams)


# --- invariants ---------------------------------------------------------------------


@given(HANDS)
def test_tour_singles_invariants(hands: list[int]) -> None:
    scores = tour_singles(hands)
    low, n, total = min(hands), len(hands), sum(hands)
    winners = [i for i, h in enumerate(hands) if h == low]
    for i, h in enumerate(hands):
        if h == low:
            assert scores[i] == sum(other - h for other in hands) >= 0
        else:
            assert scores[i] == -h
    k = len(winners)
    assert sum(scores) == (k - 1) * total - k * (n - 1) * low
    if k == 1:
        assert sum(scores) == -(n - 1) * low
        if low == 0:  # a game ended "out": zero-sum
            assert sum(scores) == 0


@given(doubles_games())
def test_tour_doubles_invariants(game: tuple[list[int], list[int]]) -> None:
    hands, teams = game
    scores = tour_doubles(hands, teams)
    totals = [sum(h for h, t in zip(hands, teams, strict=True) if t == team) for team in (0, 1)]
    low_teams = {t for h, t in zip(hands, teams, strict=True) if h == min(hands)}
    if len(low_teams) == 2 and totals[0] == totals[1]:
        assert scores == [0] * len(hands)
        return
    winner = next(iter(low_teams)) if len(low_teams) == 1 else totals.index(min(totals))
    stake = totals[1 - winner]
    assert stake > 0
    assert scores == [stake if t == winner else -stake for t in teams]
    assert sum(scores) == (teams.count(winner) - teams.count(1 - winner)) * stake
    # the labels 0/1 mean nothing
    assert tour_doubles(hands, [1 - t for t in teams]) == scores


@given(HANDS)
def test_cumulative_invariants(hands: list[int]) -> None:
    scores = cumulative(hands)
    low = min(hands)
    losers = [i for i, h in enumerate(hands) if h != low]
    assert all(scores[i] == 0 for i in losers)
    # each winner takes what the losers give up under tour singles
    singles = tour_singles(hands)
    assert all(
        s == -sum(singles[i] for i in losers)
        for h, s in zip(hands, scores, strict=True)
        if h == low
    )
    assert sum(scores) == (len(hands) - len(losers)) * sum(hands[i] for i in losers)


@given(HANDS)
def test_penalty_invariants(hands: list[int]) -> None:
    scores = penalty(hands)
    assert scores == [-h for h in hands]
    assert sum(scores) == -sum(hands)


@pytest.mark.parametrize("scorer", SINGLE_SCORERS)
@given(data=st.data())
def test_permuting_seats_permutes_scores(scorer: Scorer, data: st.DataObject) -> None:
    hands = data.draw(HANDS)
    order = data.draw(st.permutations(range(len(hands))))
    scores = scorer(hands)
    assert scorer([hands[i] for i in order]) == [scores[i] for i in order]


@given(doubles_games(), st.data())
def test_doubles_permuting_seats_permutes_scores(
    game: tuple[list[int], list[int]], data: st.DataObject
) -> None:
    hands, teams = game
    order = data.draw(st.permutations(range(len(hands))))
    scores = tour_doubles(hands, teams)
    permuted = tour_doubles([hands[i] for i in order], [teams[i] for i in order])
    assert permuted == [scores[i] for i in order]


@pytest.mark.parametrize("scorer", SINGLE_SCORERS)
@given(hands=HANDS)
def test_lower_hand_never_scores_less(scorer: Scorer, hands: list[int]) -> None:
    scores = scorer(hands)
    for i, hi in enumerate(hands):
        for j, hj in enumerate(hands):
            if hi < hj:
                assert scores[i] >= scores[j]
            if hi == hj:
                assert scores[i] == scores[j]


@given(doubles_games())
def test_score_game_agrees_with_the_functions(game: tuple[list[int], list[int]]) -> None:
    hands, teams = game
    assert score_game("tour_singles", hands) == tour_singles(hands)
    assert score_game("cumulative", hands) == cumulative(hands)
    assert score_game("penalty", hands) == penalty(hands)
    assert score_game("tour_doubles", hands, teams) == tour_doubles(hands, teams)
