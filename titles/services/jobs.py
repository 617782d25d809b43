"""The titles' daily jobs (SPEC §8): the expiry sweep and the expiry reminders.

Both are idempotent: the sweep lapses each ended Master term once and writes each lapse to
the history once; a :class:`~titles.models.Notification` row per (term, end day, threshold)
guards each reminder, which counts as sent only once it was delivered (an e-mail went out):
a holder without an address gets a ``none`` row, and the reminder goes out on a later run
once they have one.

Both run as of the tour day (:func:`core.clock.tour_today`). A command may give an earlier
``today``; a later one is refused unless ``simulate`` is set (:func:`job_day`), which is
logged (``job_simulated``, logger ``unotour.titles``) and written into the reason of the
history rows the run adds. Beat never simulates.
"""

import logging
from datetime import date, timedelta

from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone

from core.clock import tour_today
from core.errors import ServiceError
from core.logs import log_event
from titles.announce import changes_announce
from titles.models import (
    ChangeKind,
    Notification,
    NotificationChannel,
    PlayerTitle,
    TermState,
    TitleChange,
    TitleStatus,
    TitleTerm,
)
from titles.recompute import titles_lock

#: Reminders go this many days before a Master term ends (SPEC §8).
REMINDER_DAYS = (30, 7)

jobs_log = logging.getLogger("unotour.titles")


def job_day(*, job: str, today: date | None, simulate: bool) -> tuple[date, str]:
    """The day ``job`` runs as and the note its history reasons carry: the tour day by
    default; ``today`` if not after it; a later ``today`` only when ``simulate`` (logged)."""
    real = tour_today()
    day = today or real
    if day > real and not simulate:
        raise ServiceError(
            f"{day} is after the tour day {real}: a job does not run in the future"
            " (give --simulate to simulate that day).",
            detail={"today": day.isoformat(), "tour_today": real.isoformat()},
        )
    if not simulate:
        return day, ""
    log_event(
        jobs_log,
        logging.WARNING,
        "job_simulated",
        job=job,
        today=day.isoformat(),
        tour_today=real.isoformat(),
    )
    return day, f" (simulated as of {day})"


def titles_expire(*, today: date | None = None, simulate: bool = False) -> int:
    """The daily expiry sweep: Master terms whose ``valid_until`` has passed (Asia/Shanghai)
    become lapsed, their holders' status too, and each lapse is written to the history once.
    Idempotent; returns the number of terms that lapsed. ``today``/``simulate``: :func:`job_day`."""
    today, note = job_day(job="titles_expire", today=today, simulate=simulate)
    ended = TitleTerm.objects.filter(state=TermState.CURRENT, valid_until__lt=today)
    player_ids = sorted(set(ended.values_list("player_id", flat=True)))
    now = timezone.now()
    with transaction.atomic():
        titles_lock(player_ids)
        terms = list(ended.filter(player_id__in=player_ids).order_by("player_id", "start"))
        live = set(
            TitleChange.objects.filter(
                player_id__in=player_ids,
                kind=ChangeKind.LAPSED,
                retraction__isnull=True,
            ).values_list("player_id", "on", "source")
        )
        lapses = TitleChange.objects.bulk_create(
            [
                TitleChange(
                    player_id=term.player_id,
                    kind=ChangeKind.LAPSED,
                    on=term.valid_until + timedelta(days=1),
                    source=term.sources[-1],
                    valid_until=term.valid_until,
                    at=now,
                    reason=f"expiry sweep{note}",
                )
                for term in terms
                if (term.player_id, term.valid_until + timedelta(days=1), term.sources[-1])
                not in live
            ]
        )
        changes_announce(lapses)
        TitleTerm.objects.filter(pk__in=[term.pk for term in terms]).update(
            state=TermState.LAPSED, updated_at=now
        )
        PlayerTitle.objects.filter(
            player_id__in=player_ids, status=TitleStatus.MASTER, valid_until__lt=today
        ).update(status=TitleStatus.LAPSED, updated_at=now)
    return len(terms)


def _reminder_text(term: TitleTerm, days: int) -> tuple[str, str]:
    until = term.valid_until.isoformat()
    subject = f"UNO中国大师头衔将于 {until} 到期 / Your UNO China Master title ends {until}"
    body = (
        f"{term.player.name}，您好：\n\n"
        f"您的UNO中国大师头衔有效期至 {until}（北京时间，含当日），还有 {days} 天以内到期。"
        "有效期内再次达成任一大师资格，将自动延长1年。\n"
        f"验证码 / verification code: {term.code}\n\n"
        f"Your UNO China Master title is valid through {until} (Asia/Shanghai). "
        "Reaching any Master qualification before then extends it by one year.\n"
    )
    return subject, body


def _remind(term: TitleTerm, days: int) -> bool:
    """Send ``term``'s ``days`` reminder unless it went out already; whether it went now."""
    user = term.player.user
    email = user.email if user is not None else ""
    with transaction.atomic():
        notice, created = Notification.objects.select_for_update().get_or_create(
            player=term.player,
            term=term,
            valid_until=term.valid_until,
            days=days,
            defaults={"email": email, "channel": NotificationChannel.NONE, "sent_at": None},
        )
        if notice.channel != NotificationChannel.NONE:
            return False
        if not email:
            if created:
                log_event(
                    jobs_log,
                    logging.INFO,
                    "reminder_no_channel",
                    player=term.player.external_id,
                    valid_until=term.valid_until.isoformat(),
                    days=days,
                )
            return False
        subject, body = _reminder_text(term, days)
        send_mail(subject, body, None, [email])
        notice.email, notice.channel, notice.sent_at = (
            email,
            NotificationChannel.EMAIL,
            timezone.now(),
        )
        notice.save(update_fields=["email", "channel", "sent_at"])
    return True


def reminders_due(*, today: date) -> list[tuple[TitleTerm, int]]:
    """The Master terms that end within the largest of :data:`REMINDER_DAYS` of ``today``
    (Asia/Shanghai days, ``valid_until`` inclusive), each with the threshold due: the
    smallest of ``REMINDER_DAYS`` not below the days left, so a term with 8–30 days left is
    due its 30-day reminder and one with 0–7 its 7-day one. Lifetime Masters are never due.
    In ``valid_until`` order, players (with their users) loaded. A read: callers record
    what they did with each, once (the reminders here, the players' notices in ``flows``)."""
    horizon = today + timedelta(days=max(REMINDER_DAYS))
    terms = (
        TitleTerm.objects.filter(
            state=TermState.CURRENT, valid_until__gte=today, valid_until__lte=horizon
        )
        .exclude(player__title__status=TitleStatus.LIFETIME)
        .select_related("player__user")
        .order_by("valid_until", "id")
    )
    return [
        (term, min(d for d in REMINDER_DAYS if d >= (term.valid_until - today).days))
        for term in terms
    ]


def titles_remind(*, today: date | None = None, simulate: bool = False) -> int:
    """Remind holders 30 and 7 days before their Master term ends (SPEC §8), once each. A
    term first seen with 7 days or fewer left gets only the 7-day reminder; Lifetime Masters
    get none (:func:`reminders_due`). Returns the number of reminders sent (delivered).
    ``today``/``simulate``: :func:`job_day`."""
    today, _ = job_day(job="titles_remind", today=today, simulate=simulate)
    sent = 0
    for term, days in reminders_due(today=today):
        sent += _remind(term, days)
    return sent
