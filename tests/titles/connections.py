"""The connections to the test database, as PostgreSQL counts them."""

from django.db import connection


def backends() -> int:
    """The connections to this database (this one included)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
        (count,) = cursor.fetchone()
        return int(count)
