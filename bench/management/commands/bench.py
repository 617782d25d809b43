"""``manage.py bench [stage …] --scale S``: run benchmark stages and print one table."""

import importlib
import os
import platform
from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from core.bench import STAGES, Result, format_table, write_json


def _load_stages() -> None:
    for config in apps.get_app_configs():
        try:
            importlib.import_module(f"{config.name}.bench")
        except ModuleNotFoundError as exc:
            if exc.name != f"{config.name}.bench":
                raise


class Command(BaseCommand):
    help = "Benchmark stages against their bare baselines (PostgreSQL); prints ratios."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("stages", nargs="*", default=["all"])
        parser.add_argument(
            "--scale", type=float, default=0.01, help="1.0 = tour size; 0.01 = CI smoke size"
        )
        parser.add_argument("--json", dest="json_path", default="var/bench.json")

    def handle(self, *args: Any, **options: Any) -> None:
        _load_stages()
        if connection.vendor != "postgresql":
            raise CommandError(
                "bench runs on PostgreSQL: set DATABASE_URL=postgres://… (SQLite has no COPY)"
            )
        names = list(STAGES) if options["stages"] in (["all"], []) else options["stages"]
        unknown = [name for name in names if name not in STAGES]
        if unknown:
            raise CommandError(f"unknown stage(s) {unknown}; known: {sorted(STAGES)} or all")
        results: list[Result] = []
        for name in names:
            self.stdout.write(f"-- {name} (scale {options['scale']})")
            # OutputWrapper is an io.TextIOBase, not the typing.TextIO the stages' type names.
            results.extend(STAGES[name](options["scale"], self.stdout))  # type: ignore[arg-type]
        self.stdout.write(format_table(results))
        machine = f"{platform.node()} {platform.machine()} {os.cpu_count()} cpu"
        write_json(results, options["json_path"], scale=options["scale"], machine=machine)
        self.stdout.write(f"written {options['json_path']}")
