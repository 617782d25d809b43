"""Load the demo data of the embedded default; idempotent (running it twice adds nothing)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from demo.data import load_demo


class Command(BaseCommand):
    help = "Load demo data: staff users, players, a season (safe to run repeatedly)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--players", type=int, default=400)

    def handle(self, *args: Any, **options: Any) -> None:
        summary = load_demo(players=options["players"])
        for key, value in summary.items():
            self.stdout.write(f"{key}: {value}")
