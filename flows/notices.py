"""Players' notices across apps (issue #27; SPEC §4 advancement, §6 titles, §7 sanctions and
appeals, §8 jobs): what happened to a player becomes a notice, written once, shown on their
page, sent to partners as a signed webhook (``notice.created``, shown in-game) and e-mailed
where an address is known.

The producers, each in its writer's transaction (a rolled-back fact tells no one):

* :func:`advancement_notices` — an event finalised (``flows.finalisation``) or re-frozen by
  a correction that added advancers (``flows.corrections``): each player who advanced from
  it into the event it feeds, ``advanced:<event code>:<player external id>``.
* :func:`title_notices` — the title history rows announced by ``titles.announce``
  (received by ``flows.titles``): granted, extended, Lifetime, lapsed, revoked and restored,
  ``title:<kind>:<player external id>:<on>:<valid until or ->:<source>``. Retractions and
  ignored qualifications tell nothing. The key names the fact, not the history row: an appeal that
  restores titles re-adds the rows the revocation retracted, with new ids, and a player is
  not told twice that they became a Master on the same day from the same source. A row
  dated more than ``NOTICES_TITLE_NEWS_DAYS`` before the tour day is history, not news
  (a bulk import of an old ledger tells no one).
* :func:`expiring_notices_write` — the daily job: every Master term due its 30- or 7-day
  reminder (``titles.services.reminders_due``, the reminders' own rule),
  ``expiring30:<term code>:<valid until>`` / ``expiring7:…``; an extended term is told
  again for its new end. Not e-mailed: the titles' reminder (``titles.remind``) e-mails
  the same fact.
* :func:`sanction_notices`, :func:`appeal_notices` — ``flows.sanctions``: each player
  sanctioned (``sanction:<sanction id>``), each sanction reversed by an upheld appeal
  (``sanction_reversed:<sanction id>``), an appeal rejected (``appeal_rejected:<appeal id>``).

:func:`notices_publish` writes the drafts (only new keys come back) and records their
deliveries: one partner webhook per active ``notice.created`` subscription and one e-mail to
the player's account address (``Player.user.email``) when there is one. A webhook delivery
is sent when the partner answered 2xx: :func:`webhook_attempted` mirrors each attempt the
webhooks app records (``webhooks.signals.delivery_attempted``).
"""

from collections.abc import Iterable, Sequence
from datetime import date, timedelta
from typing import Any

from django.conf import settings
from django.dispatch import receiver

from accounts.models import Player
from core.clock import tour_day, tour_today
from integrity.models import Appeal, Sanction
from notices.models import DeliveryState, Notice, NoticeKind
from notices.services import Draft, deliveries_record, notice_webhook_mirror, notices_write
from notices.texts import event_params, tour_text
from titles.announce import Announced
from titles.models import ChangeKind
from titles.services import reminders_due
from titles.services.jobs import job_day
from tournaments.models import Event, EventStatus, Standing
from tournaments.services.finalise import final_day
from webhooks.models import Delivery, DeliveryStatus, EventType
from webhooks.services import webhooks_emit
from webhooks.signals import delivery_attempted

__all__ = [
    "NOTICE_EVENT",
    "advancement_notices",
    "appeal_notices",
    "expiring_notices_write",
    "notices_publish",
    "sanction_notices",
    "title_notices",
]

#: The webhook event type of a notice.
NOTICE_EVENT = EventType.NOTICE_CREATED

#: The notice kind of each title history kind; the others (retracted, ignored) tell nothing.
NOTICE_OF_CHANGE: dict[str, str] = {
    ChangeKind.GRANTED: NoticeKind.TITLE_GRANTED,
    ChangeKind.EXTENDED: NoticeKind.TITLE_EXTENDED,
    ChangeKind.LIFETIME: NoticeKind.TITLE_LIFETIME,
    ChangeKind.LAPSED: NoticeKind.TITLE_LAPSED,
    ChangeKind.REVOKED: NoticeKind.TITLE_REVOKED,
    ChangeKind.RESTORED: NoticeKind.TITLE_RESTORED,
}

#: Kinds whose fact another channel already e-mails (the titles' expiry reminder).
NOT_EMAILED = frozenset({NoticeKind.TITLE_EXPIRING})

#: A notice delivery's state for each state of its partner delivery.
STATE_OF_STATUS = {
    DeliveryStatus.PENDING: DeliveryState.PENDING,
    DeliveryStatus.SUCCEEDED: DeliveryState.SENT,
    DeliveryStatus.FAILED: DeliveryState.FAILED,
}


def _payload(notice: Notice, player: tuple[str, str]) -> dict[str, Any]:
    """The partners' ``notice.created`` data: what the game shows, in the tour's language."""
    return {
        "notice_id": notice.pk,
        "key": notice.key,
        "kind": notice.kind,
        "on": notice.on.isoformat(),
        "player": {"external_id": player[0], "name": player[1]},
        "text": tour_text(notice),
        "params": notice.params,
    }


def notices_publish(drafts: Sequence[Draft], *, webhooks: bool = True) -> list[Notice]:
    """Write the drafts whose key is new and record their deliveries (module docstring);
    returns the notices written now. ``webhooks`` False: the caller knows that no active
    subscription wants ``notice.created`` (no query for it)."""
    written = notices_write(drafts)
    if not written:
        return []
    players = {
        pk: (external_id, name, email or "")
        for pk, external_id, name, email in Player.objects.filter(
            pk__in=sorted({notice.player_id for notice in written})
        ).values_list("pk", "external_id", "name", "user__email")
    }
    sent: list[list[int]] = [[] for _ in written]
    if webhooks:
        sent = webhooks_emit(
            event_type=NOTICE_EVENT,
            payloads=[_payload(n, players[n.player_id][:2]) for n in written],
        )
    deliveries_record(
        notices=written,
        webhooks={notice.pk: ids for notice, ids in zip(written, sent, strict=True)},
        emails={
            notice.pk: players[notice.player_id][2]
            for notice in written
            if notice.kind not in NOT_EMAILED
        },
    )
    return written


# --- advancement (SPEC §4) ---------------------------------------------------------------------


def _event(event: Event) -> dict[str, Any]:
    return event_params(
        code=event.code, kind=event.kind, station=event.station, city=event.city, name=event.name
    )


def advancement_notices(event: Event) -> list[Notice]:
    """Tell each player who advanced from the finalised ``event`` into the event it feeds
    (none when it feeds none, or that one is cancelled); idempotent."""
    if event.status != EventStatus.FINALISED or event.feeds_id is None:
        return []
    target = Event.objects.get(pk=event.feeds_id)
    if target.status == EventStatus.CANCELLED:
        return []
    on, params = final_day(event), {"source": _event(event), "target": _event(target)}
    advanced = (
        Standing.objects.filter(event=event, advanced=True)
        .order_by("player_id")
        .values_list("player_id", "player__external_id")
    )
    return notices_publish(
        [
            Draft(f"advanced:{event.code}:{external_id}", pid, NoticeKind.ADVANCED, params, on)
            for pid, external_id in advanced
        ]
    )


# --- titles (SPEC §6) --------------------------------------------------------------------------


def title_notices(changes: Iterable[Announced], *, webhooks: bool = True) -> list[Notice]:
    """Tell each player of their announced title changes (module docstring)."""
    news = tour_today() - timedelta(days=settings.NOTICES_TITLE_NEWS_DAYS)
    told = [change for change in changes if change[2] in NOTICE_OF_CHANGE and change[3] >= news]
    if not told:
        return []
    external = dict(
        Player.objects.filter(pk__in=sorted({change[1] for change in told})).values_list(
            "pk", "external_id"
        )
    )
    drafts = []
    for _, pid, kind, on, valid_until, source in told:
        until = valid_until.isoformat() if valid_until is not None else None
        drafts.append(
            Draft(
                f"title:{ChangeKind(kind).value}:{external[pid]}:{on.isoformat()}:"
                f"{until or '-'}:{source}",
                pid,
                NOTICE_OF_CHANGE[kind],
                {"valid_until": until},
                on,
            )
        )
    return notices_publish(drafts, webhooks=webhooks)


def expiring_notices_write(*, today: date | None = None, simulate: bool = False) -> int:
    """The daily job: tell each holder whose Master term is due its 30- or 7-day reminder
    on ``today`` (the tour day by default; a later day only when ``simulate``, as the
    titles' jobs: ``titles.services.jobs.job_day``), once per term, end day and threshold;
    returns how many notices were written."""
    day, _ = job_day(job="expiring_notices", today=today, simulate=simulate)
    drafts = [
        Draft(
            f"expiring{days}:{term.code}:{term.valid_until.isoformat()}",
            term.player_id,
            NoticeKind.TITLE_EXPIRING,
            {"valid_until": term.valid_until.isoformat(), "days": days, "code": term.code},
            day,
        )
        for term, days in reminders_due(today=day)
    ]
    return len(notices_publish(drafts))


# --- sanctions and appeals (SPEC §7) -----------------------------------------------------------


def sanction_notices(sanctions: Iterable[Sanction]) -> list[Notice]:
    """Tell each sanctioned player what the sanction did (public words only: no reason, no
    evidence, no other player)."""
    return notices_publish(
        [
            Draft(
                f"sanction:{sanction.pk}",
                sanction.player_id,
                NoticeKind.SANCTIONED,
                {
                    "void_games": sanction.void_games,
                    "revoke_titles": sanction.revoke_titles,
                    "suspend": sanction.suspend,
                },
                sanction.effective_on,
            )
            for sanction in sanctions
        ]
    )


def appeal_notices(appeal: Appeal, reversed_sanctions: Iterable[Sanction]) -> list[Notice]:
    """An appeal decided: upheld, each player whose sanction it reversed is told; rejected,
    the appellant is."""
    on = tour_day(appeal.decided_at) if appeal.decided_at else tour_today()
    if appeal.status == Appeal.Status.UPHELD:
        drafts = [
            Draft(
                f"sanction_reversed:{sanction.pk}",
                sanction.player_id,
                NoticeKind.SANCTION_REVERSED,
                {},
                on,
            )
            for sanction in reversed_sanctions
        ]
    elif appeal.status == Appeal.Status.REJECTED:
        drafts = [
            Draft(
                f"appeal_rejected:{appeal.pk}", appeal.player_id, NoticeKind.APPEAL_REJECTED, {}, on
            )
        ]
    else:
        drafts = []
    return notices_publish(drafts)


# --- delivery state ----------------------------------------------------------------------------


@receiver(delivery_attempted, dispatch_uid="flows.notices.webhook_attempted")
def webhook_attempted(sender: Any, *, delivery: Delivery, error: str, **kwargs: Any) -> int:
    """Mirror a ``notice.created`` delivery's state after each attempt, in its transaction."""
    if delivery.event_type != NOTICE_EVENT:
        return 0
    return notice_webhook_mirror(
        webhook_id=delivery.pk,
        state=STATE_OF_STATUS[DeliveryStatus(delivery.status)],
        attempts=delivery.attempts,
        error=error,
        completed_at=delivery.completed_at,
    )
