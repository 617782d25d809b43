"""``manage.py verify_credential FILE [--status-list FILE] [--at ISO-TIME]``: verify a title
credential offline (SPEC §6 Credentials): its signature against this service's keys, its
dates and its status (the status list from this service's database, or the file given).
Exits with an error when it is not valid."""

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from titles.credentials.verify import credential_verify


def _read(path: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise CommandError(f"{path}: {exc}") from exc
    if not isinstance(data, dict):
        raise CommandError(f"{path}: not a JSON object")
    return data


class Command(BaseCommand):
    help = "Verify a title credential offline: signature, dates and status."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the credential (JSON-LD)")
        parser.add_argument(
            "--status-list", default=None, help="a status list credential (default: this database)"
        )
        parser.add_argument(
            "--at", type=datetime.fromisoformat, default=None, help="check the dates at this time"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        credential = _read(options["file"])
        status_list = _read(options["status_list"]) if options["status_list"] else None
        now = options["at"] or timezone.now()
        if timezone.is_naive(now):
            raise CommandError("--at needs a time zone (e.g. 2024-01-01T12:00:00+08:00)")
        verdict = credential_verify(credential, now=now, status_list=status_list)
        name = credential.get("name", credential.get("id", "credential"))
        if not verdict.valid:
            raise CommandError(f"{name}: NOT valid: " + "; ".join(verdict.problems))
        self.stdout.write(f"{name}: valid (signature, dates, status not revoked)")
