"""Reads of seated events: their rounds and tables, and the audit replay of a round from its
recorded seed (SPEC §4: "a random draw from a recorded seed (reproducible in an audit)")."""

from django.db.models import Prefetch, QuerySet

from tournaments.domain.seating import seat_round
from tournaments.models import Event, SeatedRound, SeatedTable, TableSeat
from tournaments.services.seated import points_before, round_history


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
    return seat_round(
        field,
        round_no=number,
        seed=seated_round.seed,
        standings=None if number == 1 else points_before(event, number, field),
        history=round_history(event, number),
    )
