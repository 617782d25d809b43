"""The SQL accelerators of tournaments' SPEC rules, each the twin of a pure rule in
``tournaments.domain.leaderboard`` and tested equal to it on random cases:

* **The standings merge** (SPEC §4 best-N; ``add_game``, falling back to
  ``standing_from_scores`` for a late game), applied to a whole batch of new scores at once
  (`merge_scores`, `merge_games`). Equality test: ``tests/tournaments/test_sql.py``.
* **The rank windows** (SPEC §4, §5: the season's tie-break order, strict ranks of the
  eligible rows, nationally and per province; ``rank`` and ``rank_in_province``):
  ``ROW_NUMBER() OVER (ORDER BY …)`` / ``OVER (PARTITION BY province ORDER BY …)`` for the
  top rows the finalisation needs (`leaderboard_top`) and a whole board's ranks
  (`leaderboard_ranks`). Equality tests: ``tests/tournaments/test_sql.py`` and
  ``tests/tournaments/test_leaderboard.py``.

The merge: the batch's scores (COPYed into a temporary table by `merge_scores`, or read back
from the new games' seats by `merge_games`, ingest's path) are reduced per (event, player) to
the batch's own best N and merged by one ``INSERT … ON CONFLICT (player, event) DO UPDATE``.
The kept scores are the best N of the stored kept scores and the new ones, an equal score
counting as the earlier game (stored kept games all ended no later than ``reached_at``, so
before every new game), and ``reached_at`` moves to the latest new game kept. A new game
that ended before the stored ``reached_at`` (a late arrival) makes that standing be
recomputed from its non-voided seats. The conflict branch reads the row it has locked, so a
concurrent writer's update is never lost. Runs inside the caller's transaction.

The rank windows: for the default order the ORDER BY is the column order of the ranking
indexes; any other order names ``NULLS LAST`` as the tie-break registry says.
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from accounts.models import Player
from tournaments.domain.leaderboard import DEFAULT_ORDER, TieBreak, resolve_order
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


# --- the rank windows ------------------------------------------------------------------


def order_column(tiebreak: TieBreak) -> str:
    """The standings column a tie-break reads."""
    return "player_key" if tiebreak.column == "player" else tiebreak.column


def event_tiebreaks(event: Event) -> tuple[tuple[TieBreak, ...], bool]:
    """The event's tie-breaks (those it was finalised with, else the season's), and whether
    they are the default order (the indexes')."""
    tiebreaks = resolve_order(event.rule("tiebreak_order"))
    return tiebreaks, tuple(t.name for t in tiebreaks) == DEFAULT_ORDER


def ranking_order_sql(event: Event) -> str:
    """The same order as SQL, for window functions."""
    tiebreaks, default = event_tiebreaks(event)
    parts = []
    for tiebreak in tiebreaks:
        part = connection.ops.quote_name(order_column(tiebreak))
        part += " DESC" if tiebreak.descending else " ASC"
        if tiebreak.nulls_last and not default:
            part += " NULLS LAST"
        parts.append(part)
    return ", ".join(parts)


def _ranked_sql(event: Event, columns: tuple[str, ...], *, where: str = "") -> str:
    """SELECT ``columns`` and both ranks (``rn`` national, ``prn`` in the province) of the
    event's eligible rows, by window functions over the season's order; ``where`` narrows
    the rows before they are ranked (parameters: the event, True, then ``where``'s)."""
    quote = connection.ops.quote_name
    order = ranking_order_sql(event)
    return (
        f"SELECT {', '.join(map(quote, columns))}, "  # noqa: S608
        f"ROW_NUMBER() OVER (ORDER BY {order}) AS rn, "
        f"ROW_NUMBER() OVER (PARTITION BY {quote('province')} ORDER BY {order}) AS prn "
        f"FROM {quote(Standing._meta.db_table)} "
        f"WHERE {quote('event_id')} = %s AND {quote('eligible')} = %s{where}"
    )


def _cut_sql(event: Event, *, national: int, per_province: int) -> tuple[str, list[Any]]:
    """SQL and parameters of the lowest total a row can have and still be within the
    national top ``national`` or its province's top ``per_province`` (0: no such list): the
    total of the X-th (Y-th) row, or of the last one when there are fewer, read on the
    indexes. The provinces are found by a loose index scan (a recursive CTE: one probe
    each), so no part of the board is read beyond the cut-offs."""
    quote = connection.ops.quote_name
    table = quote(Standing._meta.db_table)
    event_id, province, eligible, total = (
        quote(c) for c in ("event_id", "province", "eligible", "total")
    )
    rows = f"FROM {table} WHERE {event_id} = %s AND {eligible} = %s"
    in_province = f"{rows} AND {province} = provinces.name"
    cuts: list[str] = []
    params: list[Any] = [event.pk, event.pk]
    if national > 0:
        cuts.append(
            f"SELECT COALESCE((SELECT {total} {rows} ORDER BY {total} DESC "  # noqa: S608
            f"LIMIT 1 OFFSET %s), (SELECT MIN({total}) {rows})) AS cut"
        )
        params += [event.pk, True, national - 1, event.pk, True]
    if per_province > 0:
        cuts.append(
            f"SELECT COALESCE((SELECT {total} {in_province} ORDER BY {total} DESC "  # noqa: S608
            f"LIMIT 1 OFFSET %s), (SELECT MIN({total}) {in_province})) AS cut "
            "FROM provinces WHERE name IS NOT NULL"
        )
        params += [event.pk, True, per_province - 1, event.pk, True]
    sql = (
        "WITH RECURSIVE provinces(name) AS ("  # noqa: S608
        f"SELECT MIN({province}) FROM {table} WHERE {event_id} = %s UNION ALL "
        f"SELECT (SELECT MIN({province}) FROM {table} WHERE {event_id} = %s "
        f"AND {province} > provinces.name) FROM provinces WHERE name IS NOT NULL) "
        f"SELECT MIN(cut) FROM ({' UNION ALL '.join(cuts)}) AS cuts"
    )
    return sql, params


@dataclass(frozen=True, slots=True)
class RankedStanding:
    """An eligible row with both its ranks (a ``tournaments.domain.advancement`` row)."""

    player_id: int
    player: str
    province: str
    rank: int
    province_rank: int


def leaderboard_top(event: Event, *, national: int, per_province: int) -> list[RankedStanding]:
    """The eligible rows within the national top ``national`` or their province's top
    ``per_province`` (0: that list is empty), with both ranks, in national order.

    One window-function query, filtered in SQL, so only these rows leave the database. It
    ranks only the rows whose total reaches the cut (``_cut_sql``, read first on the
    indexes, so that the planner knows how few rows reach it): every row ranked above a
    kept row has a total at least as high (``total`` leads every order), so the kept rows
    get exactly the ranks they have on the whole board.
    """
    if national <= 0 and per_province <= 0:
        return []
    cut_sql, cut_params = _cut_sql(event, national=national, per_province=per_province)
    total = connection.ops.quote_name("total")
    ranked = _ranked_sql(
        event, ("player_id", "player_key", "province"), where=f" AND {total} >= %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(cut_sql, cut_params)
        (cut,) = cursor.fetchone()
        if cut is None:  # no eligible row
            return []
        cursor.execute(
            f"SELECT * FROM ({ranked}) AS ranked WHERE rn <= %s OR prn <= %s ORDER BY rn",  # noqa: S608
            [event.pk, True, cut, national, per_province],
        )
        return [RankedStanding(*row) for row in cursor.fetchall()]


def leaderboard_ranks(
    event: Event, *, province: str | None = None, chunk: int = 2000
) -> Iterator[tuple[str, int, int]]:
    """(player, national rank, province rank) of every eligible row of the board (national,
    or one province's), in the board's order: one window-function query, read in chunks of
    ``chunk`` rows (a whole board: exports)."""
    ranked = _ranked_sql(event, ("player_key", "province"))
    sql = f"SELECT player_key, rn, prn FROM ({ranked}) AS ranked"  # noqa: S608
    params: list[Any] = [event.pk, True]
    if province:
        sql += " WHERE province = %s"
        params.append(province)
    with connection.chunked_cursor() as cursor:
        cursor.execute(f"{sql} ORDER BY rn", params)
        while rows := cursor.fetchmany(chunk):
            yield from rows
