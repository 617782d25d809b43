"""``manage.py simulate_week OUT``: write a week of weekly-qualifier (周预赛) games as game
records v1 (SPEC §9) to a ``.jsonl.gz`` (or ``.jsonl``) file, from ``tournaments.simulation``.

The window is the qualifier's (SPEC §2): Monday 10:00 to Sunday 23:59, daily 10:00-23:59,
Asia/Shanghai; the event code defaults to the calendar's ``YYYY-Www-Q`` for that Monday.
The same arguments always write the same file; ``manage.py import_games`` reads it.
"""

import gzip
import json
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.domain.clock import TOUR_TZ
from tournaments.domain.calendar import DAILY_CLOSE, DAILY_HOURS, DAILY_OPEN, event_code_for_week
from tournaments.domain.rules import ruleset_from_text
from tournaments.simulation import simulate_games, simulate_players


class Command(BaseCommand):
    help = "Write a simulated week of weekly-qualifier games (.jsonl.gz) for import_games."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("out", help="the file to write (.jsonl.gz or .jsonl)")
        parser.add_argument("--monday", type=date.fromisoformat, default=date(2021, 2, 1))
        parser.add_argument("--event", help="event code (default: YYYY-Www-Q of --monday)")
        parser.add_argument("--players", type=int, default=20_000)
        parser.add_argument("--games", type=int, default=50_000)
        parser.add_argument("--seed", type=int, default=2021)
        parser.add_argument("--id-prefix", default="p", help="player ids: PREFIX0000001…")
        parser.add_argument(
            "--logs",
            metavar="RULESET",
            help="play every game out under these rules of play (a preset name or a JSON "
            "spec) and write its move log",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        monday: date = options["monday"]
        try:
            code = options["event"] or event_code_for_week(monday, "weekly_qualifier")
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        window = (
            datetime.combine(monday, DAILY_OPEN, TOUR_TZ),
            datetime.combine(monday + timedelta(days=6), DAILY_CLOSE, TOUR_TZ),
        )
        try:
            rules = None if options["logs"] is None else ruleset_from_text(options["logs"])
        except ValueError as exc:
            raise CommandError(f"--logs: {exc}") from None
        players = simulate_players(
            options["players"], seed=options["seed"], id_prefix=options["id_prefix"]
        )
        out = Path(options["out"])
        written = 0
        with (
            gzip.open(out, "wt", encoding="utf-8", compresslevel=6)
            if out.name.endswith(".gz")
            else out.open("w", encoding="utf-8")
        ) as stream:
            try:
                for record in simulate_games(
                    players=players,
                    games=options["games"],
                    event=code,
                    window=window,
                    seed=options["seed"],
                    daily_hours=DAILY_HOURS,
                    rules=rules,
                ):
                    stream.write(json.dumps(record, ensure_ascii=False) + "\n")
                    written += 1
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
        self.stdout.write(f"{out}: {written} games of event {code} ({len(players)} players)")
