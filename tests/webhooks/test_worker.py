"""Retries through a real broker: a Celery worker (thread) consuming from Redis, the
backoff shortened to 0 s so the test stays fast. This is the path the eager tests cannot
show: ``self.retry`` re-queues the message and the worker runs it again.

The test waits for the worker's last run through Celery's ``task_postrun`` signal, not by
polling the delivery meanwhile: the signal says when the retries are over."""

import threading
from typing import Any

import pytest
from celery.signals import task_postrun

from tests.webhooks.conftest import Receiver
from webhooks.models import Delivery, DeliveryAttempt, Subscription
from webhooks.services import webhook_emit


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_worker_retries_until_the_receiver_answers_2xx(
    celery_worker_app: Any, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("webhooks.delivery.BACKOFF_SECONDS", 0)
    Subscription.objects.create(
        name="partner", url=receiver.url, secret="s3cret", events=["title.granted"]
    )
    receiver.statuses = [500, 502, 200]
    finished = threading.Event()

    def on_postrun(sender: Any = None, retval: Any = None, **kwargs: Any) -> None:
        if sender is not None and sender.name == "webhooks.deliver" and isinstance(retval, str):
            finished.set()  # a run that retries ends with the Retry exception instead

    task_postrun.connect(on_postrun, weak=False)
    try:
        assert webhook_emit(event_type="title.granted", payload={"player": "p0000001"}) == 1
        assert finished.wait(timeout=30)
    finally:
        task_postrun.disconnect(on_postrun)
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("succeeded", 3)
    assert list(DeliveryAttempt.objects.values_list("number", "status_code")) == [
        (1, 500),
        (2, 502),
        (3, 200),
    ]
    assert len(receiver.requests) == 3
