"""Enqueue a job that a write needs, or refuse the write (SPEC §8 jobs).

Some writes are only a request for a job (finalise an event, run an audit): if the broker
is down the job would be lost, so :func:`enqueue_or_fail` checks that the broker answers
**before** anything is written and refuses with
:class:`~core.errors.UnavailableError` (503, "job queue unavailable: … try again") when it
does not. The message is then sent when the caller's transaction commits (at once outside
a transaction); a send that still fails is reported the same way (saying whether the
caller's writes were saved), so the client learns that the work was not queued. With jobs
in-process (``CELERY_TASK_ALWAYS_EAGER``, local and test settings) there is no broker to
check.

Call sites: ``POST /api/events/{code}/finalise/``, ``POST /api/integrity/runs/trigger/`` and
the events admin's "finalise" action (docs/reliability.md)."""

import logging
from typing import Any

from celery import Task
from django.conf import settings
from django.db import transaction
from kombu.exceptions import OperationalError

from core.errors import UnavailableError

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT = 2.0


def _unavailable(task: Task, exc: BaseException, *, written: bool) -> UnavailableError:
    logger.warning("broker unavailable, %s not queued: %s", task.name, exc)
    changed = "the change was saved" if written else "nothing was changed"
    return UnavailableError(
        f"job queue unavailable: {task.name} was not queued, {changed}; try again",
        detail={"task": task.name, "error": f"{type(exc).__name__}: {exc}"},
    )


def broker_check(task: Task) -> None:
    """Raise UnavailableError unless the broker of ``task``'s app accepts a connection."""
    try:
        with task.app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=0, timeout=CONNECT_TIMEOUT)
    except Exception as exc:  # noqa: BLE001 - any failure to connect means "down"
        raise _unavailable(task, exc, written=False) from exc


def enqueue_or_fail(task: Task, *args: Any, task_id: str | None = None, **kwargs: Any) -> None:
    """Send ``task(*args, **kwargs)`` (under ``task_id`` when given) once the current
    transaction commits, after checking that the broker is reachable; raise
    UnavailableError (503) when it is not."""
    if settings.CELERY_TASK_ALWAYS_EAGER or task.app.conf.task_always_eager:
        transaction.on_commit(lambda: task.apply_async(args, kwargs, task_id=task_id))
        return
    broker_check(task)
    # Called inside a transaction, the send waits for its commit: if it fails then, the
    # caller's writes are already saved (and the answer says so).
    inside = transaction.get_connection().in_atomic_block

    def send() -> None:
        try:
            task.apply_async(args, kwargs, task_id=task_id, retry=False)
        except OperationalError as exc:
            raise _unavailable(task, exc, written=inside) from exc

    transaction.on_commit(send)
