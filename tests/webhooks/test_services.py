import json
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.db import transaction

from core.errors import ConflictError, NotFoundError, ServiceError
from tests.webhooks.conftest import Receiver
from webhooks.delivery import delivery_attempt, retry_countdown
from webhooks.models import Delivery, DeliveryAttempt, Subscription
from webhooks.services import webhook_emit
from webhooks.signing import verify_signature

pytestmark = pytest.mark.django_db
PAYLOAD = {"event": "2021-W05-Q", "champion": {"id": "p0000001", "name": "小猴子"}}


def test_emit_filters_by_event_type_and_skips_inactive(
    django_capture_on_commit_callbacks: Any,
) -> None:
    finals = Subscription.objects.create(
        name="a", url="https://a.example/h", events=["event.finalised", "title.granted"]
    )
    Subscription.objects.create(name="b", url="https://b.example/h", events=["title.granted"])
    Subscription.objects.create(
        name="c", url="https://c.example/h", events=["event.finalised"], active=False
    )

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert webhook_emit(event_type="event.finalised", payload=PAYLOAD) == 1

    assert len(callbacks) == 1
    delivery = Delivery.objects.get()
    assert (delivery.subscription, delivery.event_type, delivery.status, delivery.attempts) == (
        finals,
        "event.finalised",
        "pending",
        0,
    )
    body = json.loads(delivery.body)
    assert body["type"] == "event.finalised"
    assert body["data"] == PAYLOAD
    assert set(body) == {"type", "created_at", "data"}


def test_emit_for_two_subscriptions_and_none(db: Any) -> None:
    for name in ("a", "b"):
        Subscription.objects.create(name=name, url="https://x.example/h", events=["title.lapsed"])

    assert webhook_emit(event_type="title.lapsed", payload={"player": "p1"}) == 2
    assert webhook_emit(event_type="title.revoked", payload={"player": "p1"}) == 0
    assert Delivery.objects.count() == 2


def test_emit_unknown_event_type_writes_nothing(db: Any) -> None:
    Subscription.objects.create(name="a", url="https://a.example/h", events=["title.granted"])

    with pytest.raises(ServiceError, match="title.expired"):
        webhook_emit(event_type="title.expired", payload={})
    assert Delivery.objects.count() == 0


def test_emit_serialises_dates(db: Any) -> None:
    Subscription.objects.create(name="a", url="https://a.example/h", events=["title.granted"])
    at = datetime(2021, 2, 1, 10, 0, tzinfo=ZoneInfo("Asia/Shanghai"))

    webhook_emit(event_type="title.granted", payload={"valid_until": at.date(), "at": at})

    assert json.loads(Delivery.objects.get().body)["data"] == {
        "valid_until": "2021-02-01",
        "at": "2021-02-01T10:00:00+08:00",
    }


def test_rolled_back_emit_sends_nothing(
    subscription: Subscription, receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    def finalise_then_fail() -> None:
        with transaction.atomic():
            webhook_emit(event_type="event.finalised", payload=PAYLOAD)
            raise ConflictError("refused after the emit")

    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(ConflictError),
    ):
        finalise_then_fail()

    assert callbacks == []
    assert Delivery.objects.count() == 0
    assert receiver.requests == []


def test_attempt_signs_and_succeeds_on_2xx(subscription: Subscription, receiver: Receiver) -> None:
    receiver.statuses = [204]
    webhook_emit(event_type="event.finalised", payload=PAYLOAD)
    delivery = Delivery.objects.get()

    assert delivery_attempt(delivery_id=delivery.pk).status == "succeeded"

    [request] = receiver.requests
    headers = request.headers
    assert headers["X-UNOTour-Event"] == "event.finalised"
    assert headers["X-UNOTour-Delivery"] == str(delivery.pk)
    assert headers["Content-Type"] == "application/json; charset=utf-8"
    assert request.body == delivery.body.encode("utf-8")
    assert verify_signature(
        "s3cret", headers["X-UNOTour-Timestamp"], request.body, headers["X-UNOTour-Signature"]
    )
    assert not verify_signature(
        "wrong", headers["X-UNOTour-Timestamp"], request.body, headers["X-UNOTour-Signature"]
    )
    attempt = DeliveryAttempt.objects.get()
    assert (attempt.number, attempt.status_code, attempt.error, attempt.response_body) == (
        1,
        204,
        "",
        "",
    )
    assert int(headers["X-UNOTour-Timestamp"]) == int(attempt.at.timestamp())
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("succeeded", 1)
    assert delivery.completed_at is not None

    assert delivery_attempt(delivery_id=delivery.pk).status == "succeeded"
    assert len(receiver.requests) == 1
    assert DeliveryAttempt.objects.count() == 1


def test_attempt_non_2xx_stays_pending_and_logs(
    subscription: Subscription, receiver: Receiver
) -> None:
    receiver.statuses = [500, 302]
    webhook_emit(event_type="event.finalised", payload=PAYLOAD)
    delivery = Delivery.objects.get()

    assert delivery_attempt(delivery_id=delivery.pk).status == "pending"
    assert delivery_attempt(delivery_id=delivery.pk).status == "pending"

    assert len(receiver.requests) == 2  # the 302 was not followed
    assert list(
        DeliveryAttempt.objects.values_list("number", "status_code", "error", "response_body")
    ) == [(1, 500, "", "answer 1: 500"), (2, 302, "", "answer 2: 302")]
    assert Delivery.objects.get().completed_at is None


def test_attempt_keeps_2kb_of_the_answer(subscription: Subscription, receiver: Receiver) -> None:
    receiver.statuses = [500]
    receiver.answer = "错".encode() * 1000  # 3,000 bytes
    webhook_emit(event_type="event.finalised", payload=PAYLOAD)

    delivery_attempt(delivery_id=Delivery.objects.get().pk)

    kept = DeliveryAttempt.objects.get().response_body
    # the first 2,048 bytes: 682 whole characters and two bytes of the next
    assert kept == "错" * 682 + "\ufffd"


def test_attempt_connection_refused_is_logged(db: Any) -> None:
    import socket

    with socket.socket() as probe:  # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    Subscription.objects.create(
        name="down", url=f"http://127.0.0.1:{port}/h", secret="s", events=["title.revoked"]
    )
    webhook_emit(event_type="title.revoked", payload={"player": "p1"})

    delivery = delivery_attempt(delivery_id=Delivery.objects.get().pk)

    attempt = DeliveryAttempt.objects.get()
    assert (delivery.status, attempt.status_code, attempt.response_body) == ("pending", None, "")
    assert "refused" in attempt.error.lower()


def test_attempt_timeout_is_logged(
    subscription: Subscription, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("webhooks.delivery.TIMEOUT_SECONDS", 0.2)
    receiver.delay = 0.6
    webhook_emit(event_type="event.finalised", payload=PAYLOAD)

    delivery_attempt(delivery_id=Delivery.objects.get().pk)

    attempt = DeliveryAttempt.objects.get()
    assert attempt.status_code is None
    assert "timed out" in attempt.error
    assert attempt.duration_ms >= 200


def test_inactive_subscription_gets_nothing_even_when_pending(
    subscription: Subscription, receiver: Receiver
) -> None:
    webhook_emit(event_type="event.finalised", payload=PAYLOAD)
    Subscription.objects.update(active=False)

    delivery = delivery_attempt(delivery_id=Delivery.objects.get().pk)

    assert (delivery.status, delivery.attempts) == ("failed", 0)
    assert receiver.requests == []
    assert DeliveryAttempt.objects.count() == 0


def test_attempt_on_missing_delivery(db: Any) -> None:
    with pytest.raises(NotFoundError):
        delivery_attempt(delivery_id=404)


def test_backoff_doubles_from_30_seconds_and_is_capped() -> None:
    assert [retry_countdown(n) for n in range(1, 6)] == [30, 60, 120, 240, 480]
    assert retry_countdown(8) == 3600
    assert retry_countdown(20) == 3600
