"""Monthly snapshots of the Master registry (SPEC §6: the registry as it stood, kept)."""

from django.db import models
from django.utils import timezone


class RegistrySnapshot(models.Model):
    """The Master registry (current Masters and Lifetime Masters) as it stood on
    ``taken_on``, one per tour month (``YYYY-MM``, Asia/Shanghai). ``rows`` holds the same
    columns as the registry export (``exports.selectors.REGISTRY_FIELDS``)."""

    month = models.CharField(max_length=7, unique=True)
    taken_on = models.DateField()
    created_at = models.DateTimeField(default=timezone.now)
    count = models.PositiveIntegerField()
    rows = models.JSONField(default=list)

    class Meta:
        ordering = ["-month"]

    def __str__(self) -> str:
        return f"registry {self.month} ({self.count})"
