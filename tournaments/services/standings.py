"""Keep the live leaderboards (standings) up to date, incrementally (SPEC §4).

``standings_apply`` folds newly ingested game scores into each player's kept best-N as
``tournaments.domain.leaderboard.add_game`` does: it reads only the standing rows of the
players in the batch, never the event's other games. A game older than the standing's
``reached_at`` (a late arrival) makes that one standing be recomputed from its seats, as
``standing_from_scores`` does. ``standings_recompute`` rebuilds chosen standings from their
non-voided seats (corrections). Both run inside the caller's transaction, lock the rows they
change in (event, player) order, and bump the event's ``leaderboard_version`` once per call,
so cached pages never outlive a write.

On PostgreSQL the fold is set-based (`_merge`): the batch's scores (COPYed into a temporary
table by ``standings_apply``, read back from the new games' seats by ``standings_apply_games``,
ingest's path) are reduced per (event, player) to the batch's own best N and merged by one
``INSERT … ON CONFLICT (player, event) DO UPDATE``. The merge follows the domain's rule:
the kept scores are the best N of the stored kept scores and the new ones, an equal score
counting as the earlier game (stored kept games all ended no later than ``reached_at``, so
before every new game), and ``reached_at`` moves to the latest new game kept. The conflict
branch reads the row it has locked, so a concurrent writer's update is never lost. SQLite
folds with the domain functions in Python (`_apply_python`).
"""

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import Player
from tournaments.domain.leaderboard import (
    OutOfOrderGameError,
    add_game,
    standing_from_scores,
)
from tournaments.domain.leaderboard import Standing as Kept
from tournaments.models import Event, Season, Seat, Standing
from tournaments.services.game_copy import copy_text

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
    """Fold new game scores into the standings; returns the number of standings changed.

    A player's ``player_key`` and ``province`` are those of the player's rows in the call
    (one player, one key and province); they are written when the standing is created."""
    rows = list(scores)
    if not rows:
        return 0
    apply = _apply_sql if connection.vendor == "postgresql" else _apply_python
    changed = apply(rows)
    _bump_versions(row.event_id for row in rows)
    return changed


def _apply_python(scores: Iterable[ScoreRow]) -> int:
    by_event: dict[int, dict[int, list[ScoreRow]]] = defaultdict(lambda: defaultdict(list))
    for score in scores:
        by_event[score.event_id][score.player_id].append(score)
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
    return changed


SCORES = "standings_new_score"
BATCH = "standings_new_batch"

# The scores of newly stored games, read back from their seats (`standings_apply_games`).
_GAME_SEATS_SQL = """(
SELECT t.event_id, t.player_id, p.external_id AS player_key, p.province, t.score, t.ended_at
FROM {seat} t JOIN {player} p ON p.id = t.player_id
WHERE t.game_id = ANY(%(games)s)
)"""

# The batch reduced per (event, player): its game count, best score, first end time and its
# own best N scores (score descending, an equal score's earlier game first) with their end
# times; the season's N and minimum come along.
_BATCH_SQL = """
CREATE TEMP TABLE {batch} ON COMMIT DROP AS
SELECT event_id, player_id, min(player_key) AS player_key, min(province) AS province,
       count(*)::int AS games, max(score) AS best, min(ended_at) AS first_end,
       array_agg(score ORDER BY score DESC, ended_at) FILTER (WHERE rn <= best_n) AS scores,
       array_agg(ended_at ORDER BY score DESC, ended_at) FILTER (WHERE rn <= best_n) AS ended,
       min(best_n) AS best_n, min(minimum_games) AS minimum_games
FROM (
    SELECT n.*, season.best_n, season.minimum_games,
           row_number() OVER (
               PARTITION BY n.event_id, n.player_id ORDER BY n.score DESC, n.ended_at
           ) AS rn
    FROM {source} n
    JOIN {event} event ON event.id = n.event_id
    JOIN {season} season ON season.id = event.season_id
) ranked
GROUP BY event_id, player_id
"""

# A new standing is the batch's own; a stored one merges under its row lock. ``late``: a new
# game ended before the stored reached_at, so the standing is recomputed from its seats (the
# batch's seats are stored already). Otherwise the candidates are the stored kept scores
# (src 0: earlier than any new game, so an equal new score does not displace them) and the
# batch's best N (src 1); the best N of them are kept and reached_at moves to the latest new
# game among them.
_MERGE_SQL = """
INSERT INTO {standing} AS s (
    event_id, player_id, player_key, province, games, kept, total, best, reached_at,
    eligible, rank, province_rank, advanced, by_national, by_province, updated_at
)
SELECT b.event_id, b.player_id, b.player_key, b.province, b.games, to_jsonb(b.scores),
       (SELECT sum(x) FROM unnest(b.scores) AS x)::int, b.best,
       (SELECT max(x) FROM unnest(b.ended) AS x), b.games >= b.minimum_games,
       NULL, NULL, false, false, false, %(now)s
FROM {batch} b
ORDER BY b.event_id, b.player_id
ON CONFLICT (player_id, event_id) DO UPDATE
SET (games, kept, total, best, reached_at, eligible, updated_at) = (
    SELECT merged.games, chosen.kept, chosen.total, merged.best, chosen.reached_at,
           merged.games >= b.minimum_games, excluded.updated_at
    FROM {batch} b
    CROSS JOIN LATERAL (
        SELECT s.reached_at IS NOT NULL AND b.first_end < s.reached_at AS late
    ) l
    CROSS JOIN LATERAL (
        SELECT coalesce(jsonb_agg(c.score ORDER BY c.score DESC), '[]'::jsonb) AS kept,
               coalesce(sum(c.score), 0)::int AS total,
               coalesce(max(c.ended), s.reached_at) AS reached_at
        FROM (
            SELECT k.score, k.ended FROM (
                SELECT value::int AS score, 0 AS src, NULL::timestamptz AS ended
                FROM jsonb_array_elements_text(s.kept) WHERE NOT l.late
                UNION ALL
                SELECT u.score, 1, u.ended
                FROM unnest(b.scores, b.ended) AS u (score, ended) WHERE NOT l.late
                UNION ALL
                SELECT t.score, 1, t.ended_at FROM {seat} t
                WHERE l.late AND t.event_id = s.event_id AND t.player_id = s.player_id
                  AND NOT t.voided
            ) k
            ORDER BY k.score DESC, k.src, k.ended
            LIMIT b.best_n
        ) c
    ) chosen
    CROSS JOIN LATERAL (
        SELECT count(*)::int AS games, max(t.score) AS best FROM {seat} t
        WHERE l.late AND t.event_id = s.event_id AND t.player_id = s.player_id
          AND NOT t.voided
    ) seats
    CROSS JOIN LATERAL (
        SELECT CASE WHEN l.late THEN seats.games ELSE s.games + b.games END AS games,
               CASE WHEN l.late THEN seats.best ELSE greatest(s.best, b.best) END AS best
    ) merged
    WHERE b.event_id = excluded.event_id AND b.player_id = excluded.player_id
)
"""


def _apply_sql(scores: Sequence[ScoreRow]) -> int:
    """PostgreSQL: COPY the scores into a temporary table and merge them."""
    lines = "".join(
        f"{row.event_id}\t{row.player_id}\t{copy_text(row.player_key)}\t"
        f"{copy_text(row.province)}\t{row.score}\t{row.ended_at.isoformat()}\n"
        for row in scores
    )
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TEMP TABLE {SCORES} (event_id bigint, player_id bigint, player_key text, "
            "province text, score integer, ended_at timestamptz) ON COMMIT DROP"
        )
        with cursor.copy(f"COPY {SCORES} FROM STDIN") as copy:
            copy.write(lines)
        changed, _ = _merge(cursor, SCORES, {})
        cursor.execute(f"DROP TABLE {SCORES}")
    return changed


def standings_apply_games(*, game_ids: Iterable[int]) -> int:
    """`standings_apply` for the seats of these newly stored games (ingest's path): the
    scores are read where the seats were just written, with the players' current key and
    province. Returns the number of standings changed."""
    ids = sorted(set(game_ids))
    if not ids:
        return 0
    if connection.vendor != "postgresql":
        return standings_apply(
            scores=[
                ScoreRow(*values)
                for chunk in _chunks(ids)
                for values in Seat.objects.filter(game_id__in=chunk).values_list(
                    "event_id",
                    "player_id",
                    "player__external_id",
                    "player__province",
                    "score",
                    "ended_at",
                )
            ]
        )
    source = _GAME_SEATS_SQL.format(seat=Seat._meta.db_table, player=Player._meta.db_table)
    with transaction.atomic(), connection.cursor() as cursor:
        changed, event_ids = _merge(cursor, source, {"games": ids})
    _bump_versions(event_ids)
    return changed


def _merge(cursor: Any, source: str, params: dict[str, Any]) -> tuple[int, list[int]]:
    """Reduce the scores of ``source`` per (event, player) and merge them into the
    standings; return the number of standings changed and the events they belong to."""
    tables = {
        "source": source,
        "batch": BATCH,
        "event": Event._meta.db_table,
        "season": Season._meta.db_table,
        "standing": Standing._meta.db_table,
        "seat": Seat._meta.db_table,
    }
    cursor.execute(_BATCH_SQL.format(**tables), params)
    cursor.execute(f"ALTER TABLE {BATCH} ADD PRIMARY KEY (event_id, player_id)")
    cursor.execute(f"SELECT DISTINCT event_id FROM {BATCH}")  # noqa: S608
    event_ids = [event_id for (event_id,) in cursor.fetchall()]
    cursor.execute(_MERGE_SQL.format(**tables), {"now": timezone.now()})
    changed = cursor.rowcount
    cursor.execute(f"DROP TABLE {BATCH}")
    return changed, event_ids


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
