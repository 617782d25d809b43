"""``manage.py titles_recompute``: replay every player's titles from the ledger (SPEC §6)."""

from typing import Any

from django.core.management.base import BaseCommand

from titles.recompute import titles_recompute_all


class Command(BaseCommand):
    help = "Replay all players' approved qualifications; writes only differences. Idempotent."

    def handle(self, *args: Any, **options: Any) -> None:
        replayed = titles_recompute_all(reason="titles_recompute command")
        self.stdout.write(f"{replayed} player(s) replayed")
