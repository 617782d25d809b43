"""``manage.py world_cup_snapshot [--year Y --month M]``: a month's World Cup representatives
become pending Master qualifications dated the month's last day (default: last month)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.errors import ServiceError
from titles.services import world_cup_snapshot


class Command(BaseCommand):
    help = "Record last month's (or --year/--month's) World Cup representation. Idempotent."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--year", type=int)
        parser.add_argument("--month", type=int)

    def handle(self, *args: Any, **options: Any) -> None:
        if (options["year"] is None) != (options["month"] is None):
            raise CommandError("give both --year and --month, or neither")
        try:
            recorded = world_cup_snapshot(year=options["year"], month=options["month"])
        except ServiceError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"{recorded} qualification(s) recorded")
