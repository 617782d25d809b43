"""The delivery task against a real receiver on 127.0.0.1.

The test settings run tasks eagerly with CELERY_TASK_EAGER_PROPAGATES on (as the base
settings do). Checked here: under that setting Celery does *not* re-run a retried task
synchronously; ``self.retry(countdown=…)`` surfaces to the caller as
``celery.exceptions.Retry`` carrying the countdown. So the retry tests call the task in a
loop, each call playing the broker's part of redelivering the retried message, and record
the countdown each retry asked for. They prove the attempts, their log, the final status
and the backoff requested; they do not prove that a broker waits that long (Celery's part).
"""

from typing import Any

import pytest
from celery.exceptions import Retry

from tests.webhooks.conftest import Receiver
from webhooks.models import Delivery, DeliveryAttempt, Subscription
from webhooks.services import webhook_emit
from webhooks.signing import verify_signature
from webhooks.tasks import webhook_deliver

pytestmark = pytest.mark.django_db
PAYLOAD = {"event": "2021-W05-Q", "champion": "p0000001"}


def emit_and_commit(capture: Any) -> Delivery:
    """Emit inside a transaction and run its on-commit callbacks (the eager first attempt)."""
    with capture(execute=True):
        assert webhook_emit(event_type="event.finalised", payload=PAYLOAD) == 1
    return Delivery.objects.get()


def redeliver_until_done(delivery: Delivery) -> tuple[str, list[int]]:
    """Run the task as a broker would re-deliver it after each retry; returns its result and
    the countdown of every retry."""
    countdowns: list[int] = []
    for _ in range(10):
        try:
            return webhook_deliver.apply(args=[delivery.pk]).get(), countdowns
        except Retry as retry:
            countdowns.append(int(retry.when))
    raise AssertionError("the task kept retrying")


def test_delivered_on_commit_and_signed(
    subscription: Subscription, receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    delivery = emit_and_commit(django_capture_on_commit_callbacks)

    assert (delivery.status, delivery.attempts) == ("succeeded", 1)
    [request] = receiver.requests
    assert request.headers["X-UNOTour-Event"] == "event.finalised"
    assert verify_signature(
        subscription.secret,
        request.headers["X-UNOTour-Timestamp"],
        request.body,
        request.headers["X-UNOTour-Signature"],
    )


def test_eager_retry_surfaces_as_retry_and_the_caller_is_spared(
    subscription: Subscription, receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    receiver.statuses = [500, 500]

    delivery = emit_and_commit(django_capture_on_commit_callbacks)  # the Retry is logged

    assert (delivery.status, delivery.attempts) == ("pending", 1)
    with pytest.raises(Retry) as retry:
        webhook_deliver.delay(delivery.pk)
    assert retry.value.when == 60
    assert Delivery.objects.get().attempts == 2


def test_failing_receiver_is_retried_and_each_attempt_logged(
    subscription: Subscription, receiver: Receiver
) -> None:
    receiver.statuses = [500, 500, 200]
    webhook_emit(event_type="event.finalised", payload=PAYLOAD)
    delivery = Delivery.objects.get()

    assert redeliver_until_done(delivery) == ("succeeded", [30, 60])

    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("succeeded", 3)
    assert list(
        DeliveryAttempt.objects.filter(delivery=delivery).values_list(
            "number", "status_code", "response_body"
        )
    ) == [(1, 500, "answer 1: 500"), (2, 500, "answer 2: 500"), (3, 200, "answer 3: 200")]
    assert len(receiver.requests) == 3
    assert {r.body for r in receiver.requests} == {delivery.body.encode()}  # same bytes
    assert {r.headers["X-UNOTour-Delivery"] for r in receiver.requests} == {str(delivery.pk)}
    for request in receiver.requests:  # each attempt signed with its own timestamp
        assert verify_signature(
            "s3cret",
            request.headers["X-UNOTour-Timestamp"],
            request.body,
            request.headers["X-UNOTour-Signature"],
        )


def test_gives_up_after_six_attempts(subscription: Subscription, receiver: Receiver) -> None:
    receiver.statuses = [503] * 10
    webhook_emit(event_type="event.finalised", payload=PAYLOAD)
    delivery = Delivery.objects.get()

    assert redeliver_until_done(delivery) == ("failed", [30, 60, 120, 240, 480])

    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("failed", 6)
    assert delivery.completed_at is not None
    assert list(DeliveryAttempt.objects.values_list("number", "status_code")) == [
        (n, 503) for n in range(1, 7)
    ]
    assert len(receiver.requests) == 6

    # A redelivered message for a finished delivery sends nothing and logs nothing.
    assert webhook_deliver.delay(delivery.pk).get() == "failed"
    assert len(receiver.requests) == 6
    assert DeliveryAttempt.objects.count() == 6
