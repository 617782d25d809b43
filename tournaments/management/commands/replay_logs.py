"""``manage.py replay_logs FILE [--ruleset NAME|JSON]``: check the move logs of a file of game
records v1 (SPEC §9) without writing anything.

``FILE`` is ``.jsonl`` or ``.jsonl.gz``. Each record's log is replayed
(``tournaments.domain.movelog.replay``) under ``--ruleset`` (a preset name, or
``{"preset", "switches"}`` as JSON) or, without it, under its event's rules of play when the
event is known here, else the default ``classic``. One JSON object per record is printed:
``{"id", "ok", "move", "reason"}`` (``move`` the index of the first bad move, null for a
fault of the whole log or the ending; a record without a log is ok). A line that is not a
JSON object is reported the same way with ``id`` null. The command exits 0 when it could
read the file, whatever the verdicts.
"""

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from tournaments.domain.movelog import replay
from tournaments.domain.rules import PRESETS, Ruleset, ruleset_from_text
from tournaments.models import Event
from tournaments.services.ingest import results_lines


class Command(BaseCommand):
    help = "Replay the move logs of a .jsonl(.gz) file of game records; print one verdict each."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="a .jsonl or .jsonl.gz file of game records v1")
        parser.add_argument(
            "--ruleset",
            help="rules of play: classic, yiqiyounuo, ubisoft, wango, or a JSON object "
            '{"preset": NAME, "switches": {...}} (default: each event\'s, else classic)',
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"no such file: {path}")
        given = self._ruleset(options["ruleset"])
        by_event: dict[str, Ruleset] = {}
        with path.open("rb") as raw:
            for number, line in enumerate(results_lines(path.name, raw), start=1):
                if not line.strip():
                    continue
                verdict = self._verdict(number, line, given, by_event)
                self.stdout.write(json.dumps(verdict, ensure_ascii=False))

    @staticmethod
    def _ruleset(value: str | None) -> Ruleset | None:
        if value is None:
            return None
        try:
            return ruleset_from_text(value)
        except ValueError as exc:
            raise CommandError(f"--ruleset: {exc}") from None

    @staticmethod
    def _verdict(
        number: int, line: bytes, given: Ruleset | None, by_event: dict[str, Ruleset]
    ) -> dict[str, Any]:
        try:
            record = json.loads(line)
        except (ValueError, UnicodeDecodeError) as exc:
            return {"id": None, "ok": False, "move": None, "reason": f"line {number}: {exc}"}
        if not isinstance(record, dict):
            reason = f"line {number}: a record must be a JSON object"
            return {"id": None, "ok": False, "move": None, "reason": reason}
        rules = given or _event_rules(record.get("event"), by_event)
        verdict = replay(record, rules)
        return {
            "id": record.get("id"),
            "ok": verdict.ok,
            "move": verdict.move,
            "reason": verdict.reason,
        }


def _event_rules(code: object, cache: dict[str, Ruleset]) -> Ruleset:
    """The rules of play of the event ``code`` names, else the classic preset."""
    if not isinstance(code, str) or "\x00" in code:  # PostgreSQL text cannot hold a NUL
        return PRESETS["classic"]
    if code not in cache:
        event = Event.objects.select_related("season").filter(code=code).first()
        try:
            cache[code] = event.play_rules() if event is not None else PRESETS["classic"]
        except ValueError:
            cache[code] = PRESETS["classic"]
    return cache[code]
