"""``manage.py titles_remind [--today YYYY-MM-DD]``: 30- and 7-day expiry reminders."""

from datetime import date
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from titles.services import titles_remind


class Command(BaseCommand):
    help = "Send the expiry reminders due today, each once. Idempotent."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--today", type=date.fromisoformat, default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        sent = titles_remind(today=options["today"])
        self.stdout.write(f"{sent} reminder(s) sent")
