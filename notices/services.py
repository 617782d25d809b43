"""Players' notices, the writes (issue #27): each fact written once, each channel's delivery
counted as sent only once delivered.

* :func:`notices_write` (:func:`notice_write` for one) writes the notices whose key is new,
  in the caller's transaction, and returns only those: a producer that runs again writes
  nothing and delivers nothing. Producers live in ``flows.notices``; this app imports no
  other app's writes.
* :func:`deliveries_record` records, for notices just written, one ``webhook`` delivery per
  partner delivery the caller queued and one ``email`` delivery where an address is known;
  the e-mails are queued (:func:`notices.tasks.notice_email_deliver`) once the transaction
  commits, so a rolled-back fact sends nothing (each attempt:
  :func:`notices.delivery.notice_email_send`).
* :func:`notice_webhook_mirror` copies a partner delivery's state, as the webhooks app
  recorded it, onto its notice delivery: ``sent`` only after a 2xx answer.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.models import Player
from notices import sql
from notices.models import Channel, DeliveryState, Notice, NoticeDelivery
from notices.tasks import notice_email_deliver


@dataclass(frozen=True)
class Draft:
    """A notice to write: the fact's ``key`` (unique), whose it is, what and when."""

    key: str
    player_id: int
    kind: str
    params: dict[str, Any]
    on: date


def notices_write(drafts: Sequence[Draft]) -> list[Notice]:
    """Write the drafts whose key is new (the first of equal keys); returns the notices
    written now, in the drafts' order. Run it in the transaction that made the facts."""
    unique: dict[str, Draft] = {}
    for draft in drafts:
        unique.setdefault(draft.key, draft)
    if not unique:
        return []
    at = timezone.now()
    inserted = sql.notices_insert_new(
        [(d.key, d.player_id, d.kind, d.params, d.on) for d in unique.values()], at=at
    )
    return [
        Notice(
            pk=pk,
            key=key,
            player_id=unique[key].player_id,
            kind=unique[key].kind,
            params=unique[key].params,
            on=unique[key].on,
            created_at=at,
        )
        for pk, key in inserted
    ]


def notice_write(
    *, key: str, player: Player, kind: str, params: dict[str, Any], on: date
) -> Notice | None:
    """Write one notice unless its key exists; the notice, or None when it existed."""
    written = notices_write([Draft(key, player.pk, kind, params, on)])
    return written[0] if written else None


def _enqueue(delivery_id: int) -> Callable[[], None]:
    def deliver() -> None:  # named: robust on_commit logs a failure by __qualname__
        notice_email_deliver.delay(delivery_id)

    return deliver


def deliveries_record(
    *,
    notices: Sequence[Notice],
    webhooks: Mapping[int, Sequence[int]],
    emails: Mapping[int, str],
) -> list[NoticeDelivery]:
    """Record the deliveries of ``notices`` (just written): per notice, one ``webhook``
    delivery for each partner delivery id in ``webhooks[notice id]`` and one ``email``
    delivery to ``emails[notice id]`` when given; the e-mails are queued on commit."""
    rows = [
        NoticeDelivery(notice_id=notice.pk, channel=Channel.WEBHOOK, webhook_id=webhook_id)
        for notice in notices
        for webhook_id in webhooks.get(notice.pk, ())
    ] + [
        NoticeDelivery(notice_id=notice.pk, channel=Channel.EMAIL, email=emails[notice.pk])
        for notice in notices
        if emails.get(notice.pk)
    ]
    created = NoticeDelivery.objects.bulk_create(rows)
    for delivery in created:
        if delivery.channel == Channel.EMAIL:
            transaction.on_commit(_enqueue(delivery.pk), robust=True)
    return created


def notice_webhook_mirror(
    *, webhook_id: int, state: str, attempts: int, error: str, completed_at: datetime | None
) -> int:
    """Copy a partner delivery's state onto its notice delivery (``sent`` carries the time
    the 2xx came); returns the rows updated (0: not a notice's delivery)."""
    return NoticeDelivery.objects.filter(webhook_id=webhook_id).update(
        state=state,
        attempts=attempts,
        error=error[:500],
        sent_at=completed_at if state == DeliveryState.SENT else None,
    )
