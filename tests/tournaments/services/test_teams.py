"""Rotating-partners team events through the services (SPEC §4 "Team events"): the schedule
from the entrants and a seed, every game entered per table, individual totals as standings,
and the refusals writing nothing (tournaments/services/teams.py, table_games.py)."""

from collections.abc import Sequence

import pytest

from accounts.models import Player, User
from core.errors import ConflictError, ServiceError
from flows.finalisation import event_finalise
from tests.tournaments.factories import AFTER_SEATED, make_seated_event
from tournaments.domain.cards import hand_points
from tournaments.domain.teams import individual_totals, rotating_partners
from tournaments.models import (
    Event,
    SeatedRound,
    SeatedTable,
    Standing,
    TableGame,
    TableGameCorrection,
    TableGameHand,
    TableSeat,
)
from tournaments.selectors.seated import (
    seated_round_replay,
    seated_round_tables,
    table_games,
    team_standings,
)
from tournaments.services.seated import seated_result_enter, seated_round_create
from tournaments.services.table_games import table_game_correct, table_game_enter
from tournaments.services.teams import team_schedule_create

pytestmark = pytest.mark.django_db

SEED = 2021


def partners_hands(round_no: int, game: int) -> list[list[str]]:
    """The hands left at every table of round ``round_no``, game ``game`` (seat order).

    The player out is at seat ``game - 1``, so seats 1 and 3 (team 0, teammates opposite)
    win games 1 and 3, seats 2 and 4 games 2 and 4. The losing team's hands hold
    r + 20, 51, 2r + 5 and 31 points; the winner's partner's hand (WD4, W…) never counts.
    Team 0 nets (r + 20) - 51 + (2r + 5) - 31 = 3r - 57 a round, team 1 minus that.
    """
    r = round_no
    return [
        [[], [f"R{r}"], ["WD4"], ["GS"]],
        [["W"], [], ["B1"], ["WD4"]],
        [["RD2"], [f"R{r}", f"G{r}"], [], ["B5"]],
        [["YD2", "Y9"], ["W"], ["B2"], []],
    ][game - 1]


#: The individual totals of 8 players (by their place in id order) over the 28 games of the
#: schedule of seed 2021: each player's sum over the rounds of ±(3r - 57).
EIGHT_TOTALS = [27, 33, 153, -75, -33, 81, 129, -315]


def _keys(table: SeatedTable) -> list[str]:
    return list(table.seats.order_by("seat").values_list("player__external_id", flat=True))


def _counts() -> dict[str, int]:
    return {
        model.__name__: model.objects.count()
        for model in (
            SeatedRound,
            SeatedTable,
            TableSeat,
            TableGame,
            TableGameHand,
            TableGameCorrection,
            Standing,
        )
    }


def play_partners_event(event: Event, by: User | None) -> int:
    """Enter every game of every table of the event's schedule; returns the games entered."""
    entered = 0
    for seated in SeatedRound.objects.filter(event=event).order_by("number"):
        for table in seated.tables.order_by("number"):
            keys = _keys(table)
            for game in range(1, (seated.games or 0) + 1):
                hands = dict(zip(keys, partners_hands(seated.number, game), strict=True))
                table_game_enter(table=table, number=game, hands=hands, by=by)
                entered += 1
    return entered


def _by_index(players: Sequence[Player], values: dict[str, int]) -> list[int]:
    return [values[p.external_id] for p in sorted(players, key=lambda p: p.external_id)]


def test_eight_players_rotate_partners_over_28_games_each(organiser: User) -> None:
    event, players = make_seated_event(8)

    rounds = team_schedule_create(event=event, by=organiser, seed=SEED)

    assert [(r.number, r.format, r.games, r.seed) for r in rounds] == [
        (n, "partners", 4, SEED) for n in range(1, 8)
    ]
    keys = sorted(p.external_id for p in players)
    schedule = rotating_partners(keys, seed=SEED)
    for seated in rounds:
        stored = seated_round_tables(seated_round=seated)
        assert stored == list(schedule.rounds[seated.number - 1])
        assert seated_round_replay(seated_round=seated) == stored
    # The first round, by the players' places in id order: 1+7 v 0+5 and 3+4 v 6+2.
    assert seated_round_tables(seated_round=rounds[0]) == [
        (keys[1], keys[0], keys[7], keys[5]),
        (keys[3], keys[6], keys[4], keys[2]),
    ]

    assert play_partners_event(event, organiser) == 56  # 7 rounds x 2 tables x 4 games

    totals = dict(Standing.objects.filter(event=event).values_list("player_key", "total"))
    assert _by_index(players, totals) == EIGHT_TOTALS
    games = [
        [
            [[hand_points(h) for h in partners_hands(r, g)] for g in range(1, 5)]
            for _ in schedule.rounds[r - 1]
        ]
        for r in range(1, 8)
    ]
    assert totals == individual_totals(schedule, games)
    assert set(Standing.objects.filter(event=event).values_list("games", flat=True)) == {28}
    assert TableGameHand.objects.filter(seat__player=players[0]).count() == 28

    rows = team_standings(event=event)
    assert [(row.rank, row.player, row.total, row.games) for row in rows] == [
        (1, keys[2], 153, 28),
        (2, keys[6], 129, 28),
        (3, keys[5], 81, 28),
        (4, keys[1], 33, 28),
        (5, keys[0], 27, 28),
        (6, keys[4], -33, 28),
        (7, keys[3], -75, 28),
        (8, keys[7], -315, 28),
    ]
    # keys[7] never left seat 3 (team 0): its best game is round 7's game 1, 7 + 20.
    assert [row.best for row in rows] == [51, 51, 51, 51, 51, 51, 51, 27]

    first = SeatedRound.objects.get(event=event, number=1).tables.get(number=1)
    state = table_games(table=first)
    assert [seat.total for seat in state.seats] == [-54, 54, -54, 54]
    assert [seat.points for seat in state.seats] == [-54, 54, -54, 54]
    assert [seat.place for seat in state.seats] == [3, 1, 3, 1]
    assert [h.score for h in state.games[0].hands] == [21, -21, 21, -21]
    assert state.finished

    result = event_finalise(event=event, by=organiser, now=AFTER_SEATED)
    assert result.champion is not None
    assert result.champion.external_id == keys[2]


def test_four_players_play_three_partnerships_of_four_games() -> None:
    event, players = make_seated_event(4)
    team_schedule_create(event=event, by=None, seed=5)

    assert play_partners_event(event, None) == 12

    # Every round one team nets 3r - 57 and the other minus it; the fixed player (last in
    # the seeded order) is team 0 each round: -54 - 51 - 48 = -153.
    keys = sorted(p.external_id for p in players)
    order = rotating_partners(keys, seed=5).order
    totals = dict(Standing.objects.filter(event=event).values_list("player_key", "total"))
    assert totals[order[3]] == -153
    # Partnering it in round r: 3r - 57 in that round, minus the other two rounds' nets.
    assert sorted(totals.values()) == [-153, -54 + 51 + 48, 54 - 51 + 48, 54 + 51 - 48]
    assert sorted(totals.values()) == [-153, 45, 51, 57]
    assert set(Standing.objects.values_list("games", flat=True)) == {12}


def test_a_partners_game_is_corrected_with_a_reason_until_the_event_is_finalised(
    organiser: User,
) -> None:
    event, players = make_seated_event(4)
    team_schedule_create(event=event, by=None, seed=5, games_per_round=1)
    play_partners_event(event, None)
    table = SeatedRound.objects.get(event=event, number=1).tables.get()
    keys = _keys(table)
    game = TableGame.objects.get(table=table, number=1)
    before = dict(Standing.objects.values_list("player_key", "total"))
    assert [s.total for s in table_games(table=table).seats] == [21, -21, 21, -21]

    correction = table_game_correct(
        game=game,
        hands=dict(zip(keys, [["W"], [], ["B1"], ["WD4"]], strict=True)),
        by=organiser,
        reason="seat 2 went out, not seat 1",
    )

    assert (correction.by, correction.reason) == (organiser, "seat 2 went out, not seat 1")
    assert correction.after == dict(zip(keys, [["W"], [], ["B1"], ["WD4"]], strict=True))
    after = dict(Standing.objects.values_list("player_key", "total"))
    assert [after[k] - before[k] for k in keys] == [-72, 72, -72, 72]
    assert [s.points for s in table_games(table=table).seats] == [-51, 51, -51, 51]

    event_finalise(event=event, by=organiser, now=AFTER_SEATED)
    counts = _counts()
    with pytest.raises(ConflictError, match="is finalised; cannot correct games"):
        table_game_correct(game=game, hands=correction.before, by=None, reason="back")
    assert _counts() == counts


def test_a_field_that_is_not_a_multiple_of_four_gets_no_schedule() -> None:
    event, _ = make_seated_event(6)

    with pytest.raises(
        ServiceError,
        match=r"2021-NC has 6 entrants: a rotating-partners event needs a multiple of 4 "
        r"players \(4, 8, 12, …\), got 6",
    ) as refused:
        team_schedule_create(event=event, by=None, seed=1)

    assert refused.value.detail == {"entrants": 6}
    assert _counts() == dict.fromkeys(_counts(), 0)


def test_a_schedule_is_seated_once_and_its_rounds_take_games_not_places() -> None:
    event, _ = make_seated_event(8)
    team_schedule_create(event=event, by=None, seed=1, games_per_round=2)
    table = SeatedRound.objects.get(event=event, number=3).tables.get(number=2)
    keys = _keys(table)
    for number in (1, 2):
        hands = dict(zip(keys, partners_hands(3, number), strict=True))
        table_game_enter(table=table, number=number, hands=hands, by=None)
    counts = _counts()

    with pytest.raises(ConflictError, match="2021-NC already has 7 rounds seated"):
        team_schedule_create(event=event, by=None, seed=2)
    with pytest.raises(ConflictError, match="2021-NC is a rotating-partners event"):
        seated_round_create(event=event, by=None, seed=2)
    with pytest.raises(ConflictError, match="round 3 plays 2 games a table; table 2's game 3"):
        table_game_enter(
            table=table, number=3, hands=dict(zip(keys, [[], [], [], []], strict=True)), by=None
        )
    with pytest.raises(ConflictError, match="round 3 is played as rotating partners, 2 games"):
        seated_result_enter(table=table, places=dict.fromkeys(keys, 1), by=None)
    other = SeatedRound.objects.get(event=event, number=1).tables.get(number=1)
    other_keys = _keys(other)
    with pytest.raises(ServiceError, match=f"table 1, game 1: no hand for {other_keys[3]}"):
        table_game_enter(table=other, number=1, hands=dict.fromkeys(other_keys[:3], []), by=None)
    with pytest.raises(ServiceError, match="games per round must be 1 to 50, got 0"):
        team_schedule_create(event=event, by=None, seed=2, games_per_round=0)

    assert _counts() == counts
