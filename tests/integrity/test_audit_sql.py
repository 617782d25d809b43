"""Co-seating and shared sessions counted in SQL (PostgreSQL) equal the same detectors in
Python on the same window (co-seating: the same flags — p, q, expected, games, hours —
family size and tested pairs), and the whole database audit, which reads only what point
flow and boosting can test, equals the in-memory audit (on random weeks too:
tests/integrity/test_audit_sql_random.py); outside a transaction the audit counts co-seating
on a second connection, and a read that stops early leaves the connection and a caller's
transaction usable."""

import contextlib
import threading
from datetime import date, datetime
from typing import Any

import pytest
from django.db import connection, transaction
from django.db.models import F
from django.db.models.functions import ExtractDay, Mod
from psycopg import pq

from accounts.models import Player
from core.domain.clock import TOUR_TZ
from integrity.domain.audit import AuditParams, audit, observations, tables_from
from integrity.domain.coseating import coseating_from_counts, detect_coseating
from integrity.domain.sessions import detect_sessions
from integrity.models import AuditRun, Flag
from integrity.services import audits
from integrity.services.audits import audit_event, day_window
from integrity.simulation import Season, simulate_season
from integrity.sql import (
    audit_rows,
    coseating_sql,
    sessions_sql,
    streamed,
    tables_of,
    window_players,
)
from tests.integrity.conftest import SMALL_WEEK, busiest, event_window
from tournaments.models import Event, Seat
from tournaments.models import Season as SeasonRow

pytestmark = [pytest.mark.django_db]


def _work_tables() -> list[str]:
    """The co-seating work tables left in the database (none once an audit returns)."""
    with connection.cursor() as cursor:
        cursor.execute(r"SELECT relname FROM pg_class WHERE relname LIKE 'coseating\_%'")
        return [name for (name,) in cursor.fetchall()]


@pytest.mark.parametrize(
    ("params", "cap"),
    [
        (AuditParams(), 5_000_000),
        (AuditParams(), 0),
        (AuditParams(q=0.5, min_games=5, min_common_hours=1), 5_000_000),
        (AuditParams(q=0.9, min_games=40, min_common_hours=4), 5_000_000),
    ],
)
def test_sql_counting_equals_python_counting_on_a_simulated_week(
    simulated: tuple[Season, Event], params: AuditParams, cap: int
) -> None:
    _, event = simulated
    window = {"window_start": event.starts_at, "window_end": event.ends_at}
    tables, _ = observations(audit_rows(**window, event=event))
    python = detect_coseating(
        tables,
        q=params.q,
        min_games=params.min_games,
        min_common_hours=params.min_common_hours,
        exact_family_cap=cap,
    )

    sql = coseating_sql(**window, event=event, params=params, exact_family_cap=cap)

    assert sql == python
    assert sql.flags
    assert sql.family_size_exact is (cap > 0)
    assert _work_tables() == []


def test_pairs_are_counted_on_two_columns_when_player_ids_are_too_large_to_pack(
    simulated: tuple[Season, Event], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, event = simulated
    start, end = event.starts_at, event.ends_at
    params = AuditParams(q=0.5, min_games=5, min_common_hours=1)
    packed = coseating_sql(window_start=start, window_end=end, event=event, params=params)
    monkeypatch.setattr("integrity.sql.coseating._PACKED_BELOW", 1)

    unpacked = coseating_sql(window_start=start, window_end=end, event=event, params=params)

    assert unpacked == packed
    assert unpacked.tested > 0
    assert unpacked.flags


def _voided_farm_account(simulated: tuple[Season, Event]) -> tuple[str, datetime, datetime]:
    """One farm account's seats voided (a sanction: its tables lose a seat on both paths),
    and a window of the week's first four days."""
    season, event = simulated
    [farm] = season.labels.farms
    Seat.objects.filter(player__external_id=farm[0], event=event).update(voided=True)
    return farm[0], *day_window(date(2021, 1, 4), date(2021, 1, 7))


def test_the_tables_of_some_players_are_the_window_tables_they_sat_at(
    simulated: tuple[Season, Event],
) -> None:
    season, event = simulated
    voided, start, end = _voided_farm_account(simulated)
    [farm] = season.labels.farms
    for window in (event_window(event), {"window_start": start, "window_end": end}):
        tables, _ = observations(audit_rows(**window))
        chosen = {table.players[0] for table in tables[::9]} | {farm[1]}
        ids = Player.objects.filter(external_id__in=chosen).values_list("pk", flat=True)

        loaded = tables_from(tables_of(list(ids), **window))

        assert loaded == [table for table in tables if chosen & set(table.players)]
        assert 0 < len(loaded) < len(tables)
        # The farm's voided account is not at its partner's tables, which are one seat short.
        assert all(voided not in table.players for table in loaded)
        assert any(len(table.players) == 3 and farm[1] in table.players for table in loaded)


def test_window_audit_and_voided_seats_count_as_in_python(
    simulated: tuple[Season, Event],
) -> None:
    voided, start, end = _voided_farm_account(simulated)
    tables, _ = observations(audit_rows(window_start=start, window_end=end))
    params = AuditParams(q=0.5, min_games=5)
    python = detect_coseating(tables, q=0.5, min_games=5)

    sql = coseating_sql(window_start=start, window_end=end, params=params)

    assert sql == python
    assert sql.tested > 0
    assert all(voided not in flag.players for flag in sql.flags)


def test_a_failed_count_leaves_no_work_tables(
    simulated: tuple[Season, Event], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, event = simulated

    def fail(*args: object, **kwargs: object) -> None:
        raise RuntimeError("stop after counting")

    monkeypatch.setattr("integrity.sql.coseating.coseating_from_counts", fail)

    with pytest.raises(RuntimeError, match="stop after counting"):
        coseating_sql(window_start=event.starts_at, window_end=event.ends_at, event=event)

    assert _work_tables() == []


@pytest.mark.parametrize("count", [coseating_sql, sessions_sql])
def test_the_counting_settings_do_not_outlive_the_call(
    simulated: tuple[Season, Event], count: Any
) -> None:
    _, event = simulated
    names = (
        "jit",
        "default_statistics_target",
        "work_mem",
        "enable_hashagg",
        "max_parallel_workers_per_gather",
    )
    query = "SELECT " + ", ".join(f"current_setting('{name}')" for name in names)
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL work_mem = '3MB'")
        cursor.execute("SET LOCAL jit = on")
        cursor.execute("SET LOCAL max_parallel_workers_per_gather = 5")
        cursor.execute(query)
        before = cursor.fetchone()

        count(window_start=event.starts_at, window_end=event.ends_at, event=event)

        cursor.execute(query)
        assert cursor.fetchone() == before
    assert before[0] == "on"
    assert before[2] == "3MB"
    assert before[4] == "5"


@pytest.mark.parametrize(("configured", "expected"), [(None, "0"), (3, "3")])
def test_the_count_gets_the_configured_parallel_workers(
    simulated: tuple[Season, Event],
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
    configured: int | None,
    expected: str,
) -> None:
    _, event = simulated
    if configured is not None:
        settings.INTEGRITY_AUDIT_PARALLEL_WORKERS = configured
    seen = []
    tested = coseating_from_counts

    def spy(*args: Any, **kwargs: Any) -> Any:
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('max_parallel_workers_per_gather')")
            seen.append(cursor.fetchone()[0])
        return tested(*args, **kwargs)

    monkeypatch.setattr("integrity.sql.coseating.coseating_from_counts", spy)

    coseating_sql(window_start=event.starts_at, window_end=event.ends_at, event=event)

    assert seen == [expected]


def test_an_empty_window_flags_nothing(simulated: tuple[Season, Event]) -> None:
    start, end = day_window(date(2022, 1, 3), date(2022, 1, 9))

    result = coseating_sql(window_start=start, window_end=end)

    assert (result.flags, result.family_size, result.family_size_exact, result.tested) == (
        (),
        0,
        True,
        0,
    )


def test_the_database_audit_writes_the_python_counted_coseating_flags(
    simulated: tuple[Season, Event],
) -> None:
    _, event = simulated
    tables, _ = observations(
        audit_rows(window_start=event.starts_at, window_end=event.ends_at, event=event)
    )
    python = detect_coseating(tables)

    run = audit_event(event=event)

    rows = Flag.objects.filter(run=run, detector="coseating").order_by("p_value", "player_keys")
    assert [(tuple(r.player_keys), r.statistic, r.p_value, r.q_value) for r in rows] == [
        (f.players, f.shared, f.p, f.q) for f in python.flags
    ]
    assert python.flags
    assert (run.stats["pairs_tested"], run.stats["family_size"]) == (
        python.tested,
        python.family_size,
    )
    assert "coseating" in run.stats["seconds"]


@pytest.mark.parametrize("max_degree", [8, 2])
def test_sql_sessions_equal_python_sessions_on_a_simulated_week(
    simulated: tuple[Season, Event], max_degree: int
) -> None:
    _, event = simulated
    window = {"window_start": event.starts_at, "window_end": event.ends_at}
    _, sessions = observations(audit_rows(**window, event=event))
    python = detect_sessions(sessions, max_degree=max_degree)

    sql = sessions_sql(**window, event=event, params=AuditParams(max_degree=max_degree))

    assert sql == python
    assert sql.clusters
    assert sql.links
    assert sql.dropped_ips or sql.dropped_devices


def test_window_sessions_without_voided_seats_equal_python_sessions(
    simulated: tuple[Season, Event],
) -> None:
    voided, start, end = _voided_farm_account(simulated)
    _, sessions = observations(audit_rows(window_start=start, window_end=end))
    python = detect_sessions(sessions)

    sql = sessions_sql(window_start=start, window_end=end)

    assert sql == python
    assert all(voided not in cluster.players for cluster in sql.clusters)
    assert sql.links


def _boosted(simulated: tuple[Season, Event], *, lone: bool) -> str:
    """A booster planted in the week's busiest player: the second half of the week played on
    a new device and 100 points a game better. With ``lone``, three of its first games are
    left with its seat only (the others voided): lone games, which are no tables, so they
    must not enter its series or its skill."""
    _, event = simulated
    booster = busiest(event)
    seats = Seat.objects.filter(player__external_id=booster, event=event).order_by("ended_at")
    games = list(seats.values_list("game_id", flat=True))
    later = Seat.objects.filter(pk__in=seats[len(games) // 2 :].values("pk"))
    later.update(device="d-boosted", score=F("score") + 100)
    if lone:
        Seat.objects.filter(game_id__in=games[3:6]).exclude(player__external_id=booster).update(
            voided=True
        )
    return booster


@pytest.mark.parametrize(
    "params",
    [
        AuditParams(),
        AuditParams(
            q=0.5, pair_q=0.5, min_shared_wins=2, min_segment=5, window=5, min_hour_shift=3.0
        ),
        AuditParams(q=0.3, pair_q=0.3, min_shared_wins=1, min_segment=8, window=12),
    ],
)
@pytest.mark.parametrize("lone", [False, True], ids=["all tables", "lone games"])
def test_the_database_audit_finds_what_the_in_memory_audit_finds(
    simulated: tuple[Season, Event], params: AuditParams, lone: bool
) -> None:
    _, event = simulated
    booster = _boosted(simulated, lone=lone)
    window = event_window(event)
    tables, sessions = observations(audit_rows(**window))
    memory = audit(tables, sessions, params)

    players = window_players(**window, params=params)
    sql = audits._audit_in_sql(window, params, None)

    assert sql.flags == memory.flags
    assert (
        sql.coseating,
        sql.pointflow,
        sql.sessions,
        sql.boosting,
        sql.together,
        sql.fed,
        sql.kept,
    ) == (
        memory.coseating,
        memory.pointflow,
        memory.sessions,
        memory.boosting,
        memory.together,
        memory.fed,
        memory.kept,
    )
    # "Better together", the fed-account test and the cards kept tested the co-seating pairs
    # from the tables the database loaded.
    assert memory.together.family_size > 0
    assert memory.fed.family_size > 0
    assert memory.kept.family_size > 0
    assert (sql.tables, sql.seats, sql.players) == (memory.tables, memory.seats, memory.players)
    assert memory.pointflow.flags
    assert booster in {flag.player for flag in memory.boosting.flags}
    # Boosting read the seats of some players only, the flagged ones among them.
    assert memory.boosting.family_size <= len(players.boosting) < memory.players
    flagged = Player.objects.filter(external_id__in=[f.player for f in memory.boosting.flags])
    assert set(flagged.values_list("pk", flat=True)) <= set(players.boosting)
    assert Seat.objects.filter(event=event, voided=True).count() == (9 if lone else 0)


def test_the_database_audit_weighs_a_players_days_as_the_in_memory_audit_does(
    simulated: tuple[Season, Event],
) -> None:
    # The small week's family is estimated from 5 others, not the default 100; every
    # player has good and bad days: 60 points more on every other tour day, by player.
    params = AuditParams(day_family=5)
    _, event = simulated
    booster = _boosted(simulated, lone=False)
    day = ExtractDay("ended_at", tzinfo=TOUR_TZ)
    Seat.objects.filter(event=event).update(score=F("score") + 60 * Mod(F("player_id") + day, 2))
    window = event_window(event)
    tables, sessions = observations(audit_rows(**window))
    memory = audit(tables, sessions, params)

    sql = audits._audit_in_sql(window, params, None)

    assert sql.boosting == memory.boosting
    assert memory.boosting.family_size > 5
    [flag] = [f for f in memory.boosting.flags if f.player == booster]
    # Its block is the second half of the week, whole days: weighed at the others' day ICC.
    assert flag.day_effect > 1.0
    default = audit(tables, sessions, AuditParams())
    [alone] = [f for f in default.boosting.flags if f.player == booster]
    assert alone.day_effect == 1.0
    assert flag.z < alone.z


def _flag_rows(run_pk: int) -> list[tuple[str, tuple[str, ...], float | None, float | None]]:
    rows = Flag.objects.filter(run_id=run_pk).order_by("detector", "player_keys", "p_value")
    return [(r.detector, tuple(r.player_keys), r.p_value, r.q_value) for r in rows]


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_sql_counts_on_another_connection_during_the_load(
    simulated: tuple[Season, Event], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, event = simulated
    threads: list[int] = []
    count = audits._pairs_alongside

    def spy(*args: Any) -> Any:
        threads.append(threading.get_ident())
        return count(*args)

    monkeypatch.setattr("integrity.services.audits._pairs_alongside", spy)
    with transaction.atomic():
        inside = audit_event(event=event)
        counted_inside = _flag_rows(inside.pk)
    assert threads == []

    outside = audit_event(event=event)

    assert len(threads) == 1
    assert threads[0] != threading.get_ident()
    assert outside.pk == inside.pk
    assert _flag_rows(outside.pk) == counted_inside
    assert {detector for detector, *_ in counted_inside} >= {"coseating", "pointflow", "sessions"}
    assert (outside.stats["pairs_tested"], outside.stats["family_size"]) == (
        inside.stats["pairs_tested"],
        inside.stats["family_size"],
    )
    assert _work_tables() == []


@pytest.mark.django_db(transaction=True)
def test_a_failed_summary_stops_the_pairs_alongside(
    simulated: tuple[Season, Event], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, event = simulated
    summarise = window_players

    def fail(**kwargs: Any) -> Any:
        summarise(**kwargs)
        raise RuntimeError("summary failed")

    monkeypatch.setattr("integrity.services.audits.window_players", fail)
    errors: list[BaseException] = []

    def audit() -> None:
        try:
            audit_event(event=event)
        except BaseException as exc:  # noqa: BLE001 - asserted below
            errors.append(exc)
        finally:
            connection.close()

    auditing = threading.Thread(target=audit, daemon=True)
    auditing.start()
    auditing.join(timeout=120)

    assert not auditing.is_alive()  # the count alongside did not wait for the hour activity
    assert [repr(error) for error in errors] == ["RuntimeError('summary failed')"]
    run = AuditRun.objects.get(key=f"event:{event.code}")
    assert (run.status, run.error) == (AuditRun.Status.FAILED, "RuntimeError('summary failed')")
    assert _work_tables() == []
    assert Flag.objects.count() == 0


@pytest.mark.parametrize(
    "in_transaction",
    [
        pytest.param(True, id="in a transaction"),
        pytest.param(False, id="in autocommit", marks=pytest.mark.django_db(transaction=True)),
    ],
)
def test_an_audit_that_stops_reading_leaves_the_connection_usable(
    simulated: tuple[Season, Event], monkeypatch: pytest.MonkeyPatch, in_transaction: bool
) -> None:
    _, event = simulated

    def fail(rows: Any) -> Any:
        if next(iter(rows), None) is None:  # the history: no week before
            return []
        raise RuntimeError("stop while reading")

    monkeypatch.setattr("integrity.services.audits.tables_from", fail)

    with pytest.raises(RuntimeError, match="stop while reading"):
        audit_event(event=event)

    assert connection.in_atomic_block is in_transaction
    with connection.cursor() as cursor:  # the connection runs this query: it is free
        cursor.execute(
            "SELECT (SELECT state FROM pg_stat_activity WHERE pid = pg_backend_pid()), "
            "(SELECT count(*) FROM pg_cursors)"
        )
        assert cursor.fetchone() == ("active", 0)
    run = AuditRun.objects.get(key=f"event:{event.code}")
    assert (run.status, run.error) == (
        AuditRun.Status.FAILED,
        "RuntimeError('stop while reading')",
    )
    assert Flag.objects.count() == 0


@pytest.mark.parametrize("atomic", [True, False], ids=["in a transaction", "in autocommit"])
@pytest.mark.django_db(transaction=True)
def test_a_stream_closed_mid_query_is_cancelled_and_the_connection_stays_usable(
    atomic: bool, settings: Any
) -> None:
    settings.INTEGRITY_CHUNK_SIZE = 2
    slow = "SELECT g, pg_sleep(0.005) IS NULL FROM generate_series(1, 2000) AS g"
    with transaction.atomic() if atomic else contextlib.nullcontext():
        season = SeasonRow.objects.create(year=2998, name="kept", starts_on=date(2998, 1, 1))
        with contextlib.closing(streamed(slow, [])) as rows:
            assert tuple(next(rows)) == (1, False)
        # Still in the caller's transaction (or back in autocommit), which still works.
        assert connection.in_atomic_block is atomic
        assert SeasonRow.objects.filter(pk=season.pk).exists()
    assert connection.connection.info.transaction_status == pq.TransactionStatus.IDLE
    assert SeasonRow.objects.get(pk=season.pk).name == "kept"


def test_the_database_reads_the_cards_each_seat_kept(simulated: tuple[Season, Event]) -> None:
    _, event = simulated
    window = event_window(event)
    kept = {
        record["id"]: tuple(len(seat["hand"]) for seat in record["seats"])
        for record in simulate_season(**SMALL_WEEK).records
    }
    tables, _ = observations(audit_rows(**window))
    some = Player.objects.filter(external_id__in=tables[0].players).values_list("pk", flat=True)
    loaded = tables_from(tables_of(list(some), **window))

    assert {t.game_id: t.cards for t in tables} == {t.game_id: kept[t.game_id] for t in tables}
    assert {t.game_id: t.cards for t in loaded} == {t.game_id: kept[t.game_id] for t in loaded}
    assert tables[0] in loaded
    # An empty hand (a winner who went out) is 0 cards, not unknown.
    assert sum(t.cards.count(0) for t in tables) == sum(c.count(0) for c in kept.values())
