"""Ingest against seated events and team seating (SPEC §4 "Seated events", "Team events"):
a record for a seated event must be the game of one of its seated tables, and doubles
teammates never sit side by side. Refused records write nothing."""

from collections.abc import Callable
from datetime import datetime, timedelta

import pytest

from accounts.models import Player
from core.domain.clock import TOUR_TZ
from flows.ingest import games_ingest
from tests.tournaments.conftest import make_record
from tests.tournaments.factories import make_event, make_season
from tournaments.models import Entry, Event, Game, SeatedRound, SeatedTable, Standing, TableSeat
from tournaments.services.ingest import Rejection
from tournaments.services.seated import seated_result_enter

pytestmark = pytest.mark.django_db

Counts = Callable[[], dict[str, int]]
LIVE = "2026-UX-LIVE"
DAY = datetime(2021, 6, 1, 10, 0, tzinfo=TOUR_TZ)
TABLE_1 = ("p0000001", "p0000002", "p0000003", "p0000004")
TABLE_2 = ("p0000005", "p0000006", "p0000007", "p0000008")


def _seated_event() -> Event:
    """A seated final with one round of two tables of four, table 1's result entered."""
    season = make_season()
    event = make_event(
        season,
        LIVE,
        "championship",
        format="seated",
        open_entry=False,
        starts_at=DAY,
        ends_at=DAY + timedelta(hours=12),
    )
    players = {
        key: Player.objects.create(external_id=key, name=f"玩家{key[-2:]}", province="江苏")
        for key in TABLE_1 + TABLE_2
    }
    Entry.objects.bulk_create(
        [Entry(event=event, player=p, basis="invited") for p in players.values()]
    )
    seated = SeatedRound.objects.create(event=event, number=1, seed=1)
    for number, keys in ((1, TABLE_1), (2, TABLE_2)):
        table = SeatedTable.objects.create(round=seated, number=number)
        TableSeat.objects.bulk_create(
            [
                TableSeat(table=table, player=players[key], seat=i)
                for i, key in enumerate(keys, start=1)
            ]
        )
    first = SeatedTable.objects.get(round=seated, number=1)
    seated_result_enter(table=first, places=dict(zip(TABLE_1, (1, 2, 3, 4), strict=True)), by=None)
    return event


def _standings(event: Event) -> list[tuple[str, int, int]]:
    return list(
        Standing.objects.filter(event=event)
        .order_by("player_key")
        .values_list("player_key", "games", "total")
    )


def test_a_stray_singles_record_for_a_seated_event_is_refused(db_counts: Counts) -> None:
    event = _seated_event()
    before, standings = db_counts(), _standings(event)
    # The leader of table 1 with three players of table 2: no seated table holds them.
    stray = make_record(
        "g-stray",
        event=LIVE,
        players=("p0000001", "p0000005", "p0000006", "p0000007"),
        started_at="2021-06-01T11:00:00+08:00",
        ended_at="2021-06-01T11:03:00+08:00",
    )

    report = games_ingest(records=[stray])

    assert report.ingested == 0
    assert report.rejected == [
        Rejection(
            0,
            "g-stray",
            "seats",
            f"event {LIVE} is a seated event: a record must be the game of one of its seated "
            "tables, and no table seats these players",
        )
    ]
    assert db_counts() == before
    assert _standings(event) == standings


def test_a_seated_table_game_is_stored_and_leaves_the_placement_standings(
    db_counts: Counts,
) -> None:
    event = _seated_event()
    standings = _standings(event)
    at_table = make_record(
        "g-table-1",
        event=LIVE,
        players=tuple(reversed(TABLE_1)),  # any seat order of the table's players
        started_at="2021-06-01T11:00:00+08:00",
        ended_at="2021-06-01T11:03:00+08:00",
    )

    report = games_ingest(records=[at_table])

    assert report.ingested == 1
    assert Game.objects.get().event_id == event.pk
    assert _standings(event) == standings  # placements, not game scores, rank a seated event


def _doubles(teams: tuple[int, ...], record_id: str = "g-d1") -> dict[str, object]:
    return make_record(record_id, mode="doubles", teams=teams)


def test_a_doubles_record_with_teammates_side_by_side_is_refused(
    event: Event, db_counts: Counts
) -> None:
    before = db_counts()

    report = games_ingest(records=[_doubles((0, 0, 1, 1))])

    assert report.ingested == 0
    assert report.rejected == [
        Rejection(0, "g-d1", "seats[1].team", "seats 0 and 1 are both team 0: teammates sit apart")
    ]
    assert db_counts() == before


def test_teammates_at_the_ends_of_the_seat_order_sit_side_by_side(
    event: Event, db_counts: Counts
) -> None:
    before = db_counts()

    report = games_ingest(records=[_doubles((0, 1, 1, 0))])

    assert report.rejected == [
        Rejection(0, "g-d1", "seats[2].team", "seats 1 and 2 are both team 1: teammates sit apart")
    ]
    assert db_counts() == before


def test_teammates_opposite_each_other_are_ingested(event: Event) -> None:
    report = games_ingest(records=[_doubles((0, 1, 0, 1)), _doubles((1, 0, 1, 0), "g-d2")])

    assert (report.ingested, report.rejected) == (2, [])
