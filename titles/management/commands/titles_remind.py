"""``manage.py titles_remind [--today YYYY-MM-DD [--simulate]]``: 30- and 7-day expiry
reminders. A ``--today`` after the tour day needs ``--simulate`` (logged)."""

from datetime import date
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.errors import ServiceError
from titles.services import titles_remind


class Command(BaseCommand):
    help = "Send the expiry reminders due today, each once. Idempotent."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--today", type=date.fromisoformat, default=None)
        parser.add_argument(
            "--simulate", action="store_true", help="allow a --today after the tour day"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            sent = titles_remind(today=options["today"], simulate=options["simulate"])
        except ServiceError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"{sent} reminder(s) sent")
