"""A management command for a daily job run for one tour day (SPEC §8 jobs): ``[--today
YYYY-MM-DD [--simulate]]``, a service refusal (a ``--today`` after the tour day without
``--simulate``) as the command's error, and one line saying what was done."""

from collections.abc import Callable
from datetime import date
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.errors import ServiceError


class DayJobCommand(BaseCommand):
    """Subclasses name the ``job`` (a service taking ``today`` and ``simulate`` and
    returning a count) and the ``done`` line (formatted with that count)."""

    job: Callable[..., int]
    done: str

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--today", type=date.fromisoformat, default=None)
        parser.add_argument(
            "--simulate", action="store_true", help="allow a --today after the tour day"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            count = type(self).job(today=options["today"], simulate=options["simulate"])
        except ServiceError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(self.done.format(count))
