"""Seated events (SPEC §4): rounds seated from recorded seeds and reproducible, fewer repeat
meetings than a random draw, placement points per table with ties, standings and
finalisation."""

import random

import pytest

from accounts.models import Player
from core.errors import ConflictError, ServiceError
from flows.finalisation import event_finalise
from tests.tournaments.factories import AFTER_SEATED, make_event, make_players, make_season
from tournaments.domain.seating import random_seating, repeat_meetings
from tournaments.models import (
    Entry,
    Event,
    Season,
    SeatedRound,
    SeatedTable,
    Standing,
    TableSeat,
)
from tournaments.selectors.leaderboard import leaderboard_rows
from tournaments.selectors.seated import seated_round_replay, seated_round_tables
from tournaments.services.seated import seated_result_enter, seated_round_create

pytestmark = pytest.mark.django_db


def _seated_event(
    n: int, code: str = "2021-NC", season: Season | None = None
) -> tuple[Event, list[Player]]:
    season = season or make_season()
    event = make_event(season, code, "championship", format="seated", open_entry=False)
    players = make_players(n, ("江苏", "浙江", "广东", "上海"))
    Entry.objects.bulk_create([Entry(event=event, player=p, basis="invited") for p in players])
    return event, players


def _standing_order(s: Standing) -> tuple[int, int, int, float]:
    """Total, games, best, then the earlier to reach it."""
    assert s.best is not None
    assert s.reached_at is not None
    return (s.total, s.games, s.best, -s.reached_at.timestamp())


def _play_round(seated: SeatedRound, rng: random.Random) -> None:
    for table in seated.tables.order_by("number"):
        keys = list(table.seats.values_list("player__external_id", flat=True))
        rng.shuffle(keys)
        seated_result_enter(
            table=table, places={key: i for i, key in enumerate(keys, start=1)}, by=None
        )


def _run(event: Event, seeds: list[int], results_seed: int = 1) -> list[list[tuple[str, ...]]]:
    rng = random.Random(results_seed)
    rounds = []
    for seed in seeds:
        seated = seated_round_create(event=event, by=None, seed=seed)
        rounds.append(seated_round_tables(seated_round=seated))
        _play_round(seated, rng)
    return rounds


@pytest.mark.parametrize("n", [32, 64, 100])
def test_five_rounds_repeat_fewer_meetings_than_random_and_replay_from_the_seed(n: int) -> None:
    event, players = _seated_event(n)
    seeds = [101, 202, 303, 404, 505]

    rounds = _run(event, seeds)

    for tables in rounds:
        assert sorted(k for table in tables for k in table) == sorted(
            p.external_id for p in players
        )
        assert sorted(len(t) for t in tables) == sorted([4] * (n // 4))
    baseline = random_seating([p.external_id for p in players], seed=seeds[0], rounds=5)
    assert repeat_meetings(rounds) < repeat_meetings(baseline)
    for seated in SeatedRound.objects.filter(event=event).order_by("number"):
        assert seated.seed == seeds[seated.number - 1]
        assert seated_round_replay(seated_round=seated) == seated_round_tables(seated_round=seated)
    assert Standing.objects.filter(event=event, games=5).count() == n


def test_the_same_seeds_and_results_seat_the_same_rounds() -> None:
    season = make_season()
    first, players = _seated_event(32, "2021-NC", season)
    second = make_event(season, "2021-CM", "championship", format="seated")
    Entry.objects.bulk_create([Entry(event=second, player=p, basis="invited") for p in players])

    assert _run(first, [7, 8, 9]) == _run(second, [7, 8, 9])
    assert _run(make_event(season, "2021-X", "custom", format="seated"), []) == []


def test_a_seed_is_drawn_and_recorded_when_none_is_given() -> None:
    event, _ = _seated_event(12)
    seated = seated_round_create(event=event, by=None)
    assert 0 <= seated.seed < 2**62
    assert seated_round_replay(seated_round=seated) == seated_round_tables(seated_round=seated)


def test_placement_points_by_table_size_with_ties() -> None:
    event, _ = _seated_event(9)  # tables of 4 and 5
    seated = seated_round_create(event=event, by=None, seed=1)
    four, five = (seated.tables.get(number=1), seated.tables.get(number=2))
    four_keys = list(four.seats.order_by("seat").values_list("player__external_id", flat=True))
    five_keys = list(five.seats.order_by("seat").values_list("player__external_id", flat=True))

    seated_result_enter(table=four, places=dict(zip(four_keys, [1, 2, 2, 4], strict=True)), by=None)
    seated_result_enter(
        table=five, places=dict(zip(five_keys, [1, 1, 3, 4, 5], strict=True)), by=None
    )

    points = dict(TableSeat.objects.values_list("player__external_id", "points"))
    # 4/2/1/0: places 2 and 3 shared → (2 + 1) // 2 = 1 each; 4/2/1/0/0: (4 + 2) // 2 = 3.
    assert [points[k] for k in four_keys] == [4, 1, 1, 0]
    assert [points[k] for k in five_keys] == [3, 3, 1, 0, 0]
    totals = dict(Standing.objects.filter(event=event).values_list("player_key", "total"))
    assert totals == points
    assert Standing.objects.filter(event=event, eligible=True, games=1).count() == 9


@pytest.mark.parametrize(
    ("places", "message"),
    [
        ([1, 2, 3], "exactly the table's players"),
        ([1, 2, 3, 5], "place must be 1 to 4, got 5"),
        ([1, 1, 2, 3], "place 2 does not follow the others"),
    ],
)
def test_bad_places_are_refused(places: list[int], message: str) -> None:
    event, _ = _seated_event(8)
    seated = seated_round_create(event=event, by=None, seed=1)
    table = seated.tables.get(number=1)
    keys = list(table.seats.values_list("player__external_id", flat=True))

    with pytest.raises(ServiceError, match=message):
        seated_result_enter(table=table, places=dict(zip(keys, places, strict=False)), by=None)

    assert TableSeat.objects.filter(points__isnull=False).count() == 0
    assert Standing.objects.count() == 0


def test_rounds_wait_for_results_and_results_freeze_once_the_next_round_is_seated() -> None:
    event, _ = _seated_event(8)
    first = seated_round_create(event=event, by=None, seed=1)
    with pytest.raises(ConflictError, match="round 1 has tables without a result: 1, 2"):
        seated_round_create(event=event, by=None, seed=2)
    _play_round(first, random.Random(0))
    seated_round_create(event=event, by=None, seed=2)
    table = first.tables.get(number=1)
    keys = list(table.seats.values_list("player__external_id", flat=True))

    with pytest.raises(ConflictError, match="round 2 is already seated"):
        seated_result_enter(table=table, places=dict.fromkeys(keys, 1), by=None)
    assert SeatedRound.objects.count() == 2


def test_only_scheduled_seated_events_with_a_field_are_seated() -> None:
    event, _ = _seated_event(2)
    with pytest.raises(ServiceError, match="2 entrants; a table needs at least 3"):
        seated_round_create(event=event, by=None, seed=1)
    online = make_event(event.season, "2021-W05-F", "weekly_final")
    with pytest.raises(ServiceError, match="not a seated event"):
        seated_round_create(event=online, by=None, seed=1)
    assert SeatedTable.objects.count() == 0


def test_a_seated_event_is_ranked_by_points_and_finalised() -> None:
    event, players = _seated_event(8)
    _run(event, [1, 2, 3])
    standings = list(Standing.objects.filter(event=event))
    best = max(standings, key=_standing_order)

    result = event_finalise(event=event, by=None, now=AFTER_SEATED)

    assert result.champion == Player.objects.get(external_id=best.player_key)
    rows = leaderboard_rows(Event.objects.get(pk=event.pk))[0:8]
    assert [r.rank for r in rows] == list(range(1, 9))
    assert [r.total for r in rows] == sorted((s.total for s in standings), reverse=True)
    assert sum(r.total for r in rows) == 3 * 2 * (4 + 2 + 1)
