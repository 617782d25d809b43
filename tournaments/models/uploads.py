from django.conf import settings
from django.db import models
from django.utils import timezone


class Upload(models.Model):
    """A results file an organiser uploaded in the console: who, when, what it held, and its
    rejects file (one JSON object a line: line, id, field, reason and the record as read, so
    it can be fixed and uploaded again)."""

    event = models.ForeignKey("tournaments.Event", on_delete=models.CASCADE, related_name="+")
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField(default=timezone.now)
    name = models.CharField(max_length=200)
    lines = models.PositiveIntegerField()
    ingested = models.PositiveIntegerField()
    duplicates = models.PositiveIntegerField()
    conflicts = models.PositiveIntegerField()
    rejected = models.PositiveIntegerField()
    rejects = models.TextField(blank=True)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.at:%Y-%m-%d %H:%M})"
