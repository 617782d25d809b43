"""Audits (SPEC §7): a real audit over simulated games ingested for real finds the injected
farm; re-running a key replaces its flags; cases are opened once, updated, never reopened by
statistics; the clean-audit hook the title review uses."""

import json
from datetime import date, timedelta

import pytest

from accounts.models import Player, User
from core.errors import ServiceError
from integrity.domain.kept import KeptFlag
from integrity.models import AuditRun, Case, CaseEvent, CasePlayer, Flag
from integrity.services.audits import (
    LONGEST_WINDOW,
    audit_event,
    audit_run,
    day_window,
    event_audit_is_clean,
)
from integrity.services.cases import case_dismiss
from integrity.services.findings import case_key, flag_row
from integrity.simulation import Season
from integrity.sql import audit_rows
from tournaments.models import Event, Seat

pytestmark = pytest.mark.django_db


def _flags(run: AuditRun) -> list[tuple[str, tuple[str, ...], float | None, str]]:
    return sorted(
        (
            flag.detector,
            tuple(flag.player_keys),
            flag.statistic,
            json.dumps(flag.evidence, sort_keys=True),
        )
        for flag in Flag.objects.filter(run=run)
    )


def _case_with(players: set[str]) -> Case | None:
    for case in Case.objects.all():
        members = {cp.player.external_id for cp in CasePlayer.objects.filter(case=case)}
        if len(players & members) >= 2:
            return case
    return None


def test_an_audit_of_ingested_simulated_games_finds_the_injected_farm(
    simulated: tuple[Season, Event],
) -> None:
    season, event = simulated
    [farm] = season.labels.farms

    run = audit_event(event=event)

    assert (run.key, run.status, run.attempts, run.event) == (
        f"event:{event.code}",
        "completed",
        1,
        event,
    )
    games = Seat.objects.filter(event=event).values("game").distinct().count()
    assert run.stats["tables"] == games
    assert run.stats["seats"] == Seat.objects.filter(event=event).count()
    assert set(run.stats["flags"]) == {
        "coseating",
        "pointflow",
        "sessions",
        "same_table",
        "boosting",
        "softplay",
        "together",
        "fed",
        "kept",
    }
    case = _case_with(set(farm))
    assert case is not None
    assert case.status == "open"
    assert {"sessions"} <= set(case.families)
    assert case.key == case_key(
        [cp.player.external_id for cp in CasePlayer.objects.filter(case=case)]
    )
    # The farm's same-table links name its accounts; those on one device are near-conclusive
    # (one hand plays both seats), those on one address only relate them (a household's too).
    links = [
        flag
        for flag in Flag.objects.filter(run=run, detector="same_table")
        if set(flag.player_keys) <= set(farm)
    ]
    assert {flag.evidence["kind"] for flag in links if flag.near_conclusive} == {"device"}
    assert all(flag.near_conclusive == (flag.evidence["kind"] == "device") for flag in links)
    opened = CaseEvent.objects.filter(case=case, action="opened")
    assert [(e.action, e.data["run"]) for e in opened] == [("opened", run.key)]
    # Cases are ranked by score; the farm's case leads.
    assert Case.objects.order_by("-score").first() == case


def test_rerunning_a_key_replaces_its_flags_and_updates_its_cases(
    simulated: tuple[Season, Event],
) -> None:
    _, event = simulated
    first = audit_event(event=event)
    flags, cases = _flags(first), list(Case.objects.values_list("key", "score"))
    flag_count = Flag.objects.count()

    again = audit_event(event=event)

    assert again.pk == first.pk
    assert again.attempts == 2
    assert Flag.objects.count() == flag_count
    assert _flags(again) == flags
    assert len(flags) == len(set(flags))
    assert list(Case.objects.values_list("key", "score")) == cases
    assert CaseEvent.objects.filter(action="opened").count() == len(cases)
    assert AuditRun.objects.count() == 1
    # Every case keeps exactly the new run's flags.
    for case in Case.objects.all():
        assert set(case.flags.values_list("run_id", flat=True)) == {first.pk}


def test_a_decided_case_is_not_reopened_by_a_later_audit(
    simulated: tuple[Season, Event], reviewer: User
) -> None:
    _, event = simulated
    audit_event(event=event)
    case = Case.objects.order_by("-score").first()
    assert case is not None
    case_dismiss(case=case, by=reviewer, reason="household, checked")

    audit_event(event=event)
    audit_event(event=event)

    case.refresh_from_db()
    assert case.status == "dismissed"
    assert Case.objects.filter(key=case.key).count() == 1
    assert list(case.events.values_list("action", flat=True)) == [
        "opened",
        "dismissed",
        "flagged_again",
    ]
    assert case.flags.exists()


def test_a_window_audit_reads_the_seats_of_overlapping_events(
    simulated: tuple[Season, Event],
) -> None:
    _, event = simulated
    start, end = day_window(date(2021, 1, 4), date(2021, 1, 5))
    rows = list(audit_rows(window_start=start, window_end=end))
    expected = Seat.objects.filter(ended_at__gte=start, ended_at__lte=end).count()
    assert len(rows) == expected > 0
    assert [row[1] for row in rows] == sorted(row[1] for row in rows)
    run = audit_run(key="window:2021-01-04:2021-01-05", window_start=start, window_end=end)
    assert run.event is None
    assert run.stats["seats"] == expected


def test_voided_seats_are_left_out(simulated: tuple[Season, Event]) -> None:
    _, event = simulated
    player = Player.objects.order_by("external_id").first()
    assert player is not None
    Seat.objects.filter(player=player).update(voided=True)
    rows = list(audit_rows(window_start=event.starts_at, window_end=event.ends_at, event=event))
    assert player.external_id not in {row[2] for row in rows}
    assert len(rows) == Seat.objects.filter(event=event, voided=False).count()


def test_bad_parameters_write_nothing(week: Event) -> None:
    event = week
    refused: list[tuple[dict[str, float], str]] = [
        ({"q_level": 0.05}, "unknown audit parameter"),
        ({"q": 2}, "q must lie between 0 and 1"),
        ({"pair_q": 0}, "pair_q must lie between 0 and 1"),
        ({"history_days": -1}, "history_days must be 0 or more"),
    ]
    for params, message in refused:
        with pytest.raises(ServiceError, match=message):
            audit_run(
                key="x", window_start=event.starts_at, window_end=event.ends_at, params=params
            )
    with pytest.raises(ServiceError, match="spans at most 2000 days"):
        audit_run(
            key="x",
            window_start=event.ends_at - LONGEST_WINDOW - timedelta(seconds=1),
            window_end=event.ends_at,
        )
    assert (AuditRun.objects.count(), Flag.objects.count(), Case.objects.count()) == (0, 0, 0)


def test_parameters_are_recorded_and_change_the_family(simulated: tuple[Season, Event]) -> None:
    _, event = simulated
    run = audit_run(
        key="strict",
        window_start=event.starts_at,
        window_end=event.ends_at,
        event=event,
        params={"q": 0.001, "max_degree": 4},
    )
    assert (
        run.params["q"],
        run.params["pair_q"],
        run.params["max_degree"],
        run.params["min_games"],
    ) == (0.001, 0.01, 4, 10)


def test_the_clean_audit_hook(simulated: tuple[Season, Event], reviewer: User) -> None:
    season, event = simulated
    farmer = Player.objects.get(external_id=season.labels.farms[0][0])
    honest = Player.objects.exclude(
        external_id__in=[p for group in season.labels.farms for p in group]
    ).first()
    assert event_audit_is_clean(event) is False
    assert event_audit_is_clean(event, player=honest) is False

    audit_event(event=event)

    assert event_audit_is_clean(event) is True
    in_open_case = CasePlayer.objects.filter(case__status="open").values_list(
        "player_id", flat=True
    )
    assert farmer.pk in set(in_open_case)
    assert event_audit_is_clean(event, player=farmer) is False
    clean = Player.objects.exclude(pk__in=in_open_case).first()
    assert clean is not None
    assert event_audit_is_clean(event, player=clean) is True
    # The title review's hold (titles.services.player_is_held) reads the same open cases.
    from titles.services import player_is_held

    assert player_is_held(farmer) is True
    assert player_is_held(clean) is False


def test_a_cards_kept_flag_row_keeps_the_weeks_styles() -> None:
    flag = KeptFlag(
        players=("a", "b"),
        feeder="b",
        partner="a",
        games=17,
        kept=5.6,
        expected=1.3,
        strengths=(1.0, -0.5),
        style=0.36,
        z=4.4,
        shared=49,
        weight=1.1,
        p=8.8e-6,
        q=2.4e-5,
        strength=4.6,
    )
    run = AuditRun(key="window:2021-01-04:2021-01-10", params={"history_days": 7})

    row = flag_row(run, flag, {"kept": "kept-3"})

    assert (row.detector, row.version, row.player_keys, row.statistic) == (
        "kept",
        "kept-3",
        ["a", "b"],
        4.4,
    )
    assert row.evidence == {
        "feeder": "b",
        "partner": "a",
        "games": 17,
        "kept": 5.6,
        "expected": 1.3,
        "strengths": [1.0, -0.5],
        "style": 0.36,
        "shared": 49,
        "weight": 1.1,
        "history_days": 7,
    }
    assert row.pk is None  # nothing written
