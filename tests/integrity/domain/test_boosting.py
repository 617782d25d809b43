"""Tests for boosting, someone else playing the account (SPEC §7: 代练代打)."""

from __future__ import annotations

import math
import random

import pytest

from integrity.domain.boosting import detect_boosting, may_be_tested, residual_series
from integrity.domain.data import SessionObs, TableObs
from integrity.domain.stats import normal_sf

from .sim import DECK_POINTS, make_table

Series = list[tuple[str, float]]


def sessions_for(
    player: str,
    n: int,
    *,
    devices: list[str] | None = None,
    ips: list[str] | None = None,
    local_hours: list[int] | None = None,
) -> list[SessionObs]:
    """One game a day at the given local hour (default 20:00)."""
    return [
        SessionObs(
            game_id=f"{player}-{i:03d}",
            player=player,
            ip=ips[i] if ips else "",
            device=devices[i] if devices else "",
            hour=450_000 + 24 * i + (local_hours[i] if local_hours else 20),
        )
        for i in range(n)
    ]


def series_of(player: str, values: list[float]) -> Series:
    return [(f"{player}-{i:03d}", v) for i, v in enumerate(values)]


# Exact values of boost-4 on hand-made series: test_boosting_segments.py.


def test_sessions_are_matched_to_their_games_in_any_order() -> None:
    pattern = (3, 8, 1, 5, 9, 7, 10, 6, 4, 2)  # no trend inside either half
    values = [x / 10 for x in pattern] + [10.0 + x for x in pattern]
    in_order = sessions_for("acc", 20, devices=["d1"] * 10 + ["d2"] * 10)
    # Game 0 without a session, game 3 given twice (the last one counts), the rest reversed.
    shuffled = [in_order[3]._replace(device="d9"), *reversed(in_order[1:])]

    expected = detect_boosting({"acc": series_of("acc", values)}, in_order, min_segment=5, window=5)
    result = detect_boosting({"acc": series_of("acc", values)}, shuffled, min_segment=5, window=5)

    assert result == expected
    assert [flag.change_game for flag in result.flags] == ["acc-010"]


def mann_whitney_tail(n1: int, n2: int) -> list[float]:
    """Exact P(U >= u) for u = 0..n1*n2 without ties (counting arrangements)."""
    counts = [[[1] if a == 0 or b == 0 else [] for b in range(n2 + 1)] for a in range(n1 + 1)]
    for a in range(1, n1 + 1):
        for b in range(1, n2 + 1):
            # The largest value is an "after" (adds a to U) or a "before".
            with_after = [0] * a + counts[a][b - 1]
            before = counts[a - 1][b]
            size = max(len(with_after), len(before))
            counts[a][b] = [
                (with_after[u] if u < len(with_after) else 0)
                + (before[u] if u < len(before) else 0)
                for u in range(size)
            ]
    pmf = counts[n1][n2]
    total = math.comb(n1 + n2, n1)
    return [sum(pmf[u:]) / total for u in range(len(pmf))]


@pytest.mark.parametrize(("n1", "n2"), [(10, 10), (10, 25), (20, 20)])
def test_normal_bound_is_conservative_in_the_far_tail(n1: int, n2: int) -> None:
    """The docstring's claim: with the continuity correction the normal tail is above the
    exact Mann–Whitney tail wherever the exact tail is below 0.01."""
    tails = mann_whitney_tail(n1, n2)
    assert len(tails) == n1 * n2 + 1
    sd = math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12)
    for u, exact in enumerate(tails):
        if exact < 0.01:
            assert normal_sf((u - n1 * n2 / 2 - 0.5) / sd) >= exact


def test_no_session_change_means_not_tested() -> None:
    values = [0.0] * 15 + [100.0] * 15
    result = detect_boosting(
        {"acc": series_of("acc", values)}, sessions_for("acc", 30, devices=["d1"] * 30)
    )
    assert (result.family_size, result.flags) == (0, ())


def test_too_short_series_is_not_tested() -> None:
    values = [0.0] * 9 + [100.0] * 10
    devices = ["d1"] * 9 + ["d2"] * 10
    result = detect_boosting(
        {"acc": series_of("acc", values)}, sessions_for("acc", 19, devices=devices)
    )
    assert result.family_size == 0


def test_ip_range_and_hours_changes() -> None:
    n = 40
    values = [float(i % 7) for i in range(20)] + [50.0 + i % 7 for i in range(20)]
    # Same /24 before and after: no IP-range change; a new /24 at 20: a change.
    same = [f"203.0.113.{i}" for i in range(n)]
    moved = ["203.0.113.5"] * 20 + ["198.51.100.9"] * 20
    hours = [20] * 20 + [3] * 20  # 20:00 -> 03:00 is 7 hours round the clock
    kinds = {}
    for label, ips, local in (("same", same, None), ("moved", moved, None), ("night", same, hours)):
        result = detect_boosting(
            {"acc": series_of("acc", values)}, sessions_for("acc", n, ips=ips, local_hours=local)
        )
        kinds[label] = result.flags[0].kinds if result.flags else None
    assert kinds == {"same": None, "moved": ("ip_range",), "night": ("hours",)}


def test_residual_series_from_tables() -> None:
    tables = [
        make_table("g1", 1, ("a", "b", "c"), (0, 10, 20)),
        make_table("g2", 2, ("b", "a", "c"), (0, 5, 5)),
    ]
    skill = {"a": 10.0, "b": 0.0, "c": -10.0}

    def expected(table: TableObs) -> list[float]:
        return [skill[player] for player in table.players]

    assert residual_series(tables, expected) == {
        "a": [("g1", 30 - 10.0), ("g2", -5 - 10.0)],
        "b": [("g1", -10 - 0.0), ("g2", 10 - 0.0)],
        "c": [("g1", -20 + 10.0), ("g2", -5 + 10.0)],
    }


def test_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="min_segment"):
        detect_boosting({}, [], min_segment=0)


# --- simulated seasons --------------------------------------------------------------------


def hand(rng: random.Random) -> int:
    return sum(rng.choices(DECK_POINTS, k=rng.randint(1, 7)))


def score(rng: random.Random, win_rate: float) -> float:
    """A tour singles score: the winner goes out and takes the three other hands, a loser
    scores minus their own hand; the account wins with probability ``win_rate``."""
    if rng.random() < win_rate:
        return float(hand(rng) + hand(rng) + hand(rng))
    return float(-hand(rng))


def season(
    seed: int, n_players: int = 100, n_games: int = 120, boosters: dict[str, float] | None = None
) -> tuple[dict[str, Series], list[SessionObs]]:
    """Honest accounts: some change device, address range or hours at a random game, as
    people do. A booster's win rate jumps at mid-season, on a new device from a new range."""
    rng = random.Random(seed)
    residuals: dict[str, Series] = {}
    sessions: list[SessionObs] = []
    for k in range(n_players):
        player = f"p{k:04d}"
        boost = (boosters or {}).get(player)
        switch = n_games // 2 if boost else rng.randrange(n_games)
        changes = (
            {"device", "ip"}
            if boost
            else {c for c in ("device", "ip", "hours") if rng.random() < 0.3}
        )
        home = rng.randrange(12, 24)
        values = []
        for i in range(n_games):
            after = i >= switch
            values.append(score(rng, boost if boost and after else 0.25))
            device = f"{player}-{'new' if after and 'device' in changes else 'old'}"
            ip = f"10.{k % 250}.{'7' if after and 'ip' in changes else '1'}.{rng.randrange(256)}"
            local = (
                home + (12 if after and "hours" in changes else 0) + rng.choice((-1, 0, 1))
            ) % 24
            sessions.append(
                SessionObs(f"{player}-{i:03d}", player, ip, device, 450_000 + 24 * i + local)
            )
        residuals[player] = series_of(player, values)
    return residuals, sessions


def test_honest_seasons_rarely_flag() -> None:
    runs_with_flags = 0
    for seed in range(20):
        residuals, sessions = season(seed)
        result = detect_boosting(residuals, sessions)
        assert result.family_size > 30
        runs_with_flags += bool(result.flags)
    assert runs_with_flags <= 1


def test_injected_boosters_are_found_with_exact_ranks() -> None:
    residuals, sessions = season(8, boosters={"p0003": 0.95, "p0050": 0.75})
    result = detect_boosting(residuals, sessions)
    assert [f.player for f in result.flags] == ["p0003", "p0050"]
    for flag in result.flags:
        assert abs(flag.change_index - 60) <= 4
        assert flag.kinds == ("device", "ip_range")
        assert flag.shift > 0


def test_may_be_tested_needs_the_games_and_a_possible_change() -> None:
    evening, morning = [20] * 20, [20] * 10 + [8] * 10
    assert not may_be_tested(morning[:19], several_devices=True, several_ranges=True)
    assert not may_be_tested(evening, several_devices=False, several_ranges=False)
    assert may_be_tested(evening, several_devices=True, several_ranges=False)
    assert may_be_tested(evening, several_devices=False, several_ranges=True)
    assert may_be_tested(morning, several_devices=False, several_ranges=False)
    # A shift of 5 hours is below the default 6; with a 5-hour minimum it counts.
    shifted = [20] * 10 + [15] * 10
    assert not may_be_tested(shifted, several_devices=False, several_ranges=False)
    assert may_be_tested(shifted, several_devices=False, several_ranges=False, min_hour_shift=5)


@pytest.mark.parametrize("seed", range(4))
def test_may_be_tested_holds_for_every_player_the_detector_tests(seed: int) -> None:
    """On random series (2 devices, 2 ranges, hours spread or kept), every player
    :func:`detect_boosting` tests passes :func:`may_be_tested`; with one device and one
    range, exactly those."""
    rng = random.Random(seed)
    residuals: dict[str, Series] = {}
    sessions: list[SessionObs] = []
    summaries: dict[str, tuple[list[int], bool, bool]] = {}
    for k in range(400):
        player, n = f"acc{k}", rng.randrange(15, 45)
        spread = rng.choice([2, 6, 24])
        start = rng.randrange(24)
        hours = [(start + rng.randrange(spread)) % 24 for _ in range(n)]
        if rng.random() < 0.3:
            cut = rng.randrange(n)
            hours = hours[:cut] + [(h + 12) % 24 for h in hours[cut:]]
        devices = [rng.choice(["d1", "d1", "d1", "d2"]) if k % 3 == 0 else "d1" for _ in range(n)]
        ips = [rng.choice(["10.0.0.1", "10.0.1.1"]) if k % 5 == 0 else "10.0.0.1" for _ in range(n)]
        residuals[player] = series_of(player, [rng.gauss(0, 1) for _ in range(n)])
        sessions += sessions_for(player, n, devices=devices, ips=ips, local_hours=hours)
        summaries[player] = (hours, len(set(devices)) > 1, len(set(ips)) > 1)

    tested = {
        player
        for player in residuals
        if detect_boosting({player: residuals[player]}, sessions, q=0.5).family_size
    }
    kept = {
        player
        for player, (hours, devices, ranges) in summaries.items()
        if may_be_tested(hours, several_devices=devices, several_ranges=ranges)
    }
    plain = {player for player, (_, devices, ranges) in summaries.items() if not devices | ranges}

    assert tested <= kept
    assert tested & plain == kept & plain
    assert 0 < len(tested & plain) < len(plain)
