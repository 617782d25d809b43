"""The chances on each seat carry their kind (``Seat.chances``: quadruples of target player
id, kind, chances, punished — to punish, to challenge a +4, to hand over a better hand with
a 7; ``tournaments.domain.chances``). Every logged game's chances are read again from its
move log, as 0014 read them, into the new form."""

from importlib import import_module
from typing import Any

from django.db import migrations

_READ = import_module("tournaments.migrations.0014_seat_chances")


def reread(apps: Any, schema_editor: Any) -> None:
    apps.get_model("tournaments", "Seat").objects.filter(chances__isnull=False).update(chances=None)
    _READ.backfill(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [("tournaments", "0014_seat_chances")]

    operations = [migrations.RunPython(reread, migrations.RunPython.noop, elidable=True)]
