"""Boosting's day design effect: a player's days share a form, so a block of whole days is
compared with the rest at the day ICC of the rest of the family (SPEC §7: 代练代打)."""

from __future__ import annotations

import math

import pytest

from integrity.domain.boosting import (
    _day_runs,
    _day_sums,
    _Days,
    _icc,
    detect_boosting,
)
from integrity.domain.data import SessionObs
from integrity.domain.stats import normal_sf

#: 450,000 hours after 1970-01-01 00:00 Shanghai is a midnight: a tour day starts there.
MIDNIGHT = 450_000
PATTERN = (3, 8, 1, 5, 9, 7, 10, 6, 4, 2)  # no trend inside a half


def obs(player: str, i: int, device: str = "d1") -> SessionObs:
    """Game ``i``: ten games a day, one an hour from 10:00."""
    return SessionObs(
        f"{player}-{i:02d}", player, "", device, MIDNIGHT + 24 * (i // 10) + 10 + i % 10
    )


def player_games(
    player: str, values: list[float]
) -> tuple[list[tuple[str, float]], list[SessionObs]]:
    """Forty games over four days, on a new phone from game 20."""
    sessions = [obs(player, i, "d1" if i < 20 else "d2") for i in range(40)]
    return [(s.game_id, v) for s, v in zip(sessions, values, strict=True)], sessions


def separated(i: int) -> float:
    """Game ``i`` of a player whose days do not overlap: day ``d`` holds ranks 10d+1..10d+10."""
    return float(i)


def interleaved(i: int) -> float:
    """Game ``i`` of a player whose days interleave: day ``d`` holds the ranks 4j+d+1."""
    return float(4 * (i % 10) + i // 10)


def family(strong: int, weak: int) -> tuple[dict[str, list[tuple[str, float]]], list[SessionObs]]:
    """``strong`` players of separated days, ``weak`` of interleaved ones, and the account
    ``X``: its games from the phone change on are all better than those before it."""
    residuals: dict[str, list[tuple[str, float]]] = {}
    sessions: list[SessionObs] = []
    kinds = [separated] * strong + [interleaved] * weak
    for k, kind in enumerate(kinds):
        series, games = player_games(f"p{k:03d}", [kind(i) for i in range(40)])
        residuals[f"p{k:03d}"] = series
        sessions += games
    values = [x / 10 for x in PATTERN * 2] + [10.0 + x for x in PATTERN * 2]
    residuals["X"], games = player_games("X", values)
    sessions += games
    return residuals, sessions


def pooled_rho(strong: int, weak: int) -> float:
    """The day ICC of the others, from the sums of squares of each kind worked out by hand.

    Ranks 1..40, four days of ten, mean 20.5. Separated: day means 5.5, 15.5, 25.5, 35.5, so
    between 10 * (15² + 5² + 5² + 15²) = 5,000, within 4 * 82.5 = 330. Interleaved: day means
    19..22, so between 10 * (1.5² + 0.5² + 0.5² + 1.5²) = 50, within 4 * 16 * 82.5 = 5,280.
    Each player: 3 degrees of freedom between, 36 within, weight 40 - 4 * 10² / 40 = 30."""
    players = strong + weak
    var_game = (330 * strong + 5_280 * weak) / (36 * players)
    var_day = ((5_000 * strong + 50 * weak) / (3 * players) - var_game) * 3 / 30
    return var_day / (var_day + var_game)


def test_days_are_runs_of_games_on_one_tour_day() -> None:
    day = MIDNIGHT
    games = [
        SessionObs("g0", "p", "", "d", day - 1),  # 23:00 the day before
        SessionObs("g1", "p", "", "d", day),
        None,  # on the day of the game before it
        SessionObs("g3", "p", "", "d", day + 23),
        SessionObs("g4", "p", "", "d", day + 24),
    ]
    assert _day_runs(games) == [(0, 1), (1, 4), (4, 5)]


def test_the_day_icc_of_a_series_is_worked_out_by_hand() -> None:
    # Ranks 1..6, days (1, 2, 3) and (4, 5, 6): between 3 * 1.5² * 2 = 13.5, within 4,
    # weight 6 - 18 / 6 = 3; var_game 4 / 4 = 1, var_day (13.5 - 1) / 3 = 25 / 6.
    sums = _day_sums([0.1, 0.2, 0.3, 1.0, 1.1, 1.2], [(0, 3), (3, 6)])
    assert sums == [13.5, 4.0, 1, 4, 3.0]
    assert _icc(sums) == pytest.approx(25 / 31, abs=1e-15)
    # Days no more different than games: no day variance.
    assert _icc(_day_sums([0.1, 1.2, 0.3, 1.0, 1.1, 0.2], [(0, 3), (3, 6)])) == 0.0


@pytest.mark.parametrize(
    ("runs", "segment", "expected"),
    [
        # Four days of 5, the last two inside: spread 4 * 0.5² = 1, 1/10 + 1/10 = 0.2.
        ([(0, 5), (5, 10), (10, 15), (15, 20)], (10, 20), 1 - 0.1 + 0.1 * 1.0 / 0.2),
        # Days of 5, 5 and 10, the second day and half the third inside: spread
        # 0.5² + 0.5² + 0 = 0.5.
        ([(0, 5), (5, 10), (10, 20)], (5, 15), 1 - 0.1 + 0.1 * 0.5 / 0.2),
    ],
)
def test_the_design_effect_grows_with_the_days_a_block_holds(
    runs: list[tuple[int, int]], segment: tuple[int, int], expected: float
) -> None:
    assert _Days(runs, 0.1).deff(*segment) == pytest.approx(expected, abs=1e-12)


def test_a_block_spread_evenly_over_the_days_is_never_sharpened() -> None:
    # One day: spread (10/10 - 10/10)² = 0, so 1 - rho, raised to 1.
    assert _Days([(0, 20)], 0.1).deff(0, 10) == 1.0


def test_a_block_of_whole_days_is_weighed_at_the_day_icc_of_the_others() -> None:
    residuals, sessions = family(strong=15, weak=135)
    rho = pooled_rho(15, 135)
    assert rho == pytest.approx(4.875 / (4.875 + 717_750 / 5_400), abs=1e-12)

    result = detect_boosting(residuals, sessions)

    assert result.family_size == 151
    # The week's day ICC pools X too: its ranks 2k - 1/2 (each value twice), days of means
    # 10.5, 10.5, 30.5, 30.5: between 10 * 4 * 10² = 4,000, within 4 * 4 * 82.5 = 1,320.
    var_game = (15 * 330 + 135 * 5_280 + 1_320) / (36 * 151)
    var_day = ((15 * 5_000 + 135 * 50 + 4_000) / (3 * 151) - var_game) * 3 / 30
    assert result.day_icc == pytest.approx(var_day / (var_day + var_game), abs=1e-12)
    [flag] = [f for f in result.flags if f.player == "X"]
    # X's block is days 2 and 3 of four: spread 4 * 0.5² = 1 over 1/20 + 1/20.
    deff = 1 - rho + rho * 1.0 / 0.1
    assert flag.day_effect == pytest.approx(deff, abs=1e-12)
    assert flag.segment == (20, 40)
    # Rank sum 610 against 410 expected; each value twice, 20 ties of two, so the variance
    # is 20 * 20 / 12 * (41 - 20 * 6 / (40 * 39)).
    raw = (610 - 410 - 0.5) / math.sqrt(20 * 20 / 12 * (41 - 120 / 1_560))
    assert flag.z == pytest.approx(raw / math.sqrt(deff), abs=1e-12)
    assert flag.p == pytest.approx(2 * normal_sf(raw / math.sqrt(deff)), rel=1e-9)


def test_days_this_different_explain_two_good_days_after_a_phone_change() -> None:
    residuals, sessions = family(strong=60, weak=90)

    in_family = detect_boosting(residuals, sessions)
    alone = detect_boosting({"X": residuals["X"]}, [s for s in sessions if s.player == "X"])

    assert pooled_rho(60, 90) == pytest.approx(58.5 / (58.5 + 495_000 / 5_400), abs=1e-12)
    assert "X" not in {f.player for f in in_family.flags}
    [flag] = alone.flags
    assert (flag.player, flag.day_effect, flag.segment) == ("X", 1.0, (20, 40))


def test_the_icc_is_not_estimated_from_fewer_than_a_hundred_others() -> None:
    residuals, sessions = family(strong=15, weak=84)

    result = detect_boosting(residuals, sessions)

    assert (result.family_size, result.day_icc) == (100, 0.0)
    [flag] = [f for f in result.flags if f.player == "X"]
    assert flag.day_effect == 1.0
