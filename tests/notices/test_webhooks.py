"""Notices to partners (issue #27): one signed ``notice.created`` webhook per notice and
subscription, counted as sent only after the partner answered 2xx (the webhooks app's
record, mirrored in the attempt's transaction); a failing partner leaves it pending, then
failed, with its attempts."""

import contextlib
import json
from datetime import date
from typing import Any

import pytest
from celery.exceptions import Retry
from django.core import mail

from accounts.models import Player, User
from flows.notices import notices_publish
from notices.models import NoticeDelivery, NoticeKind
from notices.selectors import delivery_states
from notices.services import Draft
from tests.notices.conftest import SECRET
from tests.webhooks.conftest import Receiver
from webhooks.delivery import MAX_ATTEMPTS
from webhooks.models import Delivery, Subscription
from webhooks.signing import verify_signature
from webhooks.tasks import webhook_deliver

pytestmark = pytest.mark.django_db

ON = date(2021, 3, 2)


def revoked(player: Player, key: str = "k") -> Draft:
    return Draft(key, player.pk, NoticeKind.TITLE_REVOKED, {"valid_until": None}, ON)


def publish(player: Player, capture: Any) -> NoticeDelivery:
    with capture(execute=True):
        [notice] = notices_publish([revoked(player)])
    return NoticeDelivery.objects.get(notice=notice, channel="webhook")


def test_signed_and_sent_after_a_2xx(
    player: Player,
    game_partner: Subscription,
    receiver: Receiver,
    django_capture_on_commit_callbacks: Any,
) -> None:
    delivery = publish(player, django_capture_on_commit_callbacks)

    [request] = receiver.requests
    assert request.headers["X-UNOTour-Event"] == "notice.created"
    assert verify_signature(
        SECRET,
        request.headers["X-UNOTour-Timestamp"],
        request.body,
        request.headers["X-UNOTour-Signature"],
    )
    body = json.loads(request.body)
    assert body["type"] == "notice.created"
    assert body["data"] == {
        "notice_id": delivery.notice_id,
        "key": "k",
        "kind": "title_revoked",
        "on": "2021-03-02",
        "player": {"external_id": "p0000001", "name": "小猴子"},
        "text": "全国头衔因违规被撤销。",
        "params": {"valid_until": None},
    }
    assert delivery.webhook is not None
    assert (delivery.webhook.status, delivery.webhook.attempts) == ("succeeded", 1)
    assert (delivery.state, delivery.attempts, delivery.error) == ("sent", 1, "")
    assert delivery.sent_at == delivery.webhook.completed_at
    assert delivery_states() == {("webhook", "sent"): 1}


def test_a_failing_partner_leaves_it_pending_then_failed(
    player: Player,
    game_partner: Subscription,
    receiver: Receiver,
    django_capture_on_commit_callbacks: Any,
) -> None:
    receiver.statuses = [500] * MAX_ATTEMPTS

    delivery = publish(player, django_capture_on_commit_callbacks)

    assert (delivery.state, delivery.attempts, delivery.error, delivery.sent_at) == (
        "pending",
        1,
        "HTTP 500",
        None,
    )
    assert delivery_states() == {("webhook", "pending"): 1}
    for _ in range(MAX_ATTEMPTS - 1):  # the broker's redeliveries after each retry
        with contextlib.suppress(Retry):
            webhook_deliver.apply(args=[delivery.webhook_id]).get()
    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts, delivery.error, delivery.sent_at) == (
        "failed",
        MAX_ATTEMPTS,
        "HTTP 500",
        None,
    )
    assert len(receiver.requests) == MAX_ATTEMPTS
    assert delivery_states() == {("webhook", "failed"): 1}


def test_a_retry_that_succeeds_counts_it_sent(
    player: Player,
    game_partner: Subscription,
    receiver: Receiver,
    django_capture_on_commit_callbacks: Any,
) -> None:
    receiver.statuses = [503]
    delivery = publish(player, django_capture_on_commit_callbacks)
    assert delivery.state == "pending"

    assert webhook_deliver.apply(args=[delivery.webhook_id]).get() == "succeeded"

    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts, delivery.error) == ("sent", 2, "")
    assert delivery.sent_at is not None


def test_one_delivery_per_subscription_and_none_for_other_types(
    player: Player, receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    for name, events in (("a", ["notice.created"]), ("b", ["notice.created", "title.granted"])):
        Subscription.objects.create(name=name, url=receiver.url, events=events)
    Subscription.objects.create(name="titles", url=receiver.url, events=["title.revoked"])
    Subscription.objects.create(
        name="off", url=receiver.url, events=["notice.created"], active=False
    )

    with django_capture_on_commit_callbacks(execute=True):
        notices_publish([revoked(player)])

    assert sorted(Delivery.objects.values_list("subscription__name", "event_type")) == [
        ("a", "notice.created"),
        ("b", "notice.created"),
    ]
    assert sorted(NoticeDelivery.objects.values_list("channel", "state")) == [
        ("webhook", "sent"),
        ("webhook", "sent"),
    ]


def test_a_deactivated_subscription_fails_its_delivery(
    player: Player, game_partner: Subscription, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        [notice] = notices_publish([revoked(player)])
    game_partner.active = False
    game_partner.save()
    delivery = NoticeDelivery.objects.get(notice=notice)

    assert webhook_deliver.apply(args=[delivery.webhook_id]).get() == "failed"

    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts, delivery.error) == (
        "failed",
        0,
        "subscription inactive",
    )


def test_email_and_webhook_each_counted(
    make_player: Any,
    game_partner: Subscription,
    receiver: Receiver,
    django_capture_on_commit_callbacks: Any,
) -> None:
    player = make_player(name="有邮箱", email="mail@example.com")
    publish(player, django_capture_on_commit_callbacks)

    assert len(mail.outbox) == 1
    assert len(receiver.requests) == 1
    assert delivery_states() == {("email", "sent"): 1, ("webhook", "sent"): 1}


def test_no_address_on_the_account_no_email(make_player: Any) -> None:
    """The address is the player's account's e-mail, read when the notice is written."""
    player = make_player(email="old@example.com")
    User.objects.filter(pk=player.user_id).update(email="")

    [notice] = notices_publish([revoked(player)])

    assert not NoticeDelivery.objects.filter(notice=notice).exists()
    assert mail.outbox == []
