"""One attempt at a webhook delivery, and the backoff between attempts.

``delivery_attempt`` makes one POST (stdlib ``urllib``, 5 s timeout, redirects not
followed), signed as ``webhooks.signing`` documents, and logs it as a ``DeliveryAttempt``.
A 2xx answer succeeds; anything else (another status, a timeout, a refused connection)
leaves the delivery pending for the task to retry, until the ``MAX_ATTEMPTS``-th attempt,
which marks it failed. Delivery is at least once: a partner drops an
``X-UNOTour-Delivery`` id it has already processed. Each attempt's record (and a delivery
dropped for an inactive subscription) is announced as ``webhooks.signals.delivery_attempted``
in its transaction.
"""

import http.client
import logging
import time
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from django.db import transaction
from django.utils import timezone

from core.errors import NotFoundError
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus
from webhooks.signals import delivery_attempted
from webhooks.signing import sign

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 6
TIMEOUT_SECONDS = 5
RESPONSE_BODY_BYTES = 2048
BACKOFF_SECONDS = 30
BACKOFF_CAP_SECONDS = 3600


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A 3xx is an answer like any other non-2xx: the POST is not re-sent elsewhere."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_opener = urllib.request.build_opener(_NoRedirect)


def retry_countdown(attempts: int) -> int:
    """Seconds to wait after ``attempts`` failed attempts: 30, 60, 120, 240, 480, … capped."""
    return min(BACKOFF_SECONDS << (attempts - 1), BACKOFF_CAP_SECONDS)


def _post(url: str, headers: dict[str, str], body: bytes) -> tuple[int | None, str, str]:
    """POST once; returns (status code or None, error, the first 2 KB of the answer)."""
    if urlsplit(url).scheme not in ("http", "https"):
        return None, f"refused URL scheme of {url!r}", ""
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")  # noqa: S310
    try:
        with _opener.open(request, timeout=TIMEOUT_SECONDS) as response:
            return response.status, "", _text(response.read(RESPONSE_BODY_BYTES))
    except urllib.error.HTTPError as answer:
        text = _text(answer.read(RESPONSE_BODY_BYTES)) if answer.fp else ""
        answer.close()
        return answer.code, "", text
    except urllib.error.URLError as failure:
        return None, str(failure.reason)[:500], ""
    except (OSError, http.client.HTTPException) as failure:
        return None, (f"{type(failure).__name__}: {failure}")[:500], ""


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


def delivery_attempt(*, delivery_id: int) -> Delivery:
    """Make one attempt at a pending delivery and log it; returns the delivery with its
    status after the attempt. A delivery that is no longer pending is returned unchanged;
    one whose subscription was deactivated is marked failed without a request."""
    try:
        delivery = Delivery.objects.select_related("subscription").get(pk=delivery_id)
    except Delivery.DoesNotExist as missing:
        raise NotFoundError(f"No webhook delivery {delivery_id}.") from missing
    if delivery.status != DeliveryStatus.PENDING:
        return delivery
    subscription = delivery.subscription
    if not subscription.active:
        with transaction.atomic():
            Delivery.objects.filter(pk=delivery.pk, status=DeliveryStatus.PENDING).update(
                status=DeliveryStatus.FAILED, completed_at=timezone.now()
            )
            delivery.refresh_from_db()
            delivery_attempted.send(
                sender=Delivery, delivery=delivery, error="subscription inactive"
            )
        logger.warning("webhook delivery %s dropped: subscription inactive", delivery.pk)
        return delivery

    sent_at = timezone.now()
    timestamp = str(int(sent_at.timestamp()))
    headers = {
        "Content-Type": "application/json; charset=utf-8",
        "User-Agent": "UNOTour-Webhooks/1",
        "X-UNOTour-Event": delivery.event_type,
        "X-UNOTour-Delivery": str(delivery.pk),
        "X-UNOTour-Timestamp": timestamp,
        "X-UNOTour-Signature": sign(subscription.secret, timestamp, delivery.body),
    }
    started = time.monotonic()
    status_code, error, text = _post(subscription.url, headers, delivery.body.encode("utf-8"))
    duration_ms = round((time.monotonic() - started) * 1000)
    succeeded = status_code is not None and 200 <= status_code < 300

    with transaction.atomic():
        delivery = Delivery.objects.select_for_update().get(pk=delivery_id)
        delivery.attempts += 1
        DeliveryAttempt.objects.create(
            delivery=delivery,
            number=delivery.attempts,
            at=sent_at,
            status_code=status_code,
            error=error,
            response_body=text,
            duration_ms=duration_ms,
        )
        if delivery.status == DeliveryStatus.PENDING and (
            succeeded or delivery.attempts >= MAX_ATTEMPTS
        ):
            delivery.status = DeliveryStatus.SUCCEEDED if succeeded else DeliveryStatus.FAILED
            delivery.completed_at = timezone.now()
        delivery.save(update_fields=["attempts", "status", "completed_at"])
        answer = "" if succeeded else error or f"HTTP {status_code}"
        delivery_attempted.send(sender=Delivery, delivery=delivery, error=answer)
    logger.info(
        "webhook delivery %s attempt %d: %s -> %s",
        delivery.pk,
        delivery.attempts,
        status_code or error,
        delivery.status,
    )
    return delivery
