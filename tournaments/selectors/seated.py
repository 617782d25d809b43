"""Reads of seated events: their rounds and tables, the audit replay of a round from its
recorded seed (SPEC §4: "a random draw from a recorded seed (reproducible in an audit)"),
the games of a match or partners table with where the match stands (SPEC §4 "Matches at one
table"), and a rotating-partners event's standings (SPEC §4 "Team events")."""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Prefetch, QuerySet

from tournaments.domain.seating import seat_round
from tournaments.domain.teams import rotating_partners
from tournaments.models import (
    Event,
    SeatedRound,
    SeatedTable,
    TableGame,
    TableGameHand,
    TableSeat,
)
from tournaments.selectors.leaderboard import LeaderboardRow, leaderboard_rows
from tournaments.services.seated import points_before, round_history
from tournaments.services.table_games import table_match_state


def seated_rounds(*, event: Event) -> QuerySet[SeatedRound]:
    """The event's rounds with their tables and seats (three queries whatever the size)."""
    seats = TableSeat.objects.select_related("player").order_by("seat")
    tables = SeatedTable.objects.order_by("number").prefetch_related(
        Prefetch("seats", queryset=seats)
    )
    return (
        SeatedRound.objects.filter(event=event)
        .order_by("number")
        .prefetch_related(Prefetch("tables", queryset=tables))
    )


def seated_round_tables(*, seated_round: SeatedRound) -> list[tuple[str, ...]]:
    """The round's tables as stored: external ids in seat order, tables in number order."""
    tables: dict[int, list[str]] = {}
    for number, key in (
        TableSeat.objects.filter(table__round=seated_round)
        .order_by("table__number", "seat")
        .values_list("table__number", "player__external_id")
    ):
        tables.setdefault(number, []).append(key)
    return [tuple(players) for players in tables.values()]


def seated_round_replay(*, seated_round: SeatedRound) -> list[tuple[str, ...]]:
    """Seat the round again from its stored seed, its field, the earlier rounds' tables and
    their results: equal to ``seated_round_tables`` for an honest seating."""
    event = seated_round.event
    number = seated_round.number
    field = sorted(key for table in seated_round_tables(seated_round=seated_round) for key in table)
    if seated_round.format == SeatedRound.Format.PARTNERS:
        schedule = rotating_partners(
            field, seed=seated_round.seed, games_per_round=seated_round.games or 1
        )
        return list(schedule.rounds[number - 1])
    return seat_round(
        field,
        round_no=number,
        seed=seated_round.seed,
        standings=None if number == 1 else points_before(event, number, field),
        history=round_history(event, number),
    )


@dataclass(frozen=True)
class SeatState:
    """A seat of a match or partners table: the player's total so far (cumulative: points
    won; elimination: points taken; partners: the round's tour doubles scores), the game
    that eliminated them, and the table's result once there is one."""

    seat: int
    player: str
    name: str
    total: int
    eliminated_in: int | None
    place: int | None
    points: int | None


@dataclass(frozen=True)
class GameHandRow:
    player: str
    hand: list[str]
    hand_points: int
    score: int


@dataclass(frozen=True)
class GameRow:
    number: int
    entered_at: datetime
    corrections: int
    hands: list[GameHandRow]


@dataclass(frozen=True)
class TableGames:
    """The games of a table and where it stands: ``finished`` once the match is decided
    (``decided_in``) or the partners table has played its round's games."""

    round: int
    table: int
    format: str
    target: int | None
    games_per_table: int | None
    finished: bool
    decided_in: int | None
    seats: list[SeatState]
    games: list[GameRow]


def table_games(*, table: SeatedTable) -> TableGames:
    """The table's games, hands and totals (a fixed number of queries)."""
    seated_round = SeatedRound.objects.get(pk=table.round_id)
    seats = list(table.seats.select_related("player").order_by("seat"))
    hands = TableGameHand.objects.select_related("seat__player").order_by("seat__seat")
    games = list(
        TableGame.objects.filter(table=table)
        .annotate(corrections_count=Count("corrections"))
        .order_by("number")
        .prefetch_related(Prefetch("hands", queryset=hands))
    )
    totals = dict.fromkeys((seat.pk for seat in seats), 0)
    for game in games:
        for row in game.hands.all():
            totals[row.seat_id] += row.score
    eliminated_in: list[int | None] = [None] * len(seats)
    decided_in = None
    if seated_round.format == SeatedRound.Format.PARTNERS:
        finished = len(games) == seated_round.games
    elif seated_round.format == SeatedRound.Format.GAME:
        finished = table.result_entered_at is not None
    else:
        state = table_match_state(seated_round, table, seats)
        finished, decided_in = state.finished, state.decided_in
        eliminated_in = list(state.eliminated_in)
    return TableGames(
        round=seated_round.number,
        table=table.number,
        format=seated_round.format,
        target=seated_round.target,
        games_per_table=seated_round.games,
        finished=finished,
        decided_in=decided_in,
        seats=[
            SeatState(
                seat=seat.seat,
                player=seat.player.external_id,
                name=seat.player.name,
                total=totals[seat.pk],
                eliminated_in=out,
                place=seat.place,
                points=seat.points,
            )
            for seat, out in zip(seats, eliminated_in, strict=True)
        ],
        games=[
            GameRow(
                number=game.number,
                entered_at=game.entered_at,
                corrections=game.corrections_count,
                hands=[
                    GameHandRow(
                        player=row.seat.player.external_id,
                        hand=row.hand.split(),
                        hand_points=row.hand_points,
                        score=row.score,
                    )
                    for row in game.hands.all()
                ],
            )
            for game in games
        ],
    )


def team_standings(*, event: Event) -> list[LeaderboardRow]:
    """A rotating-partners event's standings: each player's individual total over the games
    entered, in the season's tie-break order (total, games, best game, earlier, player id)
    — the order its finalisation ranks by."""
    board = leaderboard_rows(event)
    return board[0 : board.count()]
