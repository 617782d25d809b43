"""``manage.py finalise_event CODE [--force] [--by USERNAME]``: finalise an event now, in this
process (``flows.finalisation.event_finalise``; idempotent)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.models import User
from core.errors import ServiceError
from flows.finalisation import event_finalise
from tournaments.selectors.events import event_get, station_title


class Command(BaseCommand):
    help = "Finalise an event: freeze its ranks, record its champion, compute advancement."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("code")
        parser.add_argument(
            "--force", action="store_true", help="finalise although the window has not ended"
        )
        parser.add_argument("--by", help="the organiser's username, for the record")

    def handle(self, *args: Any, **options: Any) -> None:
        by = None
        if options["by"]:
            by = User.objects.filter(username=options["by"]).first()
            if by is None:
                raise CommandError(f"no user {options['by']!r}")
        try:
            event = event_get(code=options["code"])
            result = event_finalise(event=event, by=by, force=options["force"])
        except ServiceError as exc:
            raise CommandError(exc.message) from None
        if not result.changed:
            self.stdout.write(f"{event.code} was already finalised; nothing changed")
            return
        self.stdout.write(
            f"{event.code} finalised: {station_title(result.event)}; "
            f"{result.entries} entries written"
        )
