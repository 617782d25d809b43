"""Title jobs (SPEC §8), thin: each calls its service, which is idempotent.

Scheduled by ``CELERY_BEAT_SCHEDULE`` (config/settings/base.py); each also runs as a
management command over the same service. Two call a flow: the auto-approval
(``flows.grants``) and the players' expiry notices (``flows.notices``; its command is
``notices_expiring``).
"""

from celery import shared_task

from flows import grants, notices
from titles import services
from titles.recompute import titles_recompute_all


@shared_task(name="titles.expire", acks_late=True)
def titles_expire() -> int:
    """Daily: lapse the Master terms that ended yesterday or before."""
    return services.titles_expire()


@shared_task(name="titles.remind", acks_late=True)
def titles_remind() -> int:
    """Daily: the 30- and 7-day expiry reminders, each sent once."""
    return services.titles_remind()


@shared_task(name="titles.expiring_notices", acks_late=True)
def expiring_notices() -> int:
    """Daily: the players' "Master ends in 30 / 7 days" notices, each written once."""
    return notices.expiring_notices_write()


@shared_task(name="titles.world_cup_snapshot", acks_late=True)
def world_cup_snapshot() -> int:
    """On the 1st: last month's World Cup representatives become pending qualifications."""
    return services.world_cup_snapshot()


@shared_task(name="titles.auto_approve", acks_late=True)
def titles_auto_approve() -> int:
    """Daily: approve clean grants past the objection window (off unless configured)."""
    return grants.qualifications_auto_approve()


@shared_task(name="titles.recompute", acks_late=True)
def titles_recompute() -> int:
    """On demand: replay every player (after a bulk ledger import or a rule change)."""
    return titles_recompute_all(reason="recompute job")
