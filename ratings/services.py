"""Rate the games (SPEC §5: a multiplayer rating over all games; §8: every job idempotent).

The model is OpenSkill's Plackett–Luce with its defaults (mu 25, sigma 25/3, beta 25/6,
tau 25/300). A game is rated when it is not voided and has at least two seats that are not
voided; its seats are ranked by game score (``ratings.domain.ranking``) and every seat is
its own side. ``Rating.ordinal`` (the displayed rating) is ``mu - 3 * sigma``.

``ratings_update`` rates the games not yet rated, incrementally. It finds them in arrival
order (``Game.id``, read from the primary-key index: ``ended_at`` has no index of its own,
and game servers send batches concurrently, so a watermark on ``ended_at`` alone would miss
games that commit after a later-ending batch) and rates each chunk in (ended_at, record_id)
order. Besides the games above the arrival watermark it looks again at the last ``RESCAN``
ids below it for games that committed after a higher id had been scanned, and rates those
it finds unrated. So a late game (one that ended before a game already rated) is rated when
met, in arrival order, after the games rated before it; ``RatingState.late_games`` counts
them. The nightly ``ratings_replay`` recomputes everything from scratch in strict
(ended_at, record_id) order: it restores time order after late games, and it is also what
applies corrections made after a game was rated (a voided or restored game or player, a
fixed score), which the incremental run does not revisit.

Both services lock ``RatingState`` (pk 1) first, so runs never interleave: an update
waits while a replay runs. A game is never rated twice: the unique (player, game)
constraint on ``RatingHistory`` refuses it, and an update only takes games with no history.
Running either service twice changes nothing the second time.
"""

import logging
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import islice
from typing import NamedTuple

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, Max, OuterRef
from django.db.models.functions import Collate
from django.utils import timezone
from openskill.models import PlackettLuce

from ratings.domain.ranking import seat_ranks
from ratings.models import Rating, RatingHistory, RatingState
from tournaments.models import Game, Seat

logger = logging.getLogger(__name__)

MODEL = PlackettLuce()
CHUNK = 5000  # games rated per transaction (update) and per batch of history rows (replay)
RESCAN = 20_000  # game ids below the arrival watermark looked at again for late commits
IN_CHUNK = 2000  # ids per IN (...) list


@dataclass(frozen=True, slots=True)
class _Game:
    pk: int
    ended_at: datetime
    record_id: str

    @property
    def key(self) -> tuple[datetime, str]:
        return (self.ended_at, self.record_id)


class _Point(NamedTuple):
    """One RatingHistory row, in the table's column order."""

    player_id: int
    game_id: int
    ended_at: datetime
    mu: float
    sigma: float
    ordinal: float
    games: int


@dataclass(slots=True)
class _Current:
    mu: float
    sigma: float
    games: int


def ordinal(mu: float, sigma: float) -> float:
    """The displayed rating: the conservative estimate ``mu - 3 * sigma``."""
    return mu - 3 * sigma


def provisional_games() -> int:
    return int(settings.RATING_PROVISIONAL_GAMES)


def _batched(items: Iterable[tuple[int, datetime, str]], size: int) -> Iterator[list[_Game]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield [_Game(*row) for row in batch]


def _in_chunks(ids: Sequence[int]) -> Iterator[Sequence[int]]:
    for start in range(0, len(ids), IN_CHUNK):
        yield ids[start : start + IN_CHUNK]


def _seats(games: Sequence[_Game]) -> dict[int, list[tuple[int, int]]]:
    """(player id, score) of each game's seats that are not voided, in seat order."""
    seats: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for ids in _in_chunks(sorted(g.pk for g in games)):
        for game_id, player_id, score in (
            Seat.objects.filter(game_id__in=ids, voided=False)
            .order_by("game_id", "seat")
            .values_list("game_id", "player_id", "score")
        ):
            seats[game_id].append((player_id, score))
    return seats


def _rate(
    games: Sequence[_Game],
    seats: dict[int, list[tuple[int, int]]],
    table: dict[int, _Current],
) -> tuple[list[_Point], list[_Game]]:
    """Rate ``games`` in the order given, updating ``table`` (player id → current) in place.

    A player missing from the table starts at the model's default. Returns the history rows
    and the games rated (a game with fewer than two seats left is skipped)."""
    history: list[_Point] = []
    rated: list[_Game] = []
    for game in games:
        rows = seats.get(game.pk, [])
        if len(rows) < 2:
            continue
        players = [player_id for player_id, _ in rows]
        before = [table.get(player_id) for player_id in players]
        teams = [
            [MODEL.rating() if now is None else MODEL.rating(mu=now.mu, sigma=now.sigma)]
            for now in before
        ]
        ranks: list[float] = [*seat_ranks([score for _, score in rows])]
        after = MODEL.rate(teams, ranks=ranks)
        for player_id, now, (new,) in zip(players, before, after, strict=True):
            current = _Current(new.mu, new.sigma, 1 if now is None else now.games + 1)
            table[player_id] = current
            history.append(
                _Point(
                    player_id,
                    game.pk,
                    game.ended_at,
                    current.mu,
                    current.sigma,
                    ordinal(current.mu, current.sigma),
                    current.games,
                )
            )
        rated.append(game)
    return history, rated


def _insert_history(points: list[_Point]) -> None:
    """Insert history rows by COPY: a rating run with bulk_create spends most of its time
    preparing each value of each row."""
    if not points:
        return
    table = RatingHistory._meta.db_table
    columns = ", ".join(_Point._fields)
    with connection.cursor() as cursor, cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        for point in points:
            copy.write_row(point)


def _rating_rows(table: dict[int, _Current], player_ids: Iterable[int]) -> list[Rating]:
    now = timezone.now()
    threshold = provisional_games()
    return [
        Rating(
            player_id=player_id,
            mu=table[player_id].mu,
            sigma=table[player_id].sigma,
            ordinal=ordinal(table[player_id].mu, table[player_id].sigma),
            games=table[player_id].games,
            provisional=table[player_id].games < threshold,
            updated_at=now,
        )
        for player_id in sorted(player_ids)
    ]


def _by_code_point(field: str) -> Collate:
    """Order text as Python compares it (code points), whatever the database's collation:
    the update's watermark and the replay must agree on ties of ``ended_at``."""
    return Collate(field, "C")


def _locked_state() -> RatingState:
    RatingState.objects.get_or_create(pk=1)
    return RatingState.objects.select_for_update().get(pk=1)


def _unrated_below(scanned: int, size: int) -> list[_Game]:
    """Games below the arrival watermark, within ``RESCAN`` ids of it, that have no history:
    committed after a higher id had been scanned."""
    return [
        _Game(*row)
        for row in Game.objects.filter(
            pk__gt=max(scanned - RESCAN, 0), pk__lte=scanned, voided=False
        )
        .filter(~Exists(RatingHistory.objects.filter(game_id=OuterRef("pk"))))
        .order_by("pk")
        .values_list("pk", "ended_at", "record_id")[:size]
    ]


def _arrivals(scanned: int, size: int) -> list[tuple[int, datetime, str, bool]]:
    if size <= 0:
        return []
    return list(
        Game.objects.filter(pk__gt=scanned)
        .order_by("pk")
        .values_list("pk", "ended_at", "record_id", "voided")[:size]
    )


def _rate_chunk(state: RatingState, games: list[_Game]) -> int:
    """Rate a chunk of unrated games on top of the stored ratings; write history and ratings;
    advance the time watermark and count late games. Returns the number of games rated."""
    games.sort(key=lambda g: g.key)
    seats = _seats(games)
    player_ids = sorted({player_id for rows in seats.values() for player_id, _ in rows})
    table: dict[int, _Current] = {}
    for ids in _in_chunks(player_ids):
        for player_id, mu, sigma, played in Rating.objects.filter(player_id__in=ids).values_list(
            "player_id", "mu", "sigma", "games"
        ):
            table[player_id] = _Current(mu, sigma, played)
    history, rated = _rate(games, seats, table)
    _insert_history(history)
    Rating.objects.bulk_create(
        _rating_rows(table, {row.player_id for row in history}),
        batch_size=CHUNK,
        update_conflicts=True,
        unique_fields=["player"],
        update_fields=["mu", "sigma", "ordinal", "games", "provisional", "updated_at"],
    )
    watermark = (
        (state.rated_until_ended_at, state.rated_until_record_id)
        if state.rated_until_ended_at is not None
        else None
    )
    for game in rated:
        if watermark is not None and game.key < watermark:
            state.late_games += 1
        else:
            watermark = game.key
    if watermark is not None:
        state.rated_until_ended_at, state.rated_until_record_id = watermark
    state.games_rated += len(rated)
    return len(rated)


def ratings_update(*, limit: int | None = None) -> int:
    """Rate the games not yet rated, in chunks of ``CHUNK`` games, each chunk in its own
    transaction; take at most ``limit`` games (all of them when None). Returns the number
    of games rated."""
    rated = 0
    taken = 0
    rescan = True
    while limit is None or taken < limit:
        size = CHUNK if limit is None else min(CHUNK, limit - taken)
        with transaction.atomic():
            state = _locked_state()
            pending = _unrated_below(state.scanned_game_id, size) if rescan else []
            arrivals = _arrivals(state.scanned_game_id, size - len(pending))
            if not pending and not arrivals:
                break
            games = pending + [_Game(pk, e, r) for pk, e, r, voided in arrivals if not voided]
            rated += _rate_chunk(state, games)
            if arrivals:
                state.scanned_game_id = arrivals[-1][0]
            state.updated_at = timezone.now()
            state.save()
        rescan = False
        taken += len(games)
    logger.info("ratings_update rated %d games", rated)
    return rated


def ratings_replay() -> int:
    """Recompute every rating from scratch: all non-voided games in (ended_at, record_id)
    order, in one transaction (readers see the old ratings until it commits). Deterministic:
    the same games give bit-identical floats. Returns the number of games rated."""
    with transaction.atomic():
        state = _locked_state()
        last_id = Game.objects.aggregate(last=Max("pk"))["last"] or 0
        RatingHistory.objects.all().delete()
        Rating.objects.all().delete()
        table: dict[int, _Current] = {}
        rated = 0
        last: _Game | None = None
        rows = (
            Game.objects.filter(pk__lte=last_id, voided=False)
            .order_by("ended_at", _by_code_point("record_id"))
            .values_list("pk", "ended_at", "record_id")
        )
        for games in _batched(rows.iterator(chunk_size=CHUNK), CHUNK):
            history, done = _rate(games, _seats(games), table)
            _insert_history(history)
            rated += len(done)
            last = done[-1] if done else last
        Rating.objects.bulk_create(_rating_rows(table, table), batch_size=CHUNK)
        state.scanned_game_id = last_id
        state.rated_until_ended_at = last.ended_at if last else None
        state.rated_until_record_id = last.record_id if last else ""
        state.games_rated = rated
        state.late_games = 0
        state.replayed_at = state.updated_at = timezone.now()
        state.save()
    logger.info("ratings_replay rated %d games up to game id %d", rated, last_id)
    return rated
