"""``manage.py identifiers_check``: list the stored player ids, game ids and event codes that
are not identifiers (``core.domain.text``: ASCII letters, digits, ``-`` ``_`` ``.``) and the
names that hold hidden or reordering characters, stored before ingest refused them. Prints
one line per finding; exits 1 when there is any, so it can gate a deployment."""

from collections.abc import Iterable
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from accounts.models import Player
from core.domain.text import ident_problem, name_clean
from tournaments.models import Event, Game


def _findings() -> Iterable[str]:
    for key, name in Player.objects.values_list("external_id", "name").iterator(5000):
        problem = ident_problem(key)
        if problem is not None:
            yield f"player {key!r}: id {problem}"
        _, problem = name_clean(name)
        if problem is not None:
            yield f"player {key!r}: name {problem}"
    for record_id in Game.objects.values_list("record_id", flat=True).iterator(5000):
        problem = ident_problem(record_id)
        if problem is not None:
            yield f"game {record_id!r}: id {problem}"
    for code in Event.objects.values_list("code", flat=True):
        problem = ident_problem(code)
        if problem is not None:
            yield f"event {code!r}: code {problem}"


class Command(BaseCommand):
    help = "List stored ids, codes and names that break the identifier and name rules."

    def handle(self, *args: Any, **options: Any) -> None:
        found = 0
        for line in _findings():
            self.stdout.write(line)
            found += 1
        if found:
            raise CommandError(f"{found} stored values break the rules (core.domain.text)")
        self.stdout.write("every stored id, code and name follows the rules")
