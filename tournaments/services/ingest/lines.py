"""Game ingest of a JSON Lines file (SPEC §9): ``manage.py import_games`` and the bench.

Each non-blank line is one game record v1; the file is ingested in batches through the
batch path of ``ingest.batch`` (same outcomes, same guarantees), each batch its own
transaction, so a rerun changes nothing. A line that is not JSON is a reject with its line
number. Batches are pipelined (``games_import``): a second thread decodes and validates
ahead while this one writes.

**Rejects can be fixed and imported again.** Each reject (a line refused, or a conflict)
holds ``line``, ``id``, ``field``, ``reason`` and ``record``: the JSON value as read, or the
line's text when it is not JSON. A line that is such a reject row (an object with exactly
those five keys: a game record has no ``line`` or ``reason`` and always an ``event``) is
read as its ``record``, and a ``record`` that is text is read as a line again; so the
rejects file, its records fixed in place, is itself a file to import.

A file is ``.jsonl`` or ``.jsonl.gz`` (``results_lines``): gzip when its name ends ``.gz``
or its first bytes are gzip's magic number; ``reject_line`` writes one rejects-file line.
"""

import gzip
import json
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import orjson

from accounts.models import User
from core import collector
from tournaments.services.ingest.batch import (
    Head,
    IngestReport,
    Outcomes,
    Suspensions,
    Validated,
    heads_read,
    not_suspended,
    unstored,
    validated,
    write,
)
from tournaments.services.ingest_rules import RecordRules

IMPORT_BATCH = 5000


@dataclass
class ImportSummary:
    lines: int = 0
    ingested: int = 0
    duplicates: int = 0
    conflicts: int = 0
    rejected: int = 0


REJECT_KEYS = frozenset({"line", "id", "field", "reason", "record"})


@dataclass
class _Batch:
    """A batch of lines, decoded: the records with their line numbers, and the lines that
    are not JSON (rejects)."""

    records: list[object] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    unreadable: list[dict[str, Any]] = field(default_factory=list)

    def record_at(self, number: int) -> object:
        """The record read from line ``number``."""
        return self.records[bisect_left(self.numbers, number)]


def _not_json_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


class _UnreadableError(ValueError):
    """A line that is not JSON: ``text`` is what its reject keeps as the record."""

    def __init__(self, reason: str, text: str) -> None:
        super().__init__(reason)
        self.text = text


def _text_of(line: str | bytes) -> str:
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    return text.rstrip("\r\n")


def _read(line: str | bytes) -> object:
    """The record of a line: its JSON value, or the record of a reject row (module
    docstring); `_UnreadableError` when the line (or a reject row's text) is not JSON.

    orjson reads a line first (a logged record is mostly its move log, which the standard
    library reads eight times slower); what orjson refuses (bad JSON, but also what the
    standard library reads differently: a lone surrogate, an integer beyond 64 bits) is
    read again by the standard library, whose value and errors are the contract."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        try:
            value = json.loads(line, parse_constant=_not_json_constant)
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise _UnreadableError(f"not JSON: {exc}", _text_of(line)) from None
    if isinstance(value, dict) and value.keys() == REJECT_KEYS:
        record = value["record"]
        return _read(record) if isinstance(record, str) else record
    return value


def _line_batches(
    lines: Iterable[str | bytes], size: int, summary: ImportSummary
) -> Iterator[list[tuple[int, str | bytes]]]:
    """The non-blank lines with their numbers, ``size`` at a time."""
    batch: list[tuple[int, str | bytes]] = []
    for number, line in enumerate(lines, start=1):
        summary.lines = number
        if not line.strip():
            continue
        batch.append((number, line))
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _decoded(lines: Sequence[tuple[int, str | bytes]]) -> _Batch:
    batch = _Batch()
    for number, line in lines:
        try:
            batch.records.append(_read(line))
        except _UnreadableError as exc:
            reject = {"line": number, "id": None, "field": "record", "reason": str(exc)}
            batch.unreadable.append({**reject, "record": exc.text})
            continue
        batch.numbers.append(number)
    return batch


def _prepared(lines: Sequence[tuple[int, str | bytes]]) -> tuple[_Batch, list[Head], Outcomes]:
    """Decode a batch and read its ids and digests (no query)."""
    batch = _decoded(lines)
    out = Outcomes()
    return batch, heads_read(batch.records, batch.numbers, out), out


def _rejects(batch: _Batch, report: IngestReport) -> list[dict[str, Any]]:
    rows = (
        batch.unreadable
        + [
            {
                "line": c.index,
                "id": c.id,
                "field": "id",
                "reason": c.reason,
                "record": batch.record_at(c.index),
            }
            for c in report.conflicts
        ]
        + [
            {
                "line": r.index,
                "id": r.id,
                "field": r.field,
                "reason": r.reason,
                "record": batch.record_at(r.index),
            }
            for r in report.rejected
        ]
    )
    return sorted(rows, key=lambda row: row["line"])


def games_import(
    *,
    lines: Iterable[str | bytes],
    by: User | None = None,
    batch_size: int = IMPORT_BATCH,
    on_rejects: Callable[[list[dict[str, Any]]], None],
    on_batch: Callable[[ImportSummary], None] | None = None,
    suspensions: Suspensions,
) -> ImportSummary:
    """Ingest JSON Lines (one record per line) in batches through `games_ingest`'s path.

    ``suspensions`` are asked once per batch, as in ``games_ingest``. A line that is not
    JSON is a reject with its line number (blank lines are skipped); rejects and conflicts
    go to ``on_rejects`` as ``{"line", "id", "field", "reason", "record"}``, in line order
    (a reject row read back is its record: module docstring). Each batch is its own
    transaction, so a rerun changes nothing.

    Batches are pipelined: while one batch is written (this thread then mostly waits on
    the database), a second thread decodes the batch after next and validates and scores
    the next one, whose ids were looked up and rules loaded first, so that thread never
    queries. An id stored by the batch ahead after the lookup is caught by the write, as
    with a concurrent writer, and reported as a duplicate or a conflict all the same.
    """
    summary = ImportSummary()
    rules = RecordRules()

    def finish(batch: _Batch, out: Outcomes, checking: Future[Validated]) -> None:
        pending, checked = checking.result()
        out.add(checked)
        write(not_suspended(pending, out, suspensions), by, out)
        report = out.report()
        summary.ingested += report.ingested
        summary.duplicates += len(report.duplicates)
        summary.conflicts += len(report.conflicts)
        summary.rejected += len(report.rejected) + len(batch.unreadable)
        rejects = _rejects(batch, report)
        if rejects:
            on_rejects(rejects)
        if on_batch is not None:
            on_batch(summary)

    with (
        collector.paused(collect_after=True),
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-validate") as worker,
    ):
        batches = _line_batches(lines, batch_size, summary)
        first = next(batches, None)
        preparing = worker.submit(_prepared, first) if first is not None else None
        ahead: tuple[_Batch, Outcomes, Future[Validated]] | None = None
        while preparing is not None:
            batch, heads, out = preparing.result()
            following = next(batches, None)
            preparing = worker.submit(_prepared, following) if following is not None else None
            fresh = unstored(heads, rules, out)
            checking = worker.submit(validated, fresh, rules.detached())
            if ahead is not None:
                finish(*ahead)
            ahead = (batch, out, checking)
        if ahead is not None:
            finish(*ahead)
    return summary


GZIP_MAGIC = b"\x1f\x8b"


def results_lines(name: str, raw: BinaryIO) -> Iterable[bytes]:
    """The byte lines of a results file (``raw`` seekable), gunzipped when it is gzip."""
    magic = raw.read(len(GZIP_MAGIC))
    raw.seek(0)
    if name.endswith(".gz") or magic == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=raw)
    return raw


def reject_line(row: dict[str, Any]) -> str:
    """One rejects-file line; text that is not valid Unicode (a lone surrogate read from a
    ``\\u`` escape) is written escaped, so the file stays UTF-8 and reads back the same."""
    text = json.dumps(row, ensure_ascii=False)
    try:
        text.encode()
    except UnicodeEncodeError:
        text = json.dumps(row)
    return text + "\n"
