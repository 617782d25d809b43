"""Tests for the audit pipeline's pure parts (SPEC §7): seat rows to observations, the simple
skill model behind the boosting residuals, stable flag references, one audit end to end."""

from __future__ import annotations

from integrity.domain.audit import (
    AuditParams,
    SeatRow,
    audit,
    fed_of,
    flag_ref,
    observations,
    pointflow_of,
    skill_expectation,
    together_of,
    window_skills,
)
from integrity.domain.data import SessionObs, TableObs
from integrity.domain.sessions import SameTableLink

from .sim import honest_tables, seat_together


def test_a_game_with_one_seat_left_is_no_table_but_its_session_counts() -> None:
    rows = [
        ("g1", 450_000, "a", 0, 30, "203.0.113.1", "d-1", 0),
        ("g1", 450_000, "b", 30, -30, "203.0.113.2", "d-2", 2),
        ("g2", 450_001, "c", 7, 0, "203.0.113.3", "d-3", 1),
    ]

    tables, sessions = observations(rows)

    assert [table.game_id for table in tables] == ["g1"]
    assert [(s.game_id, s.player) for s in sessions] == [("g1", "a"), ("g1", "b"), ("g2", "c")]


def test_rows_become_tables_and_sessions() -> None:
    rows = [
        ("g1", 450_000, "a", 0, 92, "203.0.113.1", "d-1", 0),
        ("g1", 450_000, "b", 12, -12, None, "", 2),
        ("g1", 450_000, "c", 30, -30, "203.0.113.3", None, 3),
        ("g1", 450_000, "d", 50, -50, "203.0.113.4", "d-4", 1),
        ("g2", 450_001, "b", 5, 15, "203.0.113.2", "d-2", 1),
        ("g2", 450_001, "a", 5, 15, "203.0.113.1", "d-1", 1),
        ("g2", 450_001, "c", 20, -20, "203.0.113.3", "d-3", 2),
    ]
    tables, sessions = observations(rows)
    assert tables == [
        TableObs(
            "g1",
            450_000,
            ("a", "b", "c", "d"),
            (0, 12, 30, 50),
            (92, -12, -30, -50),
            (0,),
            (0, 2, 3, 1),
        ),
        TableObs("g2", 450_001, ("b", "a", "c"), (5, 5, 20), (15, 15, -20), (0, 1), (1, 1, 2)),
    ]
    assert sessions[1] == SessionObs("g1", "b", "", "", 450_000)
    assert sessions[2] == SessionObs("g1", "c", "203.0.113.3", "", 450_000)
    assert [s.game_id for s in sessions] == ["g1"] * 4 + ["g2"] * 3
    assert observations([]) == ([], [])


def test_each_player_address_device_and_game_id_is_kept_once() -> None:
    def fresh(value: str) -> str:
        """A new string object equal to ``value``, as a driver returns one per row."""
        return (value + " ")[:-1]

    def row(game: str, player: str, ip: str, device: str) -> SeatRow:
        return (fresh(game), 450_000, fresh(player), 0, 0, fresh(ip), fresh(device), 0)

    rows = [
        row("g-1", "p-a", "203.0.113.1", "d-1"),
        row("g-1", "p-b", "203.0.113.2", "d-2"),
        row("g-2", "p-a", "203.0.113.1", "d-1"),
        row("g-2", "p-b", "203.0.113.2", "d-2"),
    ]
    assert rows[0][2] is not rows[2][2]
    assert rows[0][0] is not rows[1][0]

    tables, sessions = observations(rows)

    first_a, first_b, second_a, second_b = sessions
    assert second_a.player is first_a.player
    assert tables[1].players[1] is first_b.player
    assert second_a.ip is first_a.ip
    assert second_a.device is first_a.device
    assert first_b.game_id is first_a.game_id is tables[0].game_id
    assert second_b == SessionObs("g-2", "p-b", "203.0.113.2", "d-2", 450_000)


def test_expected_score_is_own_skill_minus_the_others_mean() -> None:
    tables = [
        TableObs("g1", 1, ("a", "b", "c"), (0, 10, 20), (30, -10, -20), (0,)),
        TableObs("g2", 1, ("a", "b", "c"), (10, 0, 20), (-10, 30, -20), (1,)),
    ]
    expected = skill_expectation(tables)
    # Means: a 10, b 10, c -20.
    assert expected(tables[0]) == [10 - (10 - 20) / 2, 10 - (10 - 20) / 2, -20 - (10 + 10) / 2]


def test_flag_references_are_stable() -> None:
    link = SameTableLink("g9", ("a", "b"), "device", "d-9")
    assert flag_ref(link) == "same_table:g9:a|b:device:d-9"


def test_one_audit_over_a_farm() -> None:
    tables = honest_tables(3)
    farm = ("p0007", "p0011")
    tables = seat_together(tables, farm, range(0, 1200, 40))
    sessions = [
        SessionObs(t.game_id, p, "", "d-farm" if p in farm else f"d-{p}", t.hour)
        for t in tables
        for p in t.players
    ]
    outcome = audit(tables, sessions, AuditParams())
    assert "coseating:p0007|p0011" in outcome.flags
    assert outcome.flags["sessions:p0007|p0011"].family == "sessions"
    [case] = outcome.triage.cases
    assert case.players == farm
    assert case.families == ("coseating", "sessions")
    assert (outcome.tables, outcome.seats) == (len(tables), len(sessions))
    assert set(outcome.seconds) == {
        "coseating",
        "pointflow",
        "sessions",
        "boosting",
        "together",
        "fed",
        "kept",
        "cases",
    }


def _sessions(tables: list[TableObs], farm: tuple[str, ...]) -> list[SessionObs]:
    return [
        SessionObs(t.game_id, p, "", "d-farm" if p in farm else f"d-{p}", t.hour)
        for t in tables
        for p in t.players
    ]


def test_the_pair_tests_read_the_history_for_the_windows_pairs() -> None:
    farm = ("p0007", "p0011")
    window = seat_together(honest_tables(3), farm, range(0, 1200, 40))
    before = [
        t._replace(hour=t.hour - 168)
        for t in seat_together(honest_tables(4), farm, range(0, 1200, 40))
    ]
    params = AuditParams(q=0.99, pair_q=0.99)

    outcome = audit(window, _sessions(window, farm), params, history=(before, []))
    alone = audit(window, _sessions(window, farm), params)

    # Co-seating reads the window only; the pair tests read the history of its pairs too.
    assert outcome.coseating == alone.coseating
    coseating = outcome.coseating
    assert outcome.pointflow == pointflow_of(window, coseating, params, before)
    skills = window_skills(window)
    assert outcome.together == together_of([*before, *window], coseating, params, skills)
    assert outcome.fed == fed_of([*before, *window], coseating, params)
    # The window's families, the history's games: the farm sat together 30 times in each
    # week, and each of its accounts won 8 of its tables together in the window.
    for result in (outcome, alone):
        assert (result.together.family_size, result.fed.family_size) == (2, 2)
        assert result.pointflow.family_size == 2
    assert [f.shared for f in outcome.together.flags] == [60]
    assert [f.shared for f in alone.together.flags] == [30]
    assert {f.account: f.wins for f in outcome.fed.flags} == {"p0007": 16, "p0011": 12}
    assert {f.account: f.wins for f in alone.fed.flags} == {"p0007": 8, "p0011": 8}
    shared_wins = {(f.feeder, f.beneficiary): f.shared_wins for f in outcome.pointflow.flags}
    assert shared_wins == {("p0007", "p0011"): 12, ("p0011", "p0007"): 16}


def test_the_pair_tests_are_held_at_their_own_level() -> None:
    farm = ("p0007", "p0011")
    window = seat_together(honest_tables(3), farm, range(0, 1200, 40))
    loose = audit(window, _sessions(window, farm), AuditParams(q=0.99, pair_q=0.99))
    level = 0.1
    strict = audit(window, _sessions(window, farm), AuditParams(q=0.99, pair_q=level))

    # Co-seating keeps q; point flow, "better together" and the fed account keep the flags
    # whose BH level is within pair_q (BH's step-up: the same family, a stricter cut).
    assert strict.coseating == loose.coseating
    for name in ("pointflow", "together", "fed"):
        kept = tuple(f for f in getattr(loose, name).flags if f.q <= level)
        assert tuple(getattr(strict, name).flags) == kept, name
    counts = [
        (len(getattr(loose, name).flags), len(getattr(strict, name).flags))
        for name in ("pointflow", "together", "fed")
    ]
    # The loose flags' q: point flow 0.064 and 0.16, together 0.23, the fed accounts 0.62.
    assert counts == [(2, 1), (1, 0), (2, 0)]
