"""The standings merge of SPEC §4 in SQL: the best-N rule of
``tournaments.domain.leaderboard`` (``add_game``, falling back to ``standing_from_scores``
for a late game) applied to a whole batch of new scores at once.

This is the one SQL accelerator of the leaderboard rule; its equality test against the pure
rule on random batches is ``tests/tournaments/test_standings_sql.py``.

The batch's scores (COPYed into a temporary table by `merge_scores`, or read back from the
new games' seats by `merge_games`, ingest's path) are reduced per (event, player) to the
batch's own best N and merged by one ``INSERT … ON CONFLICT (player, event) DO UPDATE``.
The merge follows the domain's rule: the kept scores are the best N of the stored kept
scores and the new ones, an equal score counting as the earlier game (stored kept games all
ended no later than ``reached_at``, so before every new game), and ``reached_at`` moves to
the latest new game kept. A new game that ended before the stored ``reached_at`` (a late
arrival) makes that standing be recomputed from its non-voided seats. The conflict branch
reads the row it has locked, so a concurrent writer's update is never lost. Runs inside
the caller's transaction.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from accounts.models import Player
from tournaments.models import Event, Season, Seat, Standing
from tournaments.services.game_copy import copy_text


@dataclass(frozen=True, slots=True)
class ScoreRow:
    """One new game score of a player in an event."""

    event_id: int
    player_id: int
    player_key: str
    province: str
    score: int
    ended_at: datetime


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


def merge_scores(scores: Sequence[ScoreRow]) -> tuple[int, list[int]]:
    """COPY these scores into a temporary table and merge them; return the number of
    standings changed and the events they belong to."""
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
        changed, event_ids = _merge(cursor, SCORES, {})
        cursor.execute(f"DROP TABLE {SCORES}")
    return changed, event_ids


def merge_games(game_ids: Sequence[int]) -> tuple[int, list[int]]:
    """Merge the scores of the seats of these newly stored games, read where the seats were
    just written with the players' current key and province; return the number of
    standings changed and the events they belong to."""
    source = _GAME_SEATS_SQL.format(seat=Seat._meta.db_table, player=Player._meta.db_table)
    with transaction.atomic(), connection.cursor() as cursor:
        return _merge(cursor, source, {"games": list(game_ids)})


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
