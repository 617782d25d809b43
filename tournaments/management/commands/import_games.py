"""``manage.py import_games FILE``: bulk import of game records v1 (SPEC §9) from JSON Lines.

``FILE`` is ``.jsonl`` or ``.jsonl.gz``: gzip when its name ends ``.gz`` or its first bytes
are gzip's magic number. Records go through the same validation, scoring and writes as
``POST /api/games/`` (``flows.ingest.games_import``), in batches of ``--batch-size`` (one
transaction each; PostgreSQL: COPY). Rejected lines and conflicts are written to the
rejects file, one JSON object a line: ``{"line", "id", "field", "reason", "record"}``, the
record as read (a line that is not JSON: its text). Fix the records in place and import
the rejects file itself: its rows are read as their records. Running the same file again
changes nothing (every record is then a duplicate).
"""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from tqdm import tqdm

from flows.ingest import games_import
from ratings.tasks import ratings_update_task
from tournaments.services.ingest import IMPORT_BATCH, ImportSummary, reject_line, results_lines


class Command(BaseCommand):
    help = "Import game records v1 from a .jsonl or .jsonl.gz file; rejects go to a file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="a .jsonl or .jsonl.gz file of game records v1")
        parser.add_argument("--rejects", help="the rejects file (default FILE.rejects.jsonl)")
        parser.add_argument("--batch-size", type=int, default=IMPORT_BATCH)
        parser.add_argument("--quiet", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"no such file: {path}")
        if options["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1")
        rejects_path = Path(options["rejects"] or f"{path}.rejects.jsonl")
        with (
            path.open("rb") as raw,
            rejects_path.open("w", encoding="utf-8") as rejects,
            tqdm(
                total=path.stat().st_size,
                unit="B",
                unit_scale=True,
                desc=path.name,
                disable=options["quiet"],
                file=getattr(self.stderr, "_out", self.stderr),  # the stream, not the wrapper
            ) as bar,
        ):
            stream = results_lines(path.name, raw)

            def on_rejects(rows: list[dict[str, Any]]) -> None:
                rejects.writelines(reject_line(row) for row in rows)

            def on_batch(summary: ImportSummary) -> None:
                bar.update(raw.tell() - bar.n)
                bar.set_postfix(ingested=summary.ingested, rejected=summary.rejected, refresh=False)

            try:
                summary = games_import(
                    lines=stream,
                    batch_size=options["batch_size"],
                    on_rejects=on_rejects,
                    on_batch=on_batch,
                )
            except (OSError, EOFError) as exc:  # a truncated or corrupt .gz
                raise CommandError(f"cannot read {path}: {exc}") from exc
        self.stdout.write(
            f"{path}: {summary.lines} lines: ingested {summary.ingested}, duplicates "
            f"{summary.duplicates}, conflicts {summary.conflicts}, rejected {summary.rejected}"
        )
        self.stdout.write(f"rejects: {rejects_path}")
        if summary.ingested:
            transaction.on_commit(ratings_update_task.delay, robust=True)
