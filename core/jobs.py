"""Jobs' status (issue 26): every queued job can be followed — through
``GET /api/jobs/{id}/`` and the console's job panel — from queued to its outcome.

* :func:`job_enqueue` queues a task for a write (``core.broker.enqueue_or_fail``: refused
  with 503 when the broker is down) and records a ``queued`` ``Job`` in the caller's
  transaction, its id the task's id, so a refused write leaves no job behind.
* The worker's task signals (:func:`connect`, from ``CoreConfig.ready``) record every task —
  beat's and redelivered ones included — as ``running`` when it starts (``attempts`` + 1),
  then ``succeeded`` with its return value as the outcome, or ``failed`` with the error.
* :func:`job_progress`: a long task says how far it is (``done`` of ``total`` steps, and the
  step's name). It is kept in the cache, not the ``Job`` row: the task's work runs in
  transactions that a row update would wait behind or be hidden in until they commit. With
  the cache down the figure is simply not shown; the state still is.
"""

import json
import uuid
from typing import Any

from celery import Task, current_task
from celery.signals import task_failure, task_prerun, task_success
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from core.broker import enqueue_or_fail
from core.models import Job


def job_enqueue(
    task: Task, *args: Any, subject: str = "", by: AbstractBaseUser | None = None
) -> Job:
    """Queue ``task(*args)`` once the caller's transaction commits, and record its ``Job``;
    with the broker down, UnavailableError (503) before anything is written."""
    job_id = uuid.uuid4()
    with transaction.atomic():
        enqueue_or_fail(task, *args, task_id=str(job_id))
        return Job.objects.create(
            id=job_id, task=task.name, subject=subject, by_id=None if by is None else by.pk
        )


#: How long a job's progress is kept after its last report.
PROGRESS_SECONDS = 24 * 3600


def _progress_key(job_id: object) -> str:
    return f"job-progress:{job_id}"


def job_progress(done: int, total: int, step: str = "") -> None:
    """Report the running task's progress: ``done`` of ``total`` steps, now at ``step``.
    Outside a task (a command, a test calling the service) it does nothing."""
    request = getattr(current_task, "request", None)
    task_id = getattr(request, "id", None)
    if task_id:
        figure = {"done": done, "total": total, "step": step}
        cache.set(_progress_key(task_id), figure, timeout=PROGRESS_SECONDS)


def job_progress_of(job: Job) -> dict[str, Any] | None:
    """The last progress a job reported (``done``, ``total``, ``step``), or None."""
    figure = cache.get(_progress_key(job.id))
    return figure if isinstance(figure, dict) else None


def _outcome(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value


def _started(task_id: str | None = None, task: Task | None = None, **_: Any) -> None:
    if task_id is None or task is None:
        return
    with transaction.atomic():
        job, _created = Job.objects.select_for_update().get_or_create(
            id=task_id, defaults={"task": task.name}
        )
        job.state, job.started_at, job.finished_at = Job.State.RUNNING, timezone.now(), None
        job.attempts += 1
        job.save(update_fields=["state", "started_at", "finished_at", "attempts"])


def _succeeded(sender: Task | None = None, result: Any = None, **_: Any) -> None:
    if sender is None or sender.request.id is None:
        return
    Job.objects.filter(id=sender.request.id).update(
        state=Job.State.SUCCEEDED, finished_at=timezone.now(), outcome=_outcome(result), error=""
    )


def _failed(task_id: str | None = None, exception: BaseException | None = None, **_: Any) -> None:
    if task_id is None:
        return
    Job.objects.filter(id=task_id).update(
        state=Job.State.FAILED,
        finished_at=timezone.now(),
        error=f"{type(exception).__name__}: {exception}" if exception else "failed",
    )


def connect() -> None:
    """Record every task's run in its ``Job`` (called once, from ``CoreConfig.ready``)."""
    task_prerun.connect(_started, dispatch_uid="core.jobs.started", weak=False)
    task_success.connect(_succeeded, dispatch_uid="core.jobs.succeeded", weak=False)
    task_failure.connect(_failed, dispatch_uid="core.jobs.failed", weak=False)
