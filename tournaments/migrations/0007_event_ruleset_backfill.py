"""The events finalised before rulesets were versioned keep the season's rules of today."""

from typing import Any

from django.db import migrations

RULE_FIELDS = (
    "best_n",
    "minimum_games",
    "quotas",
    "card_table",
    "singles_scoring",
    "placement_points",
)


def backfill(apps: Any, schema_editor: Any) -> None:
    Event = apps.get_model("tournaments", "Event")
    events = list(Event.objects.filter(status="finalised", ruleset={}).select_related("season"))
    for event in events:
        event.ruleset = {name: getattr(event.season, name) for name in RULE_FIELDS}
    Event.objects.bulk_update(events, ["ruleset"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [("tournaments", "0006_event_ruleset_field_change")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
