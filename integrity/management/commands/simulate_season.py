"""``manage.py simulate_season --players N --weeks W --cheaters F --seed S --out FILE
--labels FILE [--start MONDAY]``: a simulated season of weekly qualifiers with injected
cheaters (``integrity.simulation``), written as game records v1 (SPEC §9, ``.jsonl`` or
``.jsonl.gz``) with the labels of the cheaters as JSON.

The games belong to the weekly qualifiers ``YYYY-Www-Q`` of the ``W`` weeks from ``--start``
(default 2021-01-04). Create the season first so that those events exist and are open, e.g.
``manage.py season_create 2021 --start 2021-01-04``, then ``manage.py import_games FILE``.
"""

import gzip
import json
from datetime import date
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from integrity.simulation import simulate_season
from tournaments.domain.rules import ruleset_from_text


class Command(BaseCommand):
    help = "Write a simulated season (games .jsonl[.gz] and cheater labels .json)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--players", type=int, default=20_000)
        parser.add_argument("--weeks", type=int, default=4)
        parser.add_argument("--cheaters", type=float, default=0.005)
        parser.add_argument("--seed", type=int, default=2021)
        parser.add_argument("--start", type=date.fromisoformat, default=date(2021, 1, 4))
        parser.add_argument("--out", required=True, help="games file (.jsonl or .jsonl.gz)")
        parser.add_argument("--labels", required=True, help="labels file (.json)")
        parser.add_argument(
            "--logs",
            metavar="RULESET",
            help="play every game out under these rules of play (a preset name or a JSON "
            "spec) and write its move log",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            rules = None if options["logs"] is None else ruleset_from_text(options["logs"])
            season = simulate_season(
                players=options["players"],
                weeks=options["weeks"],
                cheaters=options["cheaters"],
                seed=options["seed"],
                start=options["start"],
                rules=rules,
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        out = Path(options["out"])
        written = 0
        with (
            gzip.open(out, "wt", encoding="utf-8", compresslevel=6)
            if out.name.endswith(".gz")
            else out.open("w", encoding="utf-8")
        ) as stream:
            for record in season.records:
                stream.write(json.dumps(record, ensure_ascii=False) + "\n")
                written += 1
        Path(options["labels"]).write_text(
            json.dumps(season.labels.as_dict(), indent=2), encoding="utf-8"
        )
        labels = season.labels
        self.stdout.write(
            f"{out}: {written} games of {', '.join(season.events)} ({season.accounts} players); "
            f"{options['labels']}: {len(labels.farms)} farms, {len(labels.pairs)} pairs, "
            f"{len(labels.boosters)} boosters"
        )
