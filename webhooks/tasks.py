"""Webhook delivery job: one attempt per run, retried with exponential backoff.

The attempts log (``DeliveryAttempt``), not Celery's retry counter, bounds the retries:
``delivery_attempt`` marks the delivery failed at its ``MAX_ATTEMPTS``-th attempt, so a
redelivered message neither adds attempts past the limit nor re-sends a finished delivery.
"""

from typing import Any

from celery import shared_task

from webhooks.delivery import delivery_attempt, retry_countdown
from webhooks.models import DeliveryStatus


@shared_task(bind=True, name="webhooks.deliver", acks_late=True, max_retries=None)
def webhook_deliver(self: Any, delivery_id: int) -> str:
    """POST a delivery; retry after 30 s, 60 s, 120 s … while it stays pending."""
    delivery = delivery_attempt(delivery_id=delivery_id)
    if delivery.status == DeliveryStatus.PENDING:
        raise self.retry(countdown=retry_countdown(delivery.attempts))
    return str(delivery.status)
