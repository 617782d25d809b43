"""Partner webhooks of title changes (issue #7; SPEC §6 history, §9 partners).

Every history row a titles write adds is announced in its transaction
(``titles.announce.title_changes_written``); :func:`title_changes_emit` receives them and
sends one webhook per row of a kind some active subscription wants (:data:`WEBHOOK_OF_KIND`):
``granted`` (a new Master term) and ``lifetime`` (Lifetime conferred, at most once) are
``title.granted``; ``extended`` is ``title.extended``; ``lapsed`` is ``title.lapsed``;
``revoked`` (a sanction) is ``title.revoked``. Retractions, ignored qualifications and
restorations on appeal send nothing: partners subscribe to no such type. One query per
announcement finds the kinds wanted; with none, no payload is built. The same receiver then
tells the players (``flows.notices.title_notices``: their notices, and the partners'
``notice.created`` webhooks when that one query found a subscription to them). Being in the
writer's transaction, a rolled-back change sends nothing. Connected when the flows app is
ready.
"""

from typing import Any

from django.dispatch import receiver

from flows.notices import NOTICE_EVENT, title_notices
from titles.announce import Announced, change_payloads, title_changes_written
from titles.models import ChangeKind
from webhooks.models import EventType, Subscription
from webhooks.services import webhook_emit

#: The webhook event type each history kind is sent as; the other kinds send none.
WEBHOOK_OF_KIND: dict[str, str] = {
    ChangeKind.GRANTED: EventType.TITLE_GRANTED,
    ChangeKind.LIFETIME: EventType.TITLE_GRANTED,
    ChangeKind.EXTENDED: EventType.TITLE_EXTENDED,
    ChangeKind.LAPSED: EventType.TITLE_LAPSED,
    ChangeKind.REVOKED: EventType.TITLE_REVOKED,
}


def _subscribed() -> list[list[str]]:
    """The event types of every active subscription (one query)."""
    return list(Subscription.objects.filter(active=True).values_list("events", flat=True))


def webhook_kinds(subscribed: list[list[str]] | None = None) -> frozenset[str]:
    """The history kinds whose webhook some active subscription wants (one query, none when
    ``subscribed`` is given)."""
    wanted = _subscribed() if subscribed is None else subscribed
    return frozenset(
        kind for kind, event in WEBHOOK_OF_KIND.items() if any(event in w for w in wanted)
    )


@receiver(title_changes_written, dispatch_uid="flows.titles.title_changes_emit")
def title_changes_emit(sender: Any, *, changes: list[Announced], **kwargs: Any) -> int:
    """One ``webhook_emit`` per announced change of a wanted kind, then the players' notices
    of the changes (``flows.notices.title_notices``, with their ``notice.created`` webhooks
    when some subscription wants them); returns how many title webhooks were sent."""
    subscribed = _subscribed()
    kinds = webhook_kinds(subscribed)
    wanted = [change for change in changes if change[2] in kinds]
    for change, payload in zip(wanted, change_payloads(wanted), strict=True):
        webhook_emit(event_type=WEBHOOK_OF_KIND[change[2]], payload=payload)
    title_notices(changes, webhooks=any(NOTICE_EVENT in w for w in subscribed))
    return len(wanted)
