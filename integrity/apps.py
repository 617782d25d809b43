from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


def season_audit_schedule(**kwargs: Any) -> None:
    """Register the weekly season audit with django-celery-beat (SPEC §7 "periodically over
    the season"): a ``PeriodicTask`` running ``integrity.audit_season`` on the crontab of
    ``INTEGRITY_SEASON_AUDIT_CRONTAB`` (Asia/Shanghai). Connected to ``post_migrate``;
    creates the task once and keeps an admin's later edits (enabled, schedule)."""
    from django_celery_beat.models import CrontabSchedule, PeriodicTask

    from core.post_migrate import migrated
    from integrity.conf import season_crontab

    if not migrated(
        kwargs, "django_celery_beat.PeriodicTask", "django_celery_beat.CrontabSchedule"
    ):
        return
    if PeriodicTask.objects.filter(name="integrity-season-audit").exists():
        return
    crontab, _ = CrontabSchedule.objects.get_or_create(
        **season_crontab(), day_of_month="*", month_of_year="*", timezone="Asia/Shanghai"
    )
    PeriodicTask.objects.create(
        name="integrity-season-audit",
        task="integrity.audit_season",
        crontab=crontab,
        description="Weekly integrity audit of the season's ended weeks (one task per week).",
    )


class IntegrityConfig(AppConfig):
    name = "integrity"
    verbose_name = "Integrity (audits and cases)"

    def ready(self) -> None:
        post_migrate.connect(
            season_audit_schedule, sender=self, dispatch_uid="integrity.season_audit_schedule"
        )
