"""The core app's one model: a job's status (core.jobs)."""

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone


class Job(models.Model):
    """A queued job (a Celery task): what it is, who asked, where it stands, how it ended.
    ``id`` is the task's id. Rows are written when a write queues a job
    (``core.jobs.job_enqueue``: state ``queued``) and by the worker's task signals for every
    task, beat's included (``running``, then ``succeeded`` with the task's outcome or
    ``failed`` with the error)."""

    class State(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        SUCCEEDED = "succeeded", "succeeded"
        FAILED = "failed", "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    task = models.CharField(max_length=100)
    subject = models.CharField(max_length=100, blank=True, db_index=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    queued_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    outcome = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-queued_at"]

    def __str__(self) -> str:
        return f"{self.task} {self.subject} ({self.state})"
