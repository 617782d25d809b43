from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from webhooks.models import Delivery, DeliveryAttempt, Subscription

pytestmark = pytest.mark.django_db


def test_add_page_documents_the_signature(admin_client: Client) -> None:
    page = admin_client.get("/admin/webhooks/subscription/add/").content.decode()

    assert "X-UNOTour-Signature" in page
    assert "verify_signature" in page
    assert 'value="title.lapsed"' in page


def test_subscription_saved_with_chosen_event_types(admin_client: Client) -> None:
    response = admin_client.post(
        "/admin/webhooks/subscription/add/",
        {
            "name": "partner",
            "url": "https://partner.example/hooks",
            "secret": "s3cret",
            "events": ["event.finalised", "title.revoked"],
            "active": "on",
        },
    )

    assert response.status_code == 302
    subscription = Subscription.objects.get()
    assert subscription.events == ["event.finalised", "title.revoked"]
    assert subscription.active is True


def test_subscription_refuses_other_schemes_and_unknown_events(db: Any) -> None:
    with pytest.raises(ValidationError) as refused:
        Subscription(name="x", url="ftp://partner.example/h", events=["title.expired"]).full_clean()

    assert set(refused.value.message_dict) == {"url", "events"}
    assert Subscription(name="x", url="https://p.example/h").secret != ""


def test_delivery_log_page(admin_client: Client) -> None:
    subscription = Subscription.objects.create(name="p", url="https://p.example/h")
    delivery = Delivery.objects.create(
        subscription=subscription, event_type="title.granted", body="{}"
    )
    DeliveryAttempt.objects.create(
        delivery=delivery, number=1, at=delivery.created_at, status_code=500, duration_ms=12
    )

    page = admin_client.get(f"/admin/webhooks/delivery/{delivery.pk}/change/")

    assert page.status_code == 200
    assert "500" in page.content.decode()
