"""``manage.py notices_expiring [--today YYYY-MM-DD [--simulate]]``: the players' "Master
ends in 30 / 7 days" notices due that day (``flows.notices.expiring_notices_write``; the
beat runs it daily as ``titles.expiring_notices``). A ``--today`` after the tour day needs
``--simulate`` (logged)."""

from datetime import date
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.errors import ServiceError
from flows.notices import expiring_notices_write


class Command(BaseCommand):
    help = "Write the title expiry notices due today, each once. Idempotent."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--today", type=date.fromisoformat, default=None)
        parser.add_argument(
            "--simulate", action="store_true", help="allow a --today after the tour day"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            written = expiring_notices_write(today=options["today"], simulate=options["simulate"])
        except ServiceError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"{written} notice(s) written")
