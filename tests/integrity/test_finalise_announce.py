"""Finalising an event enqueues its integrity audit and the partners' webhook (SPEC §7, §8)."""

import json
from typing import Any

import pytest

from flows.finalisation import event_finalise
from integrity.models import AuditRun
from tests.integrity.farm import monthly_with_a_farm
from tests.tournaments.factories import AFTER
from webhooks.models import Delivery, Subscription

pytestmark = pytest.mark.django_db


def test_finalise_audits_the_event_and_notifies_subscribers(
    django_capture_on_commit_callbacks: Any,
) -> None:
    Subscription.objects.create(
        name="partner", url="http://127.0.0.1:9/hook", secret="s3cret", events=["event.finalised"]
    )
    monthly, _, players = monthly_with_a_farm()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        event_finalise(event=monthly, by=None, now=AFTER)
    [delivery] = Delivery.objects.all()
    body = json.loads(delivery.body)
    assert delivery.event_type == "event.finalised"
    assert body["data"]["event"] == "2021-02-M"
    assert body["data"]["champion"] == players["b"].external_id
    assert AuditRun.objects.count() == 0  # the audit runs after commit
    callbacks[0]()
    assert AuditRun.objects.get().key == "event:2021-02-M"

    with django_capture_on_commit_callbacks(execute=False) as again:
        event_finalise(event=monthly, by=None, now=AFTER)  # idempotent: nothing announced
    assert again == []
    assert Delivery.objects.count() == 1
