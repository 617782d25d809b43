"""Notice jobs, thin (SPEC §8): the e-mail delivery, one attempt per run, retried with
backoff while it stays pending; idempotent (a sent or failed delivery is not sent again).

The daily "expiring in 30 / 7 days" notices are a cross-app sequence (titles' terms →
notices), so their job calls the flow: ``titles.tasks.expiring_notices`` →
``flows.notices.expiring_notices_write``, on ``CELERY_BEAT_SCHEDULE``. It is not here
because ``flows.notices`` queues this module's task: this module imports no flow.
"""

from typing import Any

from celery import shared_task

from notices.delivery import notice_email_send, retry_countdown
from notices.models import DeliveryState


@shared_task(bind=True, name="notices.deliver_email", acks_late=True, max_retries=None)
def notice_email_deliver(self: Any, delivery_id: int) -> str:
    """Send a notice's e-mail; retry after 60 s, 120 s, 240 s … while it stays pending."""
    delivery = notice_email_send(delivery_id=delivery_id)
    if delivery.state == DeliveryState.PENDING:
        raise self.retry(countdown=retry_countdown(delivery.attempts))
    return str(delivery.state)
