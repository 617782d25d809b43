"""Send tour events to partners' webhooks (the writes; the attempt is ``webhooks.delivery``).

``webhook_emit`` runs inside the caller's transaction (an event finalised, a title
granted, extended, lapsed or revoked): it writes one ``Delivery`` per active subscription
to the event type and enqueues ``webhooks.tasks.webhook_deliver`` for each on commit, so a
rolled-back change sends nothing. The body is JSON ``{"type", "created_at", "data"}`` with
the caller's payload as ``data``; it is fixed when emitted and re-sent byte for byte.

With in-process jobs (``CELERY_TASK_ALWAYS_EAGER`` with ``CELERY_TASK_EAGER_PROPAGATES``, the
local and test settings) the first attempt runs right after the commit, and a retry is
not re-run: Celery raises it, and the robust on-commit hook logs it (the delivery stays
pending with its attempt logged). Retries need a worker and a broker.
"""

import json
from collections.abc import Callable
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone

from core.errors import ServiceError
from webhooks.models import Delivery, EventType, Subscription
from webhooks.tasks import webhook_deliver


def _enqueue(task: Any, delivery_id: int) -> Callable[[], None]:
    def deliver() -> None:  # named: robust on_commit logs a failure by __qualname__
        task.delay(delivery_id)

    return deliver


def webhook_emit(*, event_type: str, payload: dict[str, Any]) -> int:
    """Queue ``payload`` for every active subscription to ``event_type``; returns how many
    deliveries were created. Call it inside the transaction that made the change."""
    if event_type not in EventType.values:
        raise ServiceError(f"Unknown webhook event type {event_type!r}.")
    subscriptions = [
        subscription
        for subscription in Subscription.objects.filter(active=True).order_by("pk")
        if event_type in subscription.events
    ]
    if not subscriptions:
        return 0
    now = timezone.now()
    body = json.dumps(
        {"type": event_type, "created_at": now.isoformat(), "data": payload},
        cls=DjangoJSONEncoder,
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )
    with transaction.atomic():
        for subscription in subscriptions:
            delivery = Delivery.objects.create(
                subscription=subscription, event_type=event_type, body=body, created_at=now
            )
            # robust: a failure to enqueue (or, with eager tasks, to deliver) is logged and
            # never reaches the caller, whose change is already committed.
            transaction.on_commit(_enqueue(webhook_deliver, delivery.pk), robust=True)
    return len(subscriptions)
