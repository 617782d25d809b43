"""One attempt at a notice's e-mail (issue #27), and the wait between attempts.

:func:`notice_email_send` sends through Django's e-mail backend (``EMAIL_URL``; the tests'
locmem outbox). The delivery is ``sent`` once the backend accepted the message; an error
(SMTP, network) leaves it pending with the attempt counted and its error kept, for the task
to retry, and marks it ``failed`` at the :data:`EMAIL_MAX_ATTEMPTS`-th attempt. The row is
locked while sending, so two runs of the task never send one delivery twice; a message the
backend accepted just before the transaction failed would be sent again (at least once).
"""

import logging
import smtplib

from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone

from notices.models import Channel, DeliveryState, NoticeDelivery
from notices.texts import email_message

logger = logging.getLogger(__name__)

#: Attempts at an e-mail before its delivery is marked failed.
EMAIL_MAX_ATTEMPTS = 5
BACKOFF_SECONDS = 60
BACKOFF_CAP_SECONDS = 3600


def retry_countdown(attempts: int) -> int:
    """Seconds to wait after ``attempts`` failed attempts: 60, 120, 240, … capped."""
    return min(BACKOFF_SECONDS << max(attempts - 1, 0), BACKOFF_CAP_SECONDS)


def notice_email_send(*, delivery_id: int) -> NoticeDelivery:
    """One attempt at a pending e-mail delivery; returns it as it stands after. Anything not
    pending, or not an e-mail, is returned unchanged (a redelivered task sends nothing)."""
    with transaction.atomic():
        delivery = (
            NoticeDelivery.objects.select_for_update(of=("self",))
            .select_related("notice__player")
            .get(pk=delivery_id)
        )
        if delivery.state != DeliveryState.PENDING or delivery.channel != Channel.EMAIL:
            return delivery
        subject, body = email_message(delivery.notice, name=delivery.notice.player.name)
        try:
            accepted = send_mail(subject, body, None, [delivery.email])
            error = "" if accepted else "not accepted by the e-mail backend"
        except (smtplib.SMTPException, OSError) as failure:
            accepted, error = 0, f"{type(failure).__name__}: {failure}"[:500]
        delivery.attempts += 1
        delivery.error = error
        if accepted:
            delivery.state, delivery.sent_at = DeliveryState.SENT, timezone.now()
        elif delivery.attempts >= EMAIL_MAX_ATTEMPTS:
            delivery.state = DeliveryState.FAILED
        delivery.save(update_fields=["attempts", "error", "state", "sent_at"])
    logger.info("notice e-mail %s attempt %d: %s", delivery.pk, delivery.attempts, delivery.state)
    return delivery
