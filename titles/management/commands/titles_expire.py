"""``manage.py titles_expire [--today YYYY-MM-DD [--simulate]]``: the daily expiry sweep
(SPEC §8). A ``--today`` after the tour day needs ``--simulate`` (logged; the lapses'
reason says so)."""

from core.day_command import DayJobCommand
from titles.services import titles_expire


class Command(DayJobCommand):
    help = "Lapse the Master terms whose valid_until has passed (Asia/Shanghai). Idempotent."
    job = staticmethod(titles_expire)
    done = "{} term(s) lapsed"
