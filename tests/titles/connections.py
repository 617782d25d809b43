"""The connections to the test database, as PostgreSQL counts them."""

import time

from django.db import connection


def backends() -> int:
    """The connections to this database (this one included)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
        (count,) = cursor.fetchone()
        return int(count)


def backends_once_closed(expected: int, *, timeout: float = 10.0) -> int:
    """The connections to this database once those closed have gone, or after ``timeout``
    seconds: a server process leaves ``pg_stat_activity`` when it has seen its client close,
    a moment after the close returns (longer on a busy machine). Returns the last count."""
    deadline = time.monotonic() + timeout
    while (count := backends()) != expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return count
