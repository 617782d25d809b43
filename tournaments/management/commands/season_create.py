"""``manage.py season_create YEAR --start DATE [--quarterly DATE …] [--annual DATE]
[--ruleset NAME|JSON]``: create a season and its calendar (SPEC §2) with its rules of play
(SPEC §3: a preset name, or ``{"preset", "switches"}`` as JSON; default ``classic``) with
``tournaments.services.seasons.season_create``."""

from datetime import date
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.models import User
from core.errors import ServiceError
from tournaments.domain.rules import ruleset_from_text
from tournaments.services.seasons import season_create


def _day(value: str) -> date:
    return date.fromisoformat(value)


class Command(BaseCommand):
    help = "Create a season and its calendar of events (52 weeks: 69 stations)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("year", type=int)
        parser.add_argument("--start", type=_day, required=True, help="the first Monday")
        parser.add_argument("--quarterly", type=_day, nargs="+", help="quarterly final days")
        parser.add_argument("--annual", type=_day, help="the annual final's day")
        parser.add_argument("--weeks", type=int, default=52, help="weekly qualifiers (52)")
        parser.add_argument("--name", default="")
        parser.add_argument("--by", help="the organiser's username, for the log")
        parser.add_argument(
            "--ruleset",
            default="classic",
            help="rules of play: classic, yiqiyounuo, ubisoft, wango, or a JSON object "
            '{"preset": NAME, "switches": {...}} (default classic)',
        )

    def handle(self, *args: Any, **options: Any) -> None:
        by = None
        if options["by"]:
            by = User.objects.filter(username=options["by"]).first()
            if by is None:
                raise CommandError(f"no user {options['by']!r}")
        try:
            play = ruleset_from_text(options["ruleset"]).to_spec()
        except ValueError as exc:
            raise CommandError(f"--ruleset: {exc}") from None
        try:
            season = season_create(
                year=options["year"],
                start=options["start"],
                quarterly_dates=options["quarterly"],
                annual_date=options["annual"],
                weeks=options["weeks"],
                name=options["name"],
                ruleset={"play_ruleset": play},
                by=by,
            )
        except ServiceError as exc:
            raise CommandError(exc.message) from None
        events = season.events.count()
        stations = season.events.filter(station__isnull=False).count()
        self.stdout.write(f"season {season.year}: {events} events, {stations} stations")
