"""The season audit is on the one beat schedule (``CELERY_BEAT_SCHEDULE``, which
django-celery-beat's DatabaseScheduler syncs into its tables) at the configured crontab, and
nothing else registers it."""

import pytest
from celery.schedules import crontab
from django.conf import settings
from django_celery_beat.models import PeriodicTask
from django_celery_beat.schedulers import DatabaseScheduler

from config.celery_app import app


def test_the_beat_schedule_holds_the_season_audit_at_the_configured_crontab() -> None:
    entry = settings.CELERY_BEAT_SCHEDULE["integrity-season-audit"]

    assert entry["task"] == "integrity.audit_season"
    assert entry["schedule"] == crontab(**settings.INTEGRITY_SEASON_AUDIT_CRONTAB)
    assert settings.INTEGRITY_SEASON_AUDIT_CRONTAB == {
        "minute": "0",
        "hour": "4",
        "day_of_week": "2",
    }
    assert settings.CELERY_TIMEZONE == "Asia/Shanghai"
    assert settings.CELERY_BEAT_SCHEDULER == "django_celery_beat.schedulers:DatabaseScheduler"


def test_the_celery_app_sees_the_schedule_and_knows_the_task() -> None:
    app.loader.import_default_modules()

    assert app.conf.beat_schedule["integrity-season-audit"]["task"] == "integrity.audit_season"
    assert "integrity.audit_season" in app.tasks


@pytest.mark.django_db
def test_the_database_scheduler_stores_the_season_audit_once() -> None:
    PeriodicTask.objects.filter(name="integrity-season-audit").delete()
    entry = settings.CELERY_BEAT_SCHEDULE["integrity-season-audit"]

    # What DatabaseScheduler.update_from_dict does with each beat entry when beat starts.
    for _ in range(2):
        DatabaseScheduler.Entry.from_entry("integrity-season-audit", app=app, **entry)

    task = PeriodicTask.objects.get(name="integrity-season-audit")
    assert (task.task, task.enabled) == ("integrity.audit_season", True)
    crontab = task.crontab
    assert (crontab.minute, crontab.hour, crontab.day_of_week, str(crontab.timezone)) == (
        "0",
        "4",
        "2",
        "Asia/Shanghai",
    )
