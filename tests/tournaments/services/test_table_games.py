"""Matches at one table through the services (SPEC §4 "Matches at one table"): games entered
hand by hand, the decided placements entered through the result path, corrections with a
reason, and every refusal writing nothing (tournaments/services/table_games.py)."""

from collections.abc import Sequence

import pytest

from accounts.models import User
from core.errors import ConflictError, ServiceError
from flows.finalisation import event_finalise
from tests.tournaments.factories import AFTER_SEATED, make_seated_event
from tournaments.domain.matches import MatchFormat
from tournaments.models import (
    SeatedRound,
    SeatedTable,
    Standing,
    TableGame,
    TableGameCorrection,
    TableGameHand,
    TableSeat,
)
from tournaments.selectors.seated import seated_round_replay, seated_round_tables, table_games
from tournaments.services.seated import seated_result_enter, seated_round_create
from tournaments.services.table_games import table_game_correct, table_game_enter

pytestmark = pytest.mark.django_db

#: A cumulative final to 500: the hands left per seat, game by game.
FINAL_TO_500: list[list[list[str]]] = [
    [[], ["W", "WD4"], ["RS", "G5"], ["B9"]],  # seat 1 out: +100 + 25 + 9 = 134
    [["R1"], [], ["W", "W", "W"], ["WD4", "YD2"]],  # seat 2 out: +1 + 150 + 70 = 221
    [[], ["G7"], ["WD4", "WD4"], ["BS", "BR", "B2"]],  # seat 1: 134 + 7 + 100 + 42 = 283
    [["W"], ["W", "Y3"], [], ["GD2"]],  # seat 3 out: +50 + 53 + 20 = 123
    [[], ["WD4", "W", "R9"], ["Y8"], ["W", "WD4", "GS"]],  # seat 1: 283 + 109 + 8 + 120 = 520
]


def _table(seated: SeatedRound, number: int = 1) -> SeatedTable:
    return seated.tables.get(number=number)


def _keys(table: SeatedTable) -> list[str]:
    return list(table.seats.order_by("seat").values_list("player__external_id", flat=True))


def _hands(keys: Sequence[str], hands: Sequence[list[str] | None]) -> dict[str, list[str]]:
    return {key: hand for key, hand in zip(keys, hands, strict=True) if hand is not None}


def _seats(table: SeatedTable) -> list[tuple[int | None, int | None]]:
    return list(table.seats.order_by("seat").values_list("place", "points"))


def _counts() -> dict[str, int]:
    return {
        model.__name__: model.objects.count()
        for model in (TableGame, TableGameHand, TableGameCorrection, Standing, SeatedRound)
    }


def test_a_final_played_as_a_cumulative_match_to_500(organiser: User) -> None:
    event, _ = make_seated_event(4)
    seated = seated_round_create(
        event=event, by=organiser, seed=7, match=MatchFormat("cumulative", 500)
    )
    assert (seated.format, seated.target, seated.games) == ("cumulative", 500, None)
    table = _table(seated)
    keys = _keys(table)

    for number, hands in enumerate(FINAL_TO_500[:4], start=1):
        table_game_enter(table=table, number=number, hands=_hands(keys, hands), by=organiser)
        table.refresh_from_db()
        assert table.result_entered_at is None
    state = table_games(table=table)
    assert [seat.total for seat in state.seats] == [283, 221, 123, 0]
    assert (state.finished, state.decided_in) == (False, None)

    last = table_game_enter(
        table=table, number=5, hands=_hands(keys, FINAL_TO_500[4]), by=organiser
    )

    assert (last.number, last.entered_by) == (5, organiser)
    state = table_games(table=table)
    assert [seat.total for seat in state.seats] == [520, 221, 123, 0]
    assert (state.finished, state.decided_in) == (True, 5)
    assert [(h.player, h.hand_points, h.score) for h in state.games[4].hands] == [
        (keys[0], 0, 237),
        (keys[1], 109, 0),
        (keys[2], 8, 0),
        (keys[3], 120, 0),
    ]
    table.refresh_from_db()
    assert table.result_entered_by == organiser
    assert _seats(table) == [(1, 4), (2, 2), (3, 1), (4, 0)]
    standings = dict(Standing.objects.filter(event=event).values_list("player_key", "total"))
    assert standings == {keys[0]: 4, keys[1]: 2, keys[2]: 1, keys[3]: 0}

    result = event_finalise(event=event, by=organiser, now=AFTER_SEATED)
    assert result.champion is not None
    assert result.champion.external_id == keys[0]


def test_a_game_is_idempotent_per_number_and_none_follows_the_decided_match(
    organiser: User,
) -> None:
    event, _ = make_seated_event(4)
    seated = seated_round_create(event=event, by=None, seed=7, match=MatchFormat("cumulative", 500))
    table = _table(seated)
    keys = _keys(table)
    for number, hands in enumerate(FINAL_TO_500, start=1):
        table_game_enter(table=table, number=number, hands=_hands(keys, hands), by=organiser)
    before = _counts()
    stored = TableGame.objects.get(table=table, number=5)

    # Re-sent, cards in another order: the stored game, nothing written.
    again = table_game_enter(
        table=table,
        number=5,
        hands=_hands(keys, [[], ["R9", "W", "WD4"], ["Y8"], ["GS", "W", "WD4"]]),
        by=None,
    )
    assert (again.pk, again.entered_by) == (stored.pk, organiser)
    assert _counts() == before

    with pytest.raises(ConflictError, match="table 1, game 5 is already entered with other"):
        table_game_enter(
            table=table, number=5, hands=_hands(keys, [[], ["R9"], ["Y8"], ["GS"]]), by=None
        )
    with pytest.raises(
        ConflictError, match="table 1: the match was decided in game 5; game 6 cannot be entered"
    ):
        table_game_enter(table=table, number=6, hands=_hands(keys, [[], [], [], []]), by=None)
    assert _counts() == before
    assert _seats(table) == [(1, 4), (2, 2), (3, 1), (4, 0)]


def test_an_elimination_match_corrected_with_a_reason(organiser: User) -> None:
    event, _ = make_seated_event(4)
    seated = seated_round_create(
        event=event, by=organiser, seed=3, match=MatchFormat("elimination", 100)
    )
    table = _table(seated)
    keys = _keys(table)
    table_game_enter(
        table=table, number=1, hands=_hands(keys, [[], ["W"], ["R5"], ["WD4", "G9"]]), by=None
    )
    table_game_enter(
        table=table, number=2, hands=_hands(keys, [["R2"], ["WD4"], [], ["W"]]), by=None
    )
    state = table_games(table=table)
    assert [(s.total, s.eliminated_in) for s in state.seats] == [
        (2, None),
        (100, 2),
        (5, None),
        (109, 2),
    ]
    before = _counts()
    with pytest.raises(
        ServiceError,
        match=f"table 1, game 3: {keys[1]} was eliminated in game 2 and plays no further game",
    ):
        table_game_enter(
            table=table, number=3, hands=_hands(keys, [["G1"], ["R3"], ["W"], None]), by=None
        )
    with pytest.raises(ServiceError, match=f"table 1, game 3: no hand for {keys[2]}"):
        table_game_enter(table=table, number=3, hands={keys[0]: ["G1"]}, by=None)
    assert _counts() == before

    third = table_game_enter(
        table=table, number=3, hands=_hands(keys, [["G1"], None, ["WD4", "W"], None]), by=None
    )

    # Seat 1 is left; seat 3 was eliminated last; seats 2 and 4 together, 100 before 109.
    assert _seats(table) == [(1, 4), (3, 1), (2, 2), (4, 0)]
    assert table_games(table=table).decided_in == 3

    with pytest.raises(ServiceError, match="give a reason for the correction"):
        table_game_correct(game=third, hands={keys[0]: ["G1"], keys[2]: ["W"]}, by=None, reason=" ")
    correction = table_game_correct(
        game=third,
        hands={keys[0]: ["G1"], keys[2]: ["W"]},
        by=organiser,
        reason="seat 3 held one wild, not two",
    )

    assert (correction.by, correction.reason) == (organiser, "seat 3 held one wild, not two")
    assert correction.before == {keys[0]: ["G1"], keys[2]: ["WD4", "W"]}
    assert correction.after == {keys[0]: ["G1"], keys[2]: ["W"]}
    state = table_games(table=table)
    assert [s.total for s in state.seats] == [3, 100, 55, 109]
    assert (state.finished, state.games[2].corrections) == (False, 1)
    table.refresh_from_db()
    assert table.result_entered_at is None
    assert _seats(table) == [(None, None)] * 4
    assert set(Standing.objects.filter(event=event).values_list("games", "total")) == {(0, 0)}

    table_game_enter(
        table=table, number=4, hands=_hands(keys, [["WD4", "W"], None, [], None]), by=None
    )
    assert [s.total for s in table_games(table=table).seats] == [103, 100, 55, 109]
    assert _seats(table) == [(2, 2), (3, 1), (1, 4), (4, 0)]

    # Deciding the match in game 3 again would leave game 4 played after it: refused.
    before = _counts()
    with pytest.raises(
        ConflictError,
        match="table 1, game 4: the match was decided in game 3; no further game can be entered",
    ):
        table_game_correct(
            game=third, hands={keys[0]: ["G1"], keys[2]: ["WD4", "W"]}, by=None, reason="undo"
        )
    assert _counts() == before
    assert [s.total for s in table_games(table=table).seats] == [103, 100, 55, 109]

    seated_round_create(event=event, by=None, seed=4)
    with pytest.raises(ConflictError, match="round 2 is already seated; round 1's games can no"):
        table_game_correct(game=third, hands={keys[0]: ["G2"], keys[2]: ["W"]}, by=None, reason="x")
    assert TableGameCorrection.objects.count() == 1
    assert TableGameHand.objects.get(game=third, seat__seat=1).hand == "G1"


@pytest.mark.parametrize(
    ("hands", "message"),
    [
        ([[], ["Q7"], [], []], "table 1, game 1, {1}: unknown card 'Q7'"),
        (
            [["W", "W"], ["W"], ["W", "W"], []],
            "table 1, game 1: card 'W' appears 5 times but the deck holds 4",
        ),
        ([[], ["R0"], ["R0"], []], "table 1, game 1: card 'R0' appears 2 times but the deck"),
    ],
)
def test_hands_are_checked_against_the_card_table(hands: list[list[str]], message: str) -> None:
    event, _ = make_seated_event(4)
    seated = seated_round_create(event=event, by=None, seed=1, match=MatchFormat("cumulative", 50))
    table = _table(seated)
    keys = _keys(table)

    with pytest.raises(ServiceError, match=message.format(*keys)):
        table_game_enter(table=table, number=1, hands=_hands(keys, hands), by=None)

    assert (TableGame.objects.count(), TableGameHand.objects.count()) == (0, 0)


def test_games_are_numbered_in_order_and_only_by_the_table_s_players() -> None:
    event, players = make_seated_event(8)
    seated = seated_round_create(event=event, by=None, seed=1, match=MatchFormat("cumulative", 50))
    table = _table(seated)
    keys = _keys(table)
    stranger = _keys(_table(seated, 2))[0]

    with pytest.raises(ServiceError, match="table 1: the next game is game 1, got 2"):
        table_game_enter(table=table, number=2, hands=_hands(keys, [[], [], [], []]), by=None)
    with pytest.raises(ServiceError, match=f"{stranger} does not sit at this table"):
        table_game_enter(
            table=table, number=1, hands={**_hands(keys, [[], [], [], []]), stranger: []}, by=None
        )
    assert TableGame.objects.count() == 0


def test_a_match_round_waits_for_every_match_and_its_places_are_not_typed_in() -> None:
    event, _ = make_seated_event(8)
    seated = seated_round_create(event=event, by=None, seed=1, match=MatchFormat("cumulative", 50))
    first, second = _table(seated, 1), _table(seated, 2)
    keys = _keys(first)

    with pytest.raises(ConflictError, match="round 1 is played as a cumulative match to 50: its"):
        seated_result_enter(table=first, places={k: i for i, k in enumerate(keys, 1)}, by=None)
    table_game_enter(
        table=first, number=1, hands=_hands(keys, [[], ["W"], ["R1"], ["R2"]]), by=None
    )
    with pytest.raises(ConflictError, match="round 1 has tables without a result: 2"):
        seated_round_create(event=event, by=None, seed=2)
    # 53 to 0, 0, 0: the three on 0 are parted by the hands they held, 1 < 2 < 50.
    assert _seats(first) == [(1, 4), (4, 0), (2, 2), (3, 1)]
    assert seated_round_replay(seated_round=seated) == seated_round_tables(seated_round=seated)
    assert second.result_entered_at is None


def test_a_one_game_round_takes_places_not_games() -> None:
    event, _ = make_seated_event(4)
    seated = seated_round_create(event=event, by=None, seed=1)
    table = _table(seated)

    with pytest.raises(ConflictError, match="round 1 is played as one game a table: enter its"):
        table_game_enter(table=table, number=1, hands={}, by=None)
    assert (seated.format, seated.target) == ("game", None)
    assert TableSeat.objects.filter(points__isnull=False).count() == 0
