"""``manage.py titles_remind [--today YYYY-MM-DD [--simulate]]``: 30- and 7-day expiry
reminders. A ``--today`` after the tour day needs ``--simulate`` (logged)."""

from core.day_command import DayJobCommand
from titles.services import titles_remind


class Command(DayJobCommand):
    help = "Send the expiry reminders due today, each once. Idempotent."
    job = staticmethod(titles_remind)
    done = "{} reminder(s) sent"
