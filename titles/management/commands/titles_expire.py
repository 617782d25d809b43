"""``manage.py titles_expire [--today YYYY-MM-DD]``: the daily expiry sweep (SPEC §8)."""

from datetime import date
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from titles.services import titles_expire


class Command(BaseCommand):
    help = "Lapse the Master terms whose valid_until has passed (Asia/Shanghai). Idempotent."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--today", type=date.fromisoformat, default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        lapsed = titles_expire(today=options["today"])
        self.stdout.write(f"{lapsed} term(s) lapsed")
