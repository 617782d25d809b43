"""Partner webhooks: subscriptions to tour events, and the log of every delivery and attempt.

* :class:`Subscription` — a partner's endpoint, managed in the admin: the event types it
  wants, its signing secret (``webhooks.signing``), active or not.
* :class:`Delivery` — one event for one subscription: the exact JSON body sent (identical
  on every attempt) and its status, pending until an attempt succeeds (2xx) or the
  attempts run out (failed).
* :class:`DeliveryAttempt` — one POST: when, the status code or the error, the first 2 KB
  of the answer, how long it took.
"""

import secrets

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import models
from django.utils import timezone


class EventType(models.TextChoices):
    EVENT_FINALISED = "event.finalised", "an event was finalised"
    TITLE_GRANTED = "title.granted", "a Master title was granted"
    TITLE_EXTENDED = "title.extended", "a Master title was extended"
    TITLE_LAPSED = "title.lapsed", "a Master title lapsed"
    TITLE_REVOKED = "title.revoked", "titles were revoked"
    NOTICE_CREATED = "notice.created", "a player's notice was written (shown in-game)"


def new_secret() -> str:
    return secrets.token_hex(32)


class Subscription(models.Model):
    name = models.CharField(max_length=100)
    url = models.URLField(max_length=500, validators=[URLValidator(schemes=["http", "https"])])
    secret = models.CharField(
        max_length=128,
        default=new_secret,
        help_text="Give it to the partner: it keys the X-UNOTour-Signature of every request.",
    )
    events = models.JSONField(default=list, blank=True, help_text="The event types sent.")
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        unknown = (
            [e for e in self.events if e not in EventType.values]
            if isinstance(self.events, list)
            else [self.events]
        )
        if unknown:
            raise ValidationError({"events": f"Unknown event types: {unknown}"})


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "pending"
    SUCCEEDED = "succeeded", "succeeded"
    FAILED = "failed", "failed"


class Delivery(models.Model):
    subscription = models.ForeignKey(
        Subscription, on_delete=models.CASCADE, related_name="deliveries"
    )
    event_type = models.CharField(max_length=32, choices=EventType.choices)
    body = models.TextField()
    status = models.CharField(
        max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "deliveries"
        indexes = [models.Index(fields=["status", "created_at"], name="delivery_status_created")]

    def __str__(self) -> str:
        return f"{self.event_type} → {self.subscription_id} ({self.status})"


class DeliveryAttempt(models.Model):
    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveSmallIntegerField()
    at = models.DateTimeField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True)
    response_body = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField()

    class Meta:
        ordering = ["delivery", "number"]
        constraints = [
            models.UniqueConstraint(fields=["delivery", "number"], name="delivery_attempt_once"),
        ]

    def __str__(self) -> str:
        return f"{self.delivery_id} #{self.number}: {self.status_code or self.error}"
