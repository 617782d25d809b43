"""``manage.py titles_expire [--today YYYY-MM-DD [--simulate]]``: the daily expiry sweep
(SPEC §8). A ``--today`` after the tour day needs ``--simulate`` (logged; the lapses'
reason says so)."""

from datetime import date
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.errors import ServiceError
from titles.services import titles_expire


class Command(BaseCommand):
    help = "Lapse the Master terms whose valid_until has passed (Asia/Shanghai). Idempotent."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--today", type=date.fromisoformat, default=None)
        parser.add_argument(
            "--simulate", action="store_true", help="allow a --today after the tour day"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            lapsed = titles_expire(today=options["today"], simulate=options["simulate"])
        except ServiceError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"{lapsed} term(s) lapsed")
