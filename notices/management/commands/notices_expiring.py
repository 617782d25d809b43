"""``manage.py notices_expiring [--today YYYY-MM-DD [--simulate]]``: the players' "Master
ends in 30 / 7 days" notices due that day (``flows.notices.expiring_notices_write``; the
beat runs it daily as ``titles.expiring_notices``). A ``--today`` after the tour day needs
``--simulate`` (logged)."""

from core.day_command import DayJobCommand
from flows.notices import expiring_notices_write


class Command(DayJobCommand):
    help = "Write the title expiry notices due today, each once. Idempotent."
    job = staticmethod(expiring_notices_write)
    done = "{} notice(s) written"
