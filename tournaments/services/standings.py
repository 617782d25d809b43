"""Keep the live leaderboards (standings) up to date, incrementally (SPEC §4).

``standings_apply`` folds newly ingested game scores into each player's kept best-N as
``tournaments.domain.leaderboard.add_game`` does: it touches only the standing rows of the
players in the batch, never the event's other games. A game older than the standing's
``reached_at`` (a late arrival) makes that one standing be recomputed from its seats, as
``standing_from_scores`` does. The fold is set-based, in SQL: ``tournaments.sql``.
``standings_recompute`` rebuilds chosen standings from their non-voided seats with the
domain's ``standing_from_scores`` (corrections). All run inside the caller's transaction,
lock the rows they change in (event, player) order, and bump the event's
``leaderboard_version`` once per call, so cached pages never outlive a write.
"""

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime

from django.db import connection
from django.db.models import F
from django.utils import timezone

from tournaments.domain.leaderboard import Standing as Kept
from tournaments.domain.leaderboard import standing_from_scores
from tournaments.models import Event, Seat, Standing
from tournaments.sql import ScoreRow, merge_games, merge_scores

__all__ = ["ScoreRow", "standings_apply", "standings_apply_games", "standings_recompute"]

CHUNK = 2000


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
    """Fold new game scores into the standings; returns the number of standings changed.

    A player's ``player_key`` and ``province`` are those of the player's rows in the call
    (one player, one key and province); they are written when the standing is created."""
    rows = list(scores)
    if not rows:
        return 0
    changed, event_ids = merge_scores(rows)
    _bump_versions(event_ids)
    return changed


def standings_apply_games(*, game_ids: Iterable[int]) -> int:
    """`standings_apply` for the seats of these newly stored games (ingest's path): the
    scores are read where the seats were just written, with the players' current key and
    province. Returns the number of standings changed."""
    ids = sorted(set(game_ids))
    if not ids:
        return 0
    changed, event_ids = merge_games(ids)
    _bump_versions(event_ids)
    return changed


def standings_recompute(*, event: Event, player_ids: Iterable[int]) -> int:
    """Rebuild the standings of these players in ``event`` from their non-voided seats,
    under the event's best N and minimum (``Event.rule``).

    A player left with no valid game keeps a row with zero games (unranked), so the
    leaderboard shows that the correction happened rather than silently dropping them."""
    ids = sorted(set(player_ids))
    if not ids:
        return 0
    best_n, minimum_games = event.rule("best_n"), event.rule("minimum_games")
    locked = _locked_rows(event.pk, ids)
    from_seats = _scores_from_seats(event.pk, ids)
    updates = [
        (
            row,
            standing_from_scores(row.player_key, row.province, from_seats.get(pid, []), best_n),
        )
        for pid, row in sorted(locked.items())
    ]
    _write(updates, minimum_games)
    _bump_versions([event.pk])
    return len(updates)
