"""Structured log lines for security-relevant events (logger ``unotour.*``).

:func:`log_event` writes one record whose message is the event name and whose ``fields``
(extra) hold the details; :class:`JsonFormatter` renders such a record as one JSON object
per line (``at``, ``level``, ``logger``, ``event`` and the fields), which a log shipper can
index without parsing prose. Never pass a password or a raw token as a field.

:func:`log_event_on_commit` is the same line for a decision made inside a transaction
(a title decision, a sanction): it is written when the transaction commits, so a
rolled-back decision never appears in the log."""

import json
import logging
from datetime import UTC, datetime
from typing import Any

from django.db import transaction


def log_event(logger: logging.Logger, level: int, event: str, **fields: Any) -> None:
    logger.log(level, event, extra={"fields": fields})


def log_event_on_commit(logger: logging.Logger, level: int, event: str, **fields: Any) -> None:
    """:func:`log_event` once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: log_event(logger, level, event, **fields))


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        body: dict[str, Any] = {
            "at": datetime.fromtimestamp(record.created, tz=UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "event": record.getMessage(),
        }
        body.update(getattr(record, "fields", {}))
        if record.exc_info:
            body["exc"] = self.formatException(record.exc_info)
        return json.dumps(body, ensure_ascii=False, default=str)
