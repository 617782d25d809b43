"""Trigram indexes for player search: ``icontains`` compares ``UPPER(column)``, so a GIN
index with ``gin_trgm_ops`` on that expression serves a partial id or name in any case."""

from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
    ]

    operations = [
        TrigramExtension(),
        migrations.RunSQL(
            "CREATE INDEX player_id_trgm ON accounts_player "
            "USING gin (UPPER(external_id) gin_trgm_ops)",
            "DROP INDEX player_id_trgm",
        ),
        migrations.RunSQL(
            "CREATE INDEX player_name_trgm ON accounts_player USING gin (UPPER(name) gin_trgm_ops)",
            "DROP INDEX player_name_trgm",
        ),
    ]
