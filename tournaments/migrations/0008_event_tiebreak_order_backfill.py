"""Finalised events keep the tie-break order they were ranked with: the season's of today,
which could not change while any of its events was finalised."""

from typing import Any

from django.db import migrations


def backfill(apps: Any, schema_editor: Any) -> None:
    Event = apps.get_model("tournaments", "Event")
    events = [
        event
        for event in Event.objects.filter(status="finalised").select_related("season")
        if "tiebreak_order" not in event.ruleset
    ]
    for event in events:
        event.ruleset = {**event.ruleset, "tiebreak_order": event.season.tiebreak_order}
    Event.objects.bulk_update(events, ["ruleset"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [("tournaments", "0007_event_ruleset_backfill")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
