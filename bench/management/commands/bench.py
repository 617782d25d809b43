"""``manage.py bench [stage …] --scale S``: run benchmark stages and print one table."""

import importlib
import os
import platform
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from bench.registry import STAGE_MODULES, STAGES, Result, format_table, write_json


class Command(BaseCommand):
    help = "Benchmark stages against their bare baselines (PostgreSQL); prints ratios."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("stages", nargs="*", default=["all"])
        parser.add_argument(
            "--scale", type=float, default=0.01, help="1.0 = tour size; 0.01 = CI smoke size"
        )
        parser.add_argument("--json", dest="json_path", default="var/bench.json")

    def handle(self, *args: Any, **options: Any) -> None:
        for module in STAGE_MODULES:
            importlib.import_module(module)
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
