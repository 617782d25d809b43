from ratings.domain.ranking import seat_ranks


def test_higher_score_ranks_first_in_seat_order() -> None:
    assert seat_ranks([-5, 36, -20, -11]) == [2, 1, 4, 3]


def test_equal_scores_share_a_rank_and_the_next_skips() -> None:
    assert seat_ranks([-10, 30, -10, -10]) == [2, 1, 2, 2]
    assert seat_ranks([12, 12, -7, -17]) == [1, 1, 3, 4]
    assert seat_ranks([0, 0, 0, 0]) == [1, 1, 1, 1]


def test_doubles_teammates_tie() -> None:
    assert seat_ranks([25, -25, 25, -25]) == [1, 3, 1, 3]
