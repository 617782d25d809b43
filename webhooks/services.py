"""Send tour events to partners' webhooks (the writes; the attempt is ``webhooks.delivery``).

``webhook_emit`` runs inside the caller's transaction (an event finalised, a title
granted, extended, lapsed or revoked): it writes one ``Delivery`` per active subscription
to the event type and enqueues ``webhooks.tasks.webhook_deliver`` for each on commit, so a
rolled-back change sends nothing. ``webhooks_emit`` does the same for many payloads of one
type (players' notices) with one query and one insert, and returns the deliveries' ids per
payload, so the caller can follow them (``webhooks.signals.delivery_attempted``). The body
is JSON ``{"type", "created_at", "data"}`` with the caller's payload as ``data``; it is
fixed when emitted and re-sent byte for byte.

With in-process jobs (``CELERY_TASK_ALWAYS_EAGER`` with ``CELERY_TASK_EAGER_PROPAGATES``, the
local and test settings) the first attempt runs right after the commit, and a retry is
not re-run: Celery raises it, and the robust on-commit hook logs it (the delivery stays
pending with its attempt logged). Retries need a worker and a broker.
"""

import json
from collections.abc import Callable, Sequence
from datetime import datetime
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


def _subscribed(event_type: str) -> list[Subscription]:
    """The active subscriptions to ``event_type``, in id order (one query)."""
    if event_type not in EventType.values:
        raise ServiceError(f"Unknown webhook event type {event_type!r}.")
    return [
        subscription
        for subscription in Subscription.objects.filter(active=True).order_by("pk")
        if event_type in subscription.events
    ]


def _body(event_type: str, payload: dict[str, Any], now: datetime) -> str:
    return json.dumps(
        {"type": event_type, "created_at": now.isoformat(), "data": payload},
        cls=DjangoJSONEncoder,
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )


def webhook_emit(*, event_type: str, payload: dict[str, Any]) -> int:
    """Queue ``payload`` for every active subscription to ``event_type``; returns how many
    deliveries were created. Call it inside the transaction that made the change."""
    subscriptions = _subscribed(event_type)
    if not subscriptions:
        return 0
    now = timezone.now()
    body = _body(event_type, payload, now)
    with transaction.atomic():
        for subscription in subscriptions:
            delivery = Delivery.objects.create(
                subscription=subscription, event_type=event_type, body=body, created_at=now
            )
            # robust: a failure to enqueue (or, with eager tasks, to deliver) is logged and
            # never reaches the caller, whose change is already committed.
            transaction.on_commit(_enqueue(webhook_deliver, delivery.pk), robust=True)
    return len(subscriptions)


def webhooks_emit(*, event_type: str, payloads: Sequence[dict[str, Any]]) -> list[list[int]]:
    """Queue each payload for every active subscription to ``event_type`` (one query, one
    insert); returns, per payload in order, the ids of its deliveries (in subscription
    order; empty lists when nobody subscribes). Call it inside the transaction that made
    the change: each delivery is enqueued once it commits, as by :func:`webhook_emit`."""
    subscriptions = _subscribed(event_type)
    if not subscriptions or not payloads:
        return [[] for _ in payloads]
    now = timezone.now()
    bodies = [_body(event_type, payload, now) for payload in payloads]
    with transaction.atomic():
        created = Delivery.objects.bulk_create(
            [
                Delivery(
                    subscription=subscription, event_type=event_type, body=body, created_at=now
                )
                for body in bodies
                for subscription in subscriptions
            ]
        )
        for delivery in created:
            transaction.on_commit(_enqueue(webhook_deliver, delivery.pk), robust=True)
    width = len(subscriptions)
    return [
        [delivery.pk for delivery in created[index * width : (index + 1) * width]]
        for index in range(len(payloads))
    ]
