"""``manage.py audit [--event CODE | --from DATE --to DATE] [--json FILE]``: run an integrity
audit (SPEC §7) with ``integrity.services.audits.audit_run`` — the same service the jobs use —
and optionally write its cases and flags as JSON::

    {"cases": [{"players": [...], "families": [...], "score": float}],
     "flags": [{"detector", "players", "statistic", "p", "q"}]}

An event audit has the key ``event:<code>``; a window of tour days (Asia/Shanghai,
inclusive) ``window:<from>:<to>``. Running it again replaces that run's flags.
"""

import json
from datetime import date
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.errors import ServiceError
from integrity.models import AuditRun, Case, Flag
from integrity.services.audits import audit_event, audit_run, day_window, window_key
from tournaments.models import Event


def run_json(run: AuditRun) -> dict[str, Any]:
    """The run's cases (ranked by score) and flags (ranked by score) as plain data."""
    flags = Flag.objects.filter(run=run).order_by("-score", "id")
    cases = (
        Case.objects.filter(flags__run=run)
        .distinct()
        .order_by("-score", "id")
        .prefetch_related("players")
    )
    return {
        "run": run.key,
        "cases": [
            {
                "players": sorted(p.external_id for p in case.players.all()),
                "families": case.families,
                "score": case.score,
            }
            for case in cases
        ],
        "flags": [
            {
                "detector": flag.detector,
                "players": flag.player_keys,
                "statistic": flag.statistic,
                "p": flag.p_value,
                "q": flag.q_value,
            }
            for flag in flags
        ],
    }


class Command(BaseCommand):
    help = "Run an integrity audit of an event or a window of days; optionally write JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--event", help="the event code")
        parser.add_argument("--from", dest="first", type=date.fromisoformat)
        parser.add_argument("--to", dest="last", type=date.fromisoformat)
        parser.add_argument("--json", dest="json_path", help="write cases and flags here")

    def handle(self, *args: Any, **options: Any) -> None:
        code, first, last = options["event"], options["first"], options["last"]
        if bool(code) == bool(first or last):
            raise CommandError("give --event CODE, or --from DATE --to DATE")
        try:
            if code:
                event = Event.objects.filter(code=code).first()
                if event is None:
                    raise CommandError(f"no event {code!r}")
                run = audit_event(event=event)
            else:
                if not (first and last) or last < first:
                    raise CommandError("give --from and --to, --to not before --from")
                start, end = day_window(first, last)
                run = audit_run(key=window_key(first, last), window_start=start, window_end=end)
        except ServiceError as exc:
            raise CommandError(exc.message) from exc
        stats = run.stats
        self.stdout.write(
            f"audit {run.key}: {stats['tables']} games, {stats['players']} players, "
            f"{stats['pairs_tested']} pairs tested of m={stats['family_size']}; flags "
            f"{stats['flags']}; cases {stats['cases']}; {stats['seconds']['total']:.1f} s"
        )
        if options["json_path"]:
            Path(options["json_path"]).write_text(
                json.dumps(run_json(run), indent=2, ensure_ascii=False), encoding="utf-8"
            )
            self.stdout.write(f"written {options['json_path']}")
