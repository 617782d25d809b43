"""The one statement of the notices app that the ORM cannot say: insert the notices whose
key is new and return exactly those (``INSERT … ON CONFLICT (key) DO NOTHING RETURNING``).

``bulk_create(ignore_conflicts=True)`` inserts the same rows but cannot tell which were new,
and "select the keys, then insert the missing" lets two writers both believe they wrote a
notice (and deliver it twice). Here the unique index decides, in one statement per batch:
the rows come in as one array per column (``unnest``), in the order given, so their ids
follow that order.
"""

import json
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from django.db import connection

from notices.models import Notice

#: Notices per statement.
BATCH = 1000

Row = tuple[str, int, str, dict[str, Any], date]


def notices_insert_new(rows: Sequence[Row], *, at: datetime) -> list[tuple[int, str]]:
    """Insert ``(key, player id, kind, params, on)`` rows created ``at``, skipping keys that
    exist; returns ``(id, key)`` of the rows inserted, in id order."""
    table = connection.ops.quote_name(Notice._meta.db_table)
    sql = (
        f'INSERT INTO {table} ("key", "player_id", "kind", "params", "on", "created_at") '  # noqa: S608
        "SELECT k, p, c, j::jsonb, o, %s "
        "FROM unnest(%s::varchar[], %s::bigint[], %s::varchar[], %s::text[], %s::date[]) "
        "WITH ORDINALITY AS t(k, p, c, j, o, n) ORDER BY n "
        'ON CONFLICT ("key") DO NOTHING RETURNING "id", "key"'
    )
    inserted: list[tuple[int, str]] = []
    with connection.cursor() as cursor:
        for start in range(0, len(rows), BATCH):
            batch = rows[start : start + BATCH]
            cursor.execute(
                sql,
                [
                    at,
                    [row[0] for row in batch],
                    [row[1] for row in batch],
                    [row[2] for row in batch],
                    [json.dumps(row[3], ensure_ascii=False, sort_keys=True) for row in batch],
                    [row[4] for row in batch],
                ],
            )
            inserted += cursor.fetchall()
    return sorted(inserted)
