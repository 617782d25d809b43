"""Seated events (live finals, championships): seat rounds, enter table results, keep the
standings (SPEC §4 "Seated events").

* **Seating** (``seated_round_create``): the field is the event's entrants. Round 1 is a
  random draw from a seed; every later round groups players of similar standing (points so
  far) while minimising repeat meetings — both by ``tournaments.domain.seating.seat_round``.
  The seed is stored on the round (``SeatedRound.seed``; drawn at random when the organiser
  gives none), so ``tournaments.selectors.seated.seated_round_replay`` reproduces any round
  from the seed, the earlier rounds' tables and their results. A round is seated only when
  every table of the round before has its result.
* **Results** (``seated_result_enter``): the organiser gives each player's place at the
  table, 1 = best, equal places for a tie in competition style (1, 1, 3, 4). Points come from
  the season's placement points for the table's size; tied players share the points of the
  places they occupy, the average rounded down (``placement_points``). A result may be
  re-entered until the next round is seated (its seating depended on it).
* **Standings** of a seated event: games = tables played, total = placement points, best =
  the best table, reached_at = when the last result counted was entered; every player who has
  played a table is ranked (``SEATED_MINIMUM_TABLES``), in the season's tie-break order. The
  event is finalised like any other (``event_finalise``).
* **Formats** (``SeatedRound.format``): a round is one game per table (places entered as
  above) unless the organiser seats it as a **match** (``match=MatchFormat(scoring,
  target)``: cumulative or elimination, SPEC §4 "Matches at one table"). A match table's
  games are entered one by one (``tournaments.services.table_games``); once the match is
  decided its placements are written through the same result path (``result_write``:
  places → placement points → standings), never typed in. A **rotating-partners** event's
  rounds are all seated at once by its schedule (``tournaments.services.teams``); its
  standings are the players' individual totals game by game (``games`` = games played,
  ``best`` = the best single game), not placement points.
"""

import secrets
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from django.db import transaction
from django.db.models import F, Sum
from django.utils import timezone

from accounts.models import Player, User
from core.errors import ConflictError, ServiceError
from tournaments.domain.leaderboard import standing_from_scores
from tournaments.domain.matches import MatchFormat
from tournaments.domain.seating import placement_points, seat_round
from tournaments.models import (
    Entry,
    Event,
    EventStatus,
    SeatedRound,
    SeatedTable,
    Standing,
    TableGameHand,
    TableSeat,
)
from tournaments.selectors.events import SEATED_MINIMUM_TABLES

SEED_BITS = 62


def locked_seated(event_id: int, what: str) -> Event:
    """The seated event, locked for a write; refused when it is not seated or not scheduled."""
    event = Event.objects.select_for_update(of=("self",)).select_related("season").get(pk=event_id)
    if event.format != Event.Format.SEATED:
        raise ServiceError(f"event {event.code} is not a seated event")
    if event.status != EventStatus.SCHEDULED:
        raise ConflictError(f"event {event.code} is {event.status}; cannot {what}")
    return event


def round_history(event: Event, before: int) -> list[tuple[str, ...]]:
    """The tables (external ids in seat order) of the event's rounds numbered below ``before``."""
    tables: dict[int, list[str]] = defaultdict(list)
    for table_id, key in (
        TableSeat.objects.filter(table__round__event=event, table__round__number__lt=before)
        .order_by("table__round__number", "table__number", "seat")
        .values_list("table_id", "player__external_id")
    ):
        tables[table_id].append(key)
    return [tuple(players) for players in tables.values()]


def points_before(event: Event, before: int, players: Iterable[str]) -> dict[str, float]:
    """Placement points of each player over the rounds numbered below ``before``."""
    totals = dict.fromkeys(players, 0.0)
    for key, points in (
        TableSeat.objects.filter(
            table__round__event=event, table__round__number__lt=before, points__isnull=False
        )
        .values("player__external_id")
        .annotate(points=Sum("points"))
        .values_list("player__external_id", "points")
    ):
        if key in totals and points is not None:
            totals[key] = float(points)
    return totals


def round_format_words(seated_round: SeatedRound) -> str:
    """How a round is played, in words for a message: "a cumulative match to 500"."""
    if seated_round.format == SeatedRound.Format.GAME:
        return "one game a table"
    if seated_round.format == SeatedRound.Format.PARTNERS:
        return f"rotating partners, {seated_round.games} games a table"
    article = "an" if seated_round.format == SeatedRound.Format.ELIMINATION else "a"
    return f"{article} {seated_round.format} match to {seated_round.target}"


def is_partners_event(event: Event) -> bool:
    """Whether the event is a rotating-partners team event (its rounds are partners rounds)."""
    return SeatedRound.objects.filter(event=event, format=SeatedRound.Format.PARTNERS).exists()


def seated_round_create(
    *,
    event: Event,
    by: User | None,
    seed: int | None = None,
    match: MatchFormat | None = None,
) -> SeatedRound:
    """Seat the next round of a seated event from ``seed`` (random when not given); with
    ``match`` every table plays a match of that scoring and target, else one game."""
    if seed is not None and not 0 <= seed < 2**63:
        raise ServiceError("seed must be an integer from 0 to 2^63 - 1", detail={"seed": seed})
    with transaction.atomic():
        locked = locked_seated(event.pk, "seat a round")
        if is_partners_event(locked):
            raise ConflictError(
                f"event {locked.code} is a rotating-partners event: its schedule seated all "
                "its rounds"
            )
        last = SeatedRound.objects.filter(event=locked).order_by("-number").first()
        number = 1 if last is None else last.number + 1
        if last is not None:
            open_tables = list(
                last.tables.filter(result_entered_at__isnull=True)
                .order_by("number")
                .values_list("number", flat=True)
            )
            if open_tables:
                raise ConflictError(
                    f"round {last.number} has tables without a result: "
                    f"{', '.join(map(str, open_tables))}",
                    detail={"tables": open_tables},
                )
        players = dict(
            Entry.objects.filter(event=locked).values_list("player__external_id", "player_id")
        )
        if len(players) < 3:
            raise ServiceError(
                f"event {locked.code} has {len(players)} entrants; a table needs at least 3"
            )
        chosen = secrets.randbits(SEED_BITS) if seed is None else seed
        tables = seat_round(
            sorted(players),
            round_no=number,
            seed=chosen,
            standings=None if number == 1 else points_before(locked, number, players),
            history=round_history(locked, number),
        )
        seated = SeatedRound.objects.create(
            event=locked,
            number=number,
            seed=chosen,
            format=SeatedRound.Format.GAME if match is None else match.scoring,
            target=None if match is None else match.target,
            created_by=by,
        )
        rows = SeatedTable.objects.bulk_create(
            [SeatedTable(round=seated, number=i) for i in range(1, len(tables) + 1)]
        )
        TableSeat.objects.bulk_create(
            [
                TableSeat(table=row, player_id=players[key], seat=position)
                for row, table in zip(rows, tables, strict=True)
                for position, key in enumerate(table, start=1)
            ]
        )
    return seated


def _checked_places(places: Mapping[str, int], players: Sequence[str]) -> dict[str, int]:
    if set(places) != set(players):
        raise ServiceError(
            f"give a place for exactly the table's players: {', '.join(players)}",
            detail={"places": sorted(set(places) ^ set(players))},
        )
    size = len(players)
    for key, place in places.items():
        if isinstance(place, bool) or not isinstance(place, int) or not 1 <= place <= size:
            raise ServiceError(
                f"{key}: place must be 1 to {size}, got {place!r}", detail={"places": key}
            )
        expected = 1 + sum(1 for other in places.values() if other < place)
        if place != expected:
            raise ServiceError(
                f"{key}: place {place} does not follow the others (a tie shares a place and "
                f"skips the next: 1, 1, 3, 4); expected {expected}",
                detail={"places": key},
            )
    return dict(places)


def seated_result_enter(
    *, table: SeatedTable, places: Mapping[str, int], by: User | None
) -> SeatedTable:
    """Enter (or re-enter, until the next round is seated) one table's result."""
    seated_round = SeatedRound.objects.get(pk=table.round_id)
    with transaction.atomic():
        event = locked_seated(seated_round.event_id, "enter results")
        locked = SeatedTable.objects.select_for_update().get(pk=table.pk)
        if seated_round.format != SeatedRound.Format.GAME:
            raise ConflictError(
                f"round {seated_round.number} is played as {round_format_words(seated_round)}: "
                "its tables' results follow from their games; enter the games",
                detail={"format": seated_round.format},
            )
        next_round_refuse(event, seated_round, "results")
        seats = list(locked.seats.select_related("player").order_by("seat"))
        result_write(event, locked, seats, places, by)
    return locked


def next_round_refuse(event: Event, seated_round: SeatedRound, what: str) -> None:
    """Refuse a change to a round once the next round is seated (its seating used it)."""
    if SeatedRound.objects.filter(event=event, number__gt=seated_round.number).exists():
        raise ConflictError(
            f"round {seated_round.number + 1} is already seated; round "
            f"{seated_round.number}'s {what} can no longer change"
        )


def result_write(
    event: Event,
    table: SeatedTable,
    seats: Sequence[TableSeat],
    places: Mapping[str, int],
    by: User | None,
) -> None:
    """Write a table's places and placement points and recompute its players' standings
    (the caller's transaction, the event and the table locked)."""
    keys = [seat.player.external_id for seat in seats]
    checked = _checked_places(places, keys)
    table_points = {
        int(size): tuple(points) for size, points in event.rule("placement_points").items()
    }
    try:
        awarded = placement_points(checked, points=table_points)
    except ValueError as exc:
        raise ServiceError(str(exc)) from None
    for seat in seats:
        seat.place = checked[seat.player.external_id]
        seat.points = awarded[seat.player.external_id]
    TableSeat.objects.bulk_update(seats, ["place", "points"])
    table.result_entered_at = timezone.now()
    table.result_entered_by = by
    table.save(update_fields=["result_entered_at", "result_entered_by"])
    seated_standings_recompute(event=event, player_ids=[seat.player_id for seat in seats])


def result_clear(event: Event, table: SeatedTable, seats: Sequence[TableSeat]) -> None:
    """Take a table's result back (a corrected match no longer decided; caller's
    transaction, the event and the table locked) and recompute its players' standings."""
    for seat in seats:
        seat.place = seat.points = None
    TableSeat.objects.bulk_update(seats, ["place", "points"])
    table.result_entered_at = None
    table.result_entered_by = None
    table.save(update_fields=["result_entered_at", "result_entered_by"])
    seated_standings_recompute(event=event, player_ids=[seat.player_id for seat in seats])


def seated_standings_recompute(*, event: Event, player_ids: Iterable[int]) -> int:
    """Rebuild the standings of these players from their table results (caller's
    transaction); returns the number of standings written."""
    ids = sorted(set(player_ids))
    if not ids:
        return 0
    players = Player.objects.in_bulk(ids)
    Standing.objects.bulk_create(
        [
            Standing(event=event, player_id=pk, player_key=p.external_id, province=p.province)
            for pk, p in sorted(players.items())
        ],
        ignore_conflicts=True,
    )
    rows = list(
        Standing.objects.select_for_update()
        .filter(event=event, player_id__in=ids)
        .order_by("player_id")
    )
    scores: defaultdict[int, list[tuple[int, datetime]]] = defaultdict(list)
    if is_partners_event(event):  # each game's score, at the time it was entered
        for player_id, score, entered_at in TableGameHand.objects.filter(
            game__table__round__event=event, seat__player_id__in=ids
        ).values_list("seat__player_id", "score", "game__entered_at"):
            scores[player_id].append((score, entered_at))
    for player_id, points, at in TableSeat.objects.filter(
        table__round__event=event,
        table__round__format__in=[
            SeatedRound.Format.GAME,
            SeatedRound.Format.CUMULATIVE,
            SeatedRound.Format.ELIMINATION,
        ],
        player_id__in=ids,
        points__isnull=False,
    ).values_list("player_id", "points", "table__result_entered_at"):
        if points is not None and at is not None:  # a table's points come with its entry time
            scores[player_id].append((points, at))
    now = timezone.now()
    for row in rows:
        played = scores[row.player_id]
        kept = standing_from_scores(row.player_key, row.province, played, max(1, len(played)))
        row.games, row.kept, row.total = kept.games, list(kept.kept), kept.total
        row.best, row.reached_at = kept.best, kept.reached_at
        row.eligible = kept.games >= SEATED_MINIMUM_TABLES
        row.updated_at = now
    Standing.objects.bulk_update(
        rows, ["games", "kept", "total", "best", "reached_at", "eligible", "updated_at"]
    )
    Event.objects.filter(pk=event.pk).update(leaderboard_version=F("leaderboard_version") + 1)
    return len(rows)
