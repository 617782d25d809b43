"""boost-4 on small hand-made series, with exact values (SPEC §7: 代练代打): a block of better
games tested where the account's sessions change hands — a step at a device and address
change, a revert segment, a trend that is not a step, the weights of the two groups."""

from __future__ import annotations

import math

import pytest

from integrity.domain.boosting import (
    IDENTITY_SHARE,
    TREND_Z,
    VERSION,
    BoostFlag,
    detect_boosting,
)
from integrity.domain.data import SessionObs

#: A trend-free order of the ranks 1..10: sum((t - 4.5) * (x - 5.5)) = 0.5, so the trend of
#: each piece is 0.5 / 82.5 of its largest.
PATTERN = (3, 8, 1, 5, 9, 7, 10, 6, 4, 2)
OWNER = [x / 10 for x in PATTERN]  # 0.1 .. 1.0, mean 0.55
HIRED = [10.0 + x for x in PATTERN]  # 11 .. 20, mean 15.5
BACK = [x / 10 + 0.05 for x in PATTERN]  # 0.15 .. 1.05, mean 0.6
HOME = "203.0.113.{}"
AWAY = "198.51.100.{}"


def sessions(player: str, devices: list[str], ips: list[str]) -> list[SessionObs]:
    """One game a day at 20:00 on the given devices and addresses."""
    return [
        SessionObs(f"{player}-{i:03d}", player, ip, device, 450_000 + 24 * i + 20)
        for i, (device, ip) in enumerate(zip(devices, ips, strict=True))
    ]


def series(player: str, values: list[float]) -> list[tuple[str, float]]:
    return [(f"{player}-{i:03d}", value) for i, value in enumerate(values)]


def detect(
    values: list[float], devices: list[str], ips: list[str], player: str = "acc"
) -> tuple[int, tuple[BoostFlag, ...]]:
    result = detect_boosting(
        {player: series(player, values)},
        sessions(player, devices, ips),
        min_segment=5,
        window=5,
    )
    assert result.version == VERSION == "boost-4"
    return result.family_size, result.flags


def test_a_step_at_a_device_and_address_change_is_flagged() -> None:
    devices = ["d1"] * 10 + ["d2"] * 10
    ips = [HOME.format(i + 1) for i in range(10)] + [AWAY.format(i + 1) for i in range(10)]

    tested, [flag] = detect(OWNER + HIRED, devices, ips)

    # One change (at 10): the segments [0, 10) and [10, 20), both changing hands (no device
    # and no range on both sides), so J = 2. The hired games hold ranks 11..20: the rank sum
    # 155 is the largest possible, exact tail 1 / C(20, 10); z = (155 - 105 - 1/2) / sqrt(175).
    # One player, an identity player: weight IDENTITY_SHARE * 1 / 1; q = (p / w) * 1 / 1.
    p = 2 / math.comb(20, 10)
    assert tested == 1
    assert (flag.segment, flag.change_index, flag.change_game) == ((10, 20), 10, "acc-010")
    assert flag.change_hour == 450_000 + 240 + 20
    assert (flag.kinds, flag.identity, flag.splits, flag.games) == (
        ("device", "ip_range"),
        True,
        2,
        20,
    )
    assert flag.z == pytest.approx(49.5 / math.sqrt(175), rel=1e-12)
    assert flag.p == pytest.approx(p, rel=1e-9)
    assert flag.weight == IDENTITY_SHARE == 0.9
    assert flag.q == pytest.approx(p / 0.9, rel=1e-9)
    assert flag.strength == pytest.approx(-math.log10(p / 0.9), rel=1e-9)
    assert flag.before_mean == pytest.approx(0.55)
    assert flag.after_mean == pytest.approx(15.5)
    assert flag.shift == pytest.approx(14.95)
    assert flag.players == ("acc",)


def test_a_revert_segment_is_flagged() -> None:
    # The owner (d1 at home), a hired player (d2 elsewhere) for 10 games, the owner again.
    devices = ["d1"] * 10 + ["d2"] * 10 + ["d1"] * 10
    ips = [HOME.format(1)] * 10 + [AWAY.format(1)] * 10 + [HOME.format(2)] * 10

    tested, [flag] = detect(OWNER + HIRED + BACK, devices, ips)

    # Changes at 10 and 20; of the segments [0,10) [0,20) [10,20) [10,30) [20,30) only the
    # hired block [10, 20) changes hands, so J = 1. Its ranks are 21..30: rank sum 255, mean
    # 155, variance 10 * 20 * 31 / 12; exact tail 1 / C(30, 10).
    p = 1 / math.comb(30, 10)
    assert tested == 1
    assert (flag.segment, flag.change_index, flag.splits, flag.identity) == ((10, 20), 10, 1, True)
    assert flag.kinds == ("device", "ip_range")
    assert flag.z == pytest.approx(99.5 / math.sqrt(10 * 20 * 31 / 12), rel=1e-12)
    assert flag.p == pytest.approx(p, rel=1e-9)
    assert flag.q == pytest.approx(p / 0.9, rel=1e-9)
    assert flag.before_mean == pytest.approx((0.55 + 0.6) / 2)
    assert flag.after_mean == pytest.approx(15.5)


def test_a_trend_across_a_phone_change_is_not_flagged_but_a_step_is() -> None:
    # A steady improver: every game a little better than the last, a new phone at game 20
    # (home address kept). Inside each piece the ranks rise one by one: the within-piece
    # trend is sqrt(2 * 19) = 6.2 >= TREND_Z, so [20, 40) is a trend, not a step, and the
    # other segment [0, 20) is worse inside: p = 1.
    devices = ["old"] * 20 + ["new"] * 20
    ips = [HOME.format(7)] * 40
    improver = [float(i) for i in range(40)]
    assert math.sqrt(38) >= TREND_Z

    tested, flags = detect(improver, devices, ips)
    assert (tested, flags) == (1, ())

    # The same levels as a step (no trend inside the pieces): flagged, not an identity player
    # (the address range is kept), so its weight is (1 - IDENTITY_SHARE) * 1 / 1.
    step = OWNER + BACK + HIRED + [x + 0.5 for x in HIRED]
    tested, [flag] = detect(step, devices, ips)
    p = 2 / math.comb(40, 20)
    assert (tested, flag.segment, flag.identity, flag.kinds) == (1, (20, 40), False, ("device",))
    assert flag.weight == pytest.approx(1 - IDENTITY_SHARE)
    assert flag.p == pytest.approx(p, rel=1e-9)
    assert flag.q == pytest.approx(p / 0.1, rel=1e-9)


def test_weights_split_between_identity_players_and_the_others() -> None:
    devices = ["d1"] * 10 + ["d2"] * 10
    moved = [HOME.format(1)] * 10 + [AWAY.format(1)] * 10
    stayed = [HOME.format(1)] * 20
    values = OWNER + HIRED
    result = detect_boosting(
        {"moved": series("moved", values), "stayed": series("stayed", values)},
        sessions("moved", devices, moved) + sessions("stayed", devices, stayed),
        min_segment=5,
        window=5,
    )
    # m = 2, one identity player: w = 0.9 * 2 / 1 and 0.1 * 2 / 1. Both have p = 2 / C(20, 10);
    # BH over p / w: 'moved' ranks first (p / 1.8), 'stayed' second (q = (p / 0.2) * 2 / 2).
    p = 2 / math.comb(20, 10)
    assert result.family_size == 2
    assert [(f.player, f.identity) for f in result.flags] == [("moved", True), ("stayed", False)]
    moved_flag, stayed_flag = result.flags
    assert moved_flag.weight == pytest.approx(1.8)
    assert stayed_flag.weight == pytest.approx(0.2)
    assert moved_flag.q == pytest.approx(p / 1.8 * 2, rel=1e-9)
    assert stayed_flag.q == pytest.approx(p / 0.2, rel=1e-9)


def test_no_session_change_means_not_tested() -> None:
    # A big step on one device and one address: nothing changed hands, nothing is tested.
    tested, flags = detect(OWNER + HIRED, ["d1"] * 20, [HOME.format(1)] * 20)
    assert (tested, flags) == (0, ())


def test_a_change_too_near_an_end_leaves_no_segment() -> None:
    # A new device for the last 3 games: neither side of it has min_segment = 5 games.
    devices = ["d1"] * 17 + ["d2"] * 3
    ips = [HOME.format(1)] * 17 + [AWAY.format(1)] * 3
    tested, flags = detect(OWNER + HIRED, devices, ips)
    assert (tested, flags) == (0, ())


def test_a_change_near_the_start_still_bounds_a_segment() -> None:
    # The hired player from game 3: [3, 20) has 17 games and the rest 3, too few; with the
    # owner back for the last 5 games the hired block [3, 15) is tested (8 games outside).
    devices = ["d1"] * 3 + ["d2"] * 12 + ["d1"] * 5
    ips = [HOME.format(1)] * 3 + [AWAY.format(1)] * 12 + [HOME.format(2)] * 5
    values = OWNER[:3] + HIRED + [20.5, 10.5] + OWNER[3:8]
    tested, [flag] = detect(values, devices, ips)
    assert (tested, flag.segment, flag.identity, flag.splits) == (1, (3, 15), True, 1)
    assert flag.p == pytest.approx(1 / math.comb(20, 12), rel=1e-9)


def test_the_owners_games_before_the_window_make_a_late_owner_testable() -> None:
    # The owner played 10 games the week before (history) and 3 in the window before a hired
    # player took over for 10. The window alone leaves 3 games outside the hired block, too
    # few; with the history 13 are outside, and the block [13, 23) is tested on its own (the
    # segment [0, 13) starts before the window). The hired games hold ranks 14..23.
    devices = ["d1"] * 13 + ["d2"] * 10
    ips = [HOME.format(1)] * 13 + [AWAY.format(1)] * 10
    values = OWNER + BACK[:3] + HIRED
    window = series("acc", values)[10:]
    alone = detect_boosting(
        {"acc": window}, sessions("acc", devices, ips)[10:], min_segment=5, window=5
    )
    assert (alone.family_size, alone.flags) == (0, ())

    result = detect_boosting(
        {"acc": series("acc", values)},
        sessions("acc", devices, ips),
        history={"acc": 10},
        min_segment=5,
        window=5,
    )

    p = 1 / math.comb(23, 10)
    [flag] = result.flags
    assert result.family_size == 1
    assert (flag.segment, flag.change_index, flag.change_game, flag.history) == (
        (13, 23),
        13,
        "acc-013",
        10,
    )
    assert (flag.games, flag.splits, flag.identity) == (23, 1, True)
    assert flag.p == pytest.approx(p, rel=1e-9)
    assert flag.q == pytest.approx(p / 0.9, rel=1e-9)
    assert flag.before_mean == pytest.approx((5.5 + 0.35 + 0.85 + 0.15) / 13)


def test_a_block_in_the_history_is_never_a_hypothesis() -> None:
    # Someone else played the account the week before (history: d2, away); in the window the
    # owner plays at home (d1), then on a new phone elsewhere (d3) without playing better.
    # Every segment starting in the window changes hands, none is better: nothing is flagged.
    devices = ["d2"] * 10 + ["d1"] * 10 + ["d3"] * 10
    ips = [AWAY.format(1)] * 10 + [HOME.format(1)] * 10 + ["192.0.2.1"] * 10
    values = HIRED + OWNER + BACK
    given = {"acc": series("acc", values)}
    played = sessions("acc", devices, ips)

    result = detect_boosting(given, played, history={"acc": 10}, min_segment=5, window=5)
    assert (result.family_size, result.flags) == (1, ())
    # The same games all in the window: the block [0, 10) is the hired player's.
    [flag] = detect_boosting(given, played, min_segment=5, window=5).flags
    assert (flag.segment, flag.history) == ((0, 10), 0)


def test_a_block_that_keeps_the_address_range_is_compared_within_the_window() -> None:
    # A new phone at home (the address range kept) and better games on it: not someone
    # else's sessions, so the week before is left out (a slow improver's earlier weeks would
    # make any later block look better). With 3 games of the week before the phone, nothing
    # is left to compare with; with 5 the window's own test decides.
    history = {"acc": 10}
    devices = ["d1"] * 13 + ["d2"] * 10
    ips = [HOME.format(1)] * 23
    late = detect_boosting(
        {"acc": series("acc", OWNER + BACK[:3] + HIRED)},
        sessions("acc", devices, ips),
        history=history,
        min_segment=5,
        window=5,
    )
    assert (late.family_size, late.flags) == (0, ())

    devices = ["d1"] * 15 + ["d2"] * 10
    ips = [HOME.format(1)] * 25
    result = detect_boosting(
        {"acc": series("acc", OWNER + BACK[:5] + HIRED)},
        sessions("acc", devices, ips),
        history=history,
        min_segment=5,
        window=5,
    )
    # Within the window: segments [0, 5) and [5, 15), J = 2; the hired games hold the top
    # 10 ranks of 15; one player, not an identity player: w = 1 - IDENTITY_SHARE.
    p = 2 / math.comb(15, 10)
    [flag] = result.flags
    assert (flag.segment, flag.change_index, flag.change_game) == ((5, 15), 5, "acc-015")
    assert (flag.history, flag.games, flag.identity, flag.splits) == (0, 15, False, 2)
    assert flag.p == pytest.approx(p, rel=1e-9)
    assert flag.q == pytest.approx(p / 0.1, rel=1e-9)


def test_a_window_too_short_is_not_tested_whatever_its_history() -> None:
    # 9 games in the window (< 2 * min_segment) after 20 of history: not tested.
    devices = ["d1"] * 20 + ["d2"] * 9
    ips = [HOME.format(1)] * 20 + [AWAY.format(1)] * 9
    values = OWNER + BACK + HIRED[:9]
    result = detect_boosting(
        {"acc": series("acc", values)},
        sessions("acc", devices, ips),
        history={"acc": 20},
        min_segment=5,
        window=5,
    )
    assert (result.family_size, result.flags) == (0, ())


def test_a_block_on_sessions_seen_the_week_before_does_not_change_hands() -> None:
    # The owner's phone (d1, home) and tablet (tab, another range), both used the week
    # before. In the window alone the tablet's block looks like someone else's sessions;
    # the history shows they are the owner's: tested on the window alone, not as an
    # identity player (w = 1 - IDENTITY_SHARE).
    tablet = "192.0.2.9"
    devices = ["d1"] * 5 + ["tab"] * 5 + ["d1"] * 10 + ["tab"] * 10
    ips = [HOME.format(1)] * 5 + [tablet] * 5 + [HOME.format(1)] * 10 + [tablet] * 10
    given = {"acc": series("acc", OWNER + BACK + HIRED)}
    played = sessions("acc", devices, ips)

    [flag] = detect_boosting(given, played, history={"acc": 10}, min_segment=5, window=5).flags

    p = 2 / math.comb(20, 10)
    assert (flag.segment, flag.history, flag.games, flag.identity) == ((10, 20), 0, 20, False)
    assert flag.weight == pytest.approx(1 - IDENTITY_SHARE)
    assert flag.p == pytest.approx(p, rel=1e-9)
    # Without the week before, the tablet's block changes hands.
    window = {"acc": given["acc"][10:]}
    [alone] = detect_boosting(window, played[10:], min_segment=5, window=5).flags
    assert (alone.segment, alone.identity, alone.weight) == ((10, 20), True, IDENTITY_SHARE)
