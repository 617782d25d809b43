"""Structured log lines for security-relevant events (logger ``unotour.*``).

:func:`log_event` writes one record whose message is the event name and whose ``fields``
(extra) hold the details; :class:`JsonFormatter` renders such a record as one JSON object
per line (``at``, ``level``, ``logger``, ``event`` and the fields), which a log shipper can
index without parsing prose. Never pass a password or a raw token as a field."""

import json
import logging
from datetime import UTC, datetime
from typing import Any


def log_event(logger: logging.Logger, level: int, event: str, **fields: Any) -> None:
    logger.log(level, event, extra={"fields": fields})


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
