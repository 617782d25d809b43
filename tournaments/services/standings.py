"""Keep the live leaderboards (standings) up to date, incrementally (SPEC §4).

``standings_apply`` folds newly ingested game scores into each player's kept best-N with
``tournaments.domain.leaderboard.add_game``: it reads only the standing rows of the players
in the batch, never the event's other games. A game older than the standing's
``reached_at`` (a late arrival) makes that one standing be recomputed from its seats.
``standings_recompute`` rebuilds chosen standings from their non-voided seats (corrections).
Both run inside the caller's transaction, lock the rows they change in (event, player)
order, and bump the event's ``leaderboard_version`` so cached pages never outlive a write.
"""

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import F
from django.utils import timezone

from tournaments.domain.leaderboard import (
    OutOfOrderGameError,
    add_game,
    standing_from_scores,
)
from tournaments.domain.leaderboard import Standing as Kept
from tournaments.models import Event, Seat, Standing

CHUNK = 2000


@dataclass(frozen=True, slots=True)
class ScoreRow:
    """One new game score of a player in an event."""

    event_id: int
    player_id: int
    player_key: str
    province: str
    score: int
    ended_at: datetime


def _chunks(items: Sequence[int], size: int = CHUNK) -> Iterable[Sequence[int]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _locked_rows(event_id: int, player_ids: Sequence[int]) -> dict[int, Standing]:
    rows: dict[int, Standing] = {}
    for chunk in _chunks(sorted(player_ids)):
        for row in (
            Standing.objects.select_for_update()
            .filter(event_id=event_id, player_id__in=chunk)
            .order_by("player_id")
        ):
            rows[row.player_id] = row
    return rows


def _ensure_rows(event_id: int, players: dict[int, tuple[str, str]]) -> None:
    Standing.objects.bulk_create(
        [
            Standing(event_id=event_id, player_id=pid, player_key=key, province=province)
            for pid, (key, province) in sorted(players.items())
        ],
        ignore_conflicts=True,
        batch_size=CHUNK,
    )


def _as_kept(row: Standing) -> Kept:
    return Kept(
        player=row.player_key,
        province=row.province,
        games=row.games,
        kept=tuple(row.kept),
        total=row.total,
        best=row.best,
        reached_at=row.reached_at,
    )


def _scores_from_seats(
    event_id: int, player_ids: Sequence[int]
) -> dict[int, list[tuple[int, datetime]]]:
    scores: dict[int, list[tuple[int, datetime]]] = defaultdict(list)
    for chunk in _chunks(sorted(player_ids)):
        for player_id, score, ended_at in Seat.objects.filter(
            event_id=event_id, player_id__in=chunk, voided=False
        ).values_list("player_id", "score", "ended_at"):
            scores[player_id].append((score, ended_at))
    return scores


def _write(rows: list[tuple[Standing, Kept]], minimum_games: int) -> None:
    """Write changed standings with one prepared UPDATE per row (pipelined by psycopg)."""
    adapt = connection.ops.adapt_datetimefield_value  # stored as the ORM stores them
    now = adapt(timezone.now())
    table = Standing._meta.db_table
    params = [
        (
            kept.games,
            json.dumps(list(kept.kept)),
            kept.total,
            kept.best,
            adapt(kept.reached_at),
            kept.games >= minimum_games,
            now,
            row.pk,
        )
        for row, kept in rows
    ]
    with connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {table} SET games = %s, kept = %s, total = %s, best = %s, "  # noqa: S608
            "reached_at = %s, eligible = %s, updated_at = %s WHERE id = %s",
            params,
        )


def _bump_versions(event_ids: Iterable[int]) -> None:
    Event.objects.filter(pk__in=sorted(set(event_ids))).update(
        leaderboard_version=F("leaderboard_version") + 1
    )


def standings_apply(*, scores: Iterable[ScoreRow]) -> int:
    """Fold new game scores into the standings; returns the number of standings changed."""
    by_event: dict[int, dict[int, list[ScoreRow]]] = defaultdict(lambda: defaultdict(list))
    for row in scores:
        by_event[row.event_id][row.player_id].append(row)
    if not by_event:
        return 0
    events = {e.pk: e for e in Event.objects.select_related("season").filter(pk__in=by_event)}
    changed = 0
    for event_id in sorted(by_event):
        season = events[event_id].season
        per_player = by_event[event_id]
        _ensure_rows(
            event_id, {pid: (rs[0].player_key, rs[0].province) for pid, rs in per_player.items()}
        )
        locked = _locked_rows(event_id, list(per_player))
        updates: list[tuple[Standing, Kept]] = []
        late: list[int] = []
        for player_id, rows in per_player.items():
            row = locked[player_id]
            kept = _as_kept(row)
            try:
                for score_row in sorted(rows, key=lambda r: r.ended_at):
                    kept = add_game(kept, score_row.score, score_row.ended_at, season.best_n)
            except OutOfOrderGameError:
                late.append(player_id)
                continue
            updates.append((row, kept))
        if late:
            from_seats = _scores_from_seats(event_id, late)
            for player_id in late:
                row = locked[player_id]
                updates.append(
                    (
                        row,
                        standing_from_scores(
                            row.player_key, row.province, from_seats[player_id], season.best_n
                        ),
                    )
                )
        _write(updates, season.minimum_games)
        changed += len(updates)
    _bump_versions(by_event)
    return changed


def standings_recompute(*, event: Event, player_ids: Iterable[int]) -> int:
    """Rebuild the standings of these players in ``event`` from their non-voided seats.

    A player left with no valid game keeps a row with zero games (unranked), so the
    leaderboard shows that the correction happened rather than silently dropping them."""
    ids = sorted(set(player_ids))
    if not ids:
        return 0
    season = event.season
    locked = _locked_rows(event.pk, ids)
    from_seats = _scores_from_seats(event.pk, ids)
    updates = [
        (
            row,
            standing_from_scores(
                row.player_key, row.province, from_seats.get(pid, []), season.best_n
            ),
        )
        for pid, row in sorted(locked.items())
    ]
    _write(updates, season.minimum_games)
    _bump_versions([event.pk])
    return len(updates)
