"""Soft play in the database audit (issue 28): the chances stored at ingest, summed per
(actor, target) pair and kind in SQL (integrity/sql/softplay.py), equal the pure counts of the
same logs read by tournaments/domain/chances.py (integrity.domain.softplay.pair_chances), and
voided games and players drop out of both alike; the audit of a logged week with soft-playing
colluders flags them, and the honest week of the same seed raises no soft-play flag."""

import functools
from collections.abc import Iterable
from typing import Any

import pytest

from flows.ingest import games_ingest
from integrity.domain.audit import AuditParams
from integrity.domain.softplay import Chance, detect_softplay, pair_chances
from integrity.models import Case, Flag
from integrity.services.audits import audit_event, audit_run, day_window
from integrity.simulation import simulate_season
from integrity.sql import softplay_counts, softplay_sql
from tests.integrity.conftest import event_window
from tournaments.domain.chances import chances_of
from tournaments.domain.rules import PRESETS
from tournaments.models import Event, Game, Seat
from tournaments.services.corrections import (
    game_restore,
    game_void,
    player_games_restore,
    player_games_void,
)

pytestmark = [pytest.mark.django_db]

CLASSIC = PRESETS["classic"]
#: A week of 400 players played out by the engine with move logs (1,996 games): two
#: colluding pairs whose accounts spare each other and two farms of two whose feeder spares
#: the fed account (and four boosters).
PLAYERS, SEED = 400, 1
INJECTED, HONEST = 0.03, 0.0


@functools.cache
def _simulated(cheaters: float) -> tuple[Any, tuple[dict[str, Any], ...]]:
    """The labels and records of the logged week (simulated once per test run)."""
    season = simulate_season(players=PLAYERS, weeks=1, cheaters=cheaters, seed=SEED, rules=CLASSIC)
    return season.labels, tuple(season.records)


def _ingested(cheaters: float) -> tuple[Any, tuple[dict[str, Any], ...]]:
    labels, records = _simulated(cheaters)
    report = games_ingest(records=list(records), source="test")
    assert (report.ingested, report.rejected, report.conflicts) == (len(records), [], [])
    return labels, records


def _chances(records: Iterable[dict[str, Any]]) -> list[Chance]:
    return [chance for record in records for chance in chances_of(record, CLASSIC)]


def test_a_farms_feeder_spares_the_fed_account_and_not_the_other_way() -> None:
    """In the logs a farm's feeder never takes a chance against its fed account; the fed
    account takes its chances against the feeder as against anyone."""
    labels, records = _simulated(INJECTED)
    chances = _chances(records)

    def taken(actor: str, target: str) -> tuple[int, int]:
        """(chances, taken) of ``actor`` against ``target``."""
        mine = [punished for a, t, _, punished in chances if (a, t) == (actor, target)]
        return len(mine), sum(mine)

    assert [(taken(feeder, fed), taken(fed, feeder)) for fed, feeder in labels.farms] == [
        ((19, 0), (13, 9)),
        ((13, 0), (8, 4)),
    ]


@pytest.mark.parametrize("min_chances", [1, 5, 12])
def test_the_sql_counts_equal_the_pure_counts_of_the_same_logs(
    week: Event, min_chances: int
) -> None:
    _, records = _ingested(INJECTED)
    pure = pair_chances(_chances(records), min_chances=min_chances)

    sql = softplay_counts(**event_window(week), min_chances=min_chances)

    assert sql == pure
    # rows per pair and kind (punish and challenge: the classic rules have no swapping 7)
    assert len(sql) == {1: 5_897, 5: 92, 12: 2}[min_chances]
    # A window audit (every event overlapping the days) reads the same seats.
    start, end = day_window(week.starts_at.date(), week.ends_at.date())
    assert softplay_counts(window_start=start, window_end=end, min_chances=min_chances) == pure


def test_soft_play_in_sql_equals_the_pure_detector_on_the_same_logs(week: Event) -> None:
    _, records = _ingested(INJECTED)
    for params in (AuditParams(), AuditParams(q=0.2, min_chances=3)):
        sql = softplay_sql(**event_window(week), params=params)
        assert sql == detect_softplay(_chances(records), q=params.q, min_chances=params.min_chances)
        assert sql.flags


def test_voided_games_and_voided_players_drop_out_of_the_counts(week: Event) -> None:
    labels, records = _ingested(INJECTED)
    beneficiary = labels.pairs[0][0]
    # A game with chances and without the sanctioned player: voided as a whole.
    game_id = next(
        record["id"]
        for record in records
        if chances_of(record, CLASSIC)
        and beneficiary not in {seat["player"]["id"] for seat in record["seats"]}
    )
    game = Game.objects.get(record_id=game_id)
    player = Seat.objects.filter(player__external_id=beneficiary).first()
    assert player is not None
    game_void(game=game, by=None, reason="test")
    player_games_void(player=player.player, events=[week], by=None, reason="test")

    kept = [
        (actor, target, kind, punished)
        for record in records
        if record["id"] != game_id
        for actor, target, kind, punished in chances_of(record, CLASSIC)
        if beneficiary not in (actor, target)
    ]
    assert softplay_counts(**event_window(week), min_chances=1) == pair_chances(kept, min_chances=1)
    assert len(kept) < len(_chances(records))

    game_restore(game=game, by=None, reason="test")
    player_games_restore(player=player.player, events=[week], by=None, reason="test")
    assert softplay_counts(**event_window(week), min_chances=1) == pair_chances(
        _chances(records), min_chances=1
    )


def test_the_audit_of_a_logged_week_flags_the_soft_playing_colluders(week: Event) -> None:
    labels, records = _ingested(INJECTED)
    groups = [set(group) for group in [*labels.pairs, *labels.farms]]

    run = audit_event(event=week)

    flags = Flag.objects.filter(run=run, detector="softplay").order_by("q_value", "id")
    found = [(f.evidence["actor"], f.evidence["target"]) for f in flags]
    queued = [
        tuple(keys)
        for keys in Flag.objects.filter(run=run, detector="coseating").values_list(
            "player_keys", flat=True
        )
    ]
    pure = detect_softplay(_chances(records), queued=queued)
    assert found == [(flag.actor, flag.target) for flag in pure.flags]
    assert [f.q_value for f in flags] == pytest.approx([flag.q for flag in pure.flags])
    assert (run.stats["flags"]["softplay"], run.stats["softplay_family"]) == (5, 53)
    assert run.stats["versions"]["softplay"] == "softplay-3"
    # Every flag names two accounts of one injected group, the actor sparing the target.
    assert all(any(set(pair) <= group for group in groups) for pair in found)
    # Every group is found: both ways in both pairs, and in each farm the feeder sparing
    # the fed account (the fed account plays its feeders as it plays anyone).
    assert labels.farms == [["p0000310", "p0000337"], ["p0000264", "p0000270"]]
    assert labels.pairs == [["p0000176", "p0000049"], ["p0000346", "p0000334"]]
    assert found == [
        ("p0000334", "p0000346"),
        ("p0000346", "p0000334"),
        ("p0000049", "p0000176"),
        ("p0000270", "p0000264"),
        ("p0000337", "p0000310"),
    ]
    flag = flags[0]
    assert flag.player_keys == sorted(found[0])
    assert (flag.family, flag.version, flag.statistic) == ("behaviour", "softplay-3", 0.0)
    assert flag.evidence["punished"] == 0
    # Every group queues together: six of the family's 53 ordered pairs are co-seating's
    # discoveries, and they hold 0.9 of its weight.
    assert [f.evidence["queued"] for f in flags] == [True] * 5
    assert [f.evidence["weight"] for f in flags] == pytest.approx([0.9 * 53 / 6] * 5)
    assert [kind["kind"] for kind in flag.evidence["kinds"]] == ["punish", "challenge"]
    assert [kind["punished"] for kind in flag.evidence["kinds"]] == [0, 0]
    assert flag.q_value is not None
    assert flag.q_value <= 0.01
    # A soft-play flag is a benefit signal: each flagged group's accounts share a case that
    # has the family.
    cased = [
        set(case.players.values_list("external_id", flat=True))
        for case in Case.objects.all()
        if "softplay" in case.families
    ]
    assert all(any(set(pair) <= members for members in cased) for pair in found)


def test_the_audit_of_the_honest_logged_week_raises_no_soft_play_flag(week: Event) -> None:
    _, records = _ingested(HONEST)

    run = audit_event(event=week)

    assert (run.stats["flags"]["softplay"], run.stats["softplay_family"]) == (0, 33)
    assert not Flag.objects.filter(run=run, detector="softplay").exists()
    assert detect_softplay(_chances(records)).family_size == 33


def test_a_window_without_logs_has_no_soft_play_family(
    simulated: tuple[Any, Event],
) -> None:
    _, event = simulated
    run = audit_run(key="nolog", window_start=event.starts_at, window_end=event.ends_at)
    assert (run.stats["flags"]["softplay"], run.stats["softplay_family"]) == (0, 0)
    assert not Seat.objects.filter(chances__isnull=False).exists()
