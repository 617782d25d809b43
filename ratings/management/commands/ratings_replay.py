"""``manage.py ratings_replay``: recompute every rating from scratch (ratings.services)."""

from typing import Any

from django.core.management.base import BaseCommand

from ratings.services import ratings_replay


class Command(BaseCommand):
    help = "Recompute every player's rating from all non-voided games, in time order."

    def handle(self, *args: Any, **options: Any) -> None:
        rated = ratings_replay()
        self.stdout.write(f"Rated {rated} games.")
