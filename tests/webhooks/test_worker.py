"""Retries through a real broker: a Celery worker (thread) consuming from Redis, the
backoff shortened to 0 s so the test stays fast. This is the path the eager tests cannot
show: ``self.retry`` re-queues the message and the worker runs it again."""

import time
from typing import Any

import pytest

from tests.webhooks.conftest import Receiver
from webhooks.models import Delivery, DeliveryAttempt, Subscription
from webhooks.services import webhook_emit


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_worker_retries_until_the_receiver_answers_2xx(
    celery_worker_app: Any, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("webhooks.services.BACKOFF_SECONDS", 0)
    Subscription.objects.create(
        name="partner", url=receiver.url, secret="s3cret", events=["title.granted"]
    )
    receiver.statuses = [500, 502, 200]

    assert webhook_emit(event_type="title.granted", payload={"player": "p0000001"}) == 1

    deadline = time.monotonic() + 20
    while Delivery.objects.get().status == "pending" and time.monotonic() < deadline:
        time.sleep(0.05)
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("succeeded", 3)
    assert list(DeliveryAttempt.objects.values_list("number", "status_code")) == [
        (1, 500),
        (2, 502),
        (3, 200),
    ]
    assert len(receiver.requests) == 3
