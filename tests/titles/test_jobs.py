"""Daily and monthly jobs (SPEC §8): idempotent expiry sweep, reminders sent once, the
World Cup month-end snapshot; their commands and beat schedule."""

from collections.abc import Callable
from datetime import date
from io import StringIO
from typing import Any

import pytest
from django.conf import settings
from django.core import mail
from django.core.management import CommandError, call_command

from accounts.models import Player, User
from core.errors import ServiceError
from titles import services, tasks
from titles.models import Notification, PlayerTitle, Qualification, TitleChange, TitleTerm
from titles.recompute import titles_recompute_all

pytestmark = pytest.mark.django_db


def test_expiry_sweep_lapses_once_and_a_second_run_changes_nothing(
    freeze: Callable[[date], None],
    make_player: Callable[..., Player],
    grant: Callable[..., Qualification],
) -> None:
    freeze(date(2021, 12, 31))
    master, lifetime, valid = make_player(), make_player(), make_player()
    grant(master, "m", date(2021, 3, 1))
    grant(lifetime, "m", date(2021, 1, 10))
    grant(lifetime, "nc", date(2021, 11, 20), achievement="national_championship")
    grant(valid, "m", date(2021, 12, 1))
    changes = TitleChange.objects.count()
    freeze(date(2022, 3, 2))

    assert services.titles_expire(today=date(2022, 1, 10)) == 0  # last valid day of one
    assert services.titles_expire(today=date(2022, 3, 2)) == 2
    assert dict(PlayerTitle.objects.values_list("player_id", "status")) == {
        master.pk: "lapsed",
        lifetime.pk: "lifetime",
        valid.pk: "master",
    }
    # django-stubs types the nullable "by" in values_list as int, so the None looks impossible.
    assert list(  # type: ignore[comparison-overlap]
        TitleChange.objects.filter(kind="lapsed")
        .order_by("player_id")
        .values_list("player_id", "on", "source", "valid_until", "by", "reason")
    ) == [
        (master.pk, date(2022, 3, 2), "m", date(2022, 3, 1), None, "expiry sweep"),
        (lifetime.pk, date(2022, 1, 11), "m", date(2022, 1, 10), None, "expiry sweep"),
    ]
    assert TitleChange.objects.count() == changes + 2
    state = (
        list(PlayerTitle.objects.order_by("pk").values()),
        list(TitleTerm.objects.order_by("pk").values()),
        list(TitleChange.objects.order_by("pk").values()),
    )

    assert services.titles_expire(today=date(2022, 3, 2)) == 0
    freeze(date(2022, 3, 2))
    titles_recompute_all(reason="after the sweep")
    assert state == (
        list(PlayerTitle.objects.order_by("pk").values()),
        list(TitleTerm.objects.order_by("pk").values()),
        list(TitleChange.objects.order_by("pk").values()),
    )


def test_a_reminder_is_sent_once_30_and_7_days_before_the_end(
    freeze: Callable[[date], None],
    make_player: Callable[..., Player],
    grant: Callable[..., Qualification],
) -> None:
    freeze(date(2021, 6, 1))
    holder = make_player(name="小猴子", email="monkey@example.com")
    silent = make_player()
    grant(holder, "m", date(2021, 3, 1))
    grant(silent, "m", date(2021, 3, 1))
    code = TitleTerm.objects.get(player=holder).code
    freeze(date(2022, 2, 25))

    assert services.titles_remind(today=date(2022, 1, 29)) == 0  # 31 days left
    assert services.titles_remind(today=date(2022, 1, 30)) == 1  # the silent one: no channel
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["monkey@example.com"]
    assert "2022-03-01" in mail.outbox[0].subject
    assert code in mail.outbox[0].body
    assert services.titles_remind(today=date(2022, 1, 30)) == 0
    assert services.titles_remind(today=date(2022, 2, 10)) == 0
    assert len(mail.outbox) == 1

    assert services.titles_remind(today=date(2022, 2, 22)) == 1  # 7 days left
    assert services.titles_remind(today=date(2022, 2, 25)) == 0
    assert len(mail.outbox) == 2
    assert sorted(
        Notification.objects.values_list("player_id", "days", "email", "channel")
    ) == sorted(
        [
            (holder.pk, 30, "monkey@example.com", "email"),
            (holder.pk, 7, "monkey@example.com", "email"),
            (silent.pk, 30, "", "none"),
            (silent.pk, 7, "", "none"),
        ]
    )


def test_a_term_first_seen_close_to_its_end_gets_only_the_7_day_reminder(
    freeze: Callable[[date], None],
    make_player: Callable[..., Player],
    grant: Callable[..., Qualification],
) -> None:
    freeze(date(2021, 6, 1))
    holder = make_player(email="a@example.com")
    grant(holder, "m", date(2021, 3, 1))
    freeze(date(2022, 2, 27))
    assert services.titles_remind(today=date(2022, 2, 26)) == 1
    assert services.titles_remind(today=date(2022, 2, 27)) == 0
    assert list(Notification.objects.values_list("days", flat=True)) == [7]
    assert len(mail.outbox) == 1


def test_world_cup_representatives_become_qualifications_at_month_end(
    freeze: Callable[[date], None],
    make_player: Callable[..., Player],
    organiser: User,
) -> None:
    a, b, c = make_player(), make_player(), make_player()
    freeze(date(2021, 3, 15))
    services.world_cup_representative_enter(
        year=2021, month=3, ranking="80x", player=a, by=organiser
    )
    services.world_cup_representative_enter(
        year=2021, month=3, ranking="8x", player=b, by=organiser
    )
    assert Qualification.objects.count() == 0
    with pytest.raises(ServiceError, match="not ended"):
        services.world_cup_snapshot(year=2021, month=3)

    freeze(date(2021, 4, 1))
    assert services.world_cup_snapshot(year=2021, month=3) == 2
    assert services.world_cup_snapshot() == 0
    assert tasks.world_cup_snapshot.delay().get() == 0
    assert sorted(Qualification.objects.values_list("player_id", "source", "on", "status")) == [
        (a.pk, "world_cup:2021-03:80x", date(2021, 3, 31), "pending"),
        (b.pk, "world_cup:2021-03:8x", date(2021, 3, 31), "pending"),
    ]

    services.world_cup_representative_enter(
        year=2021, month=3, ranking="8x", player=c, by=organiser
    )
    assert sorted(Qualification.objects.values_list("player_id", "source", "status")) == [
        (a.pk, "world_cup:2021-03:80x", "pending"),
        (b.pk, "world_cup:2021-03:8x", "voided"),
        (c.pk, "world_cup:2021-03:8x", "pending"),
    ]
    out = StringIO()
    call_command("world_cup_snapshot", "--year", "2021", "--month", "3", stdout=out)
    assert out.getvalue() == "0 qualification(s) recorded\n"


def test_commands_run_the_same_services(
    freeze: Callable[[date], None], player: Player, grant: Callable[..., Qualification]
) -> None:
    freeze(date(2021, 6, 1))
    grant(player, "m", date(2021, 3, 1))
    freeze(date(2022, 3, 2))
    outputs = []
    for args in (
        ["titles_expire", "--today", "2022-03-02"],
        ["titles_expire", "--today", "2022-03-02"],
        ["titles_remind", "--today", "2022-02-22"],
        ["titles_recompute"],
    ):
        out = StringIO()
        call_command(*args, stdout=out)
        outputs.append(out.getvalue())
    assert outputs == [
        "1 term(s) lapsed\n",
        "0 term(s) lapsed\n",
        "0 reminder(s) sent\n",
        "1 player(s) replayed\n",
    ]


def test_beat_schedule_names_registered_tasks() -> None:
    from config.celery_app import app

    app.loader.import_default_modules()
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert {
        "titles.expire",
        "titles.remind",
        "titles.auto_approve",
        "titles.world_cup_snapshot",
    } <= scheduled
    assert scheduled <= set(app.tasks)
    # Beat runs the jobs as of the tour day: no entry passes a day or --simulate.
    titles_entries = [
        entry
        for entry in settings.CELERY_BEAT_SCHEDULE.values()
        if entry["task"].startswith("titles.")
    ]
    assert [
        (e.get("args"), e.get("kwargs")) for e in titles_entries if e.get("args") or e.get("kwargs")
    ] == []


def test_tasks_are_thin_and_idempotent(
    freeze: Callable[[date], None], player: Player, grant: Callable[..., Qualification]
) -> None:
    freeze(date(2021, 6, 1))
    grant(player, "m", date(2020, 3, 1))
    results: list[Any] = [
        tasks.titles_expire.delay().get(),
        tasks.titles_expire.delay().get(),
        tasks.titles_remind.delay().get(),
        tasks.titles_auto_approve.delay().get(),
        tasks.titles_recompute.delay().get(),
    ]
    assert results == [0, 0, 0, 0, 1]


# --- a day after the real tour day needs --simulate ------------------------------------------


def test_a_future_today_is_refused_and_writes_nothing(
    freeze: Callable[[date], None], player: Player, grant: Callable[..., Qualification]
) -> None:
    freeze(date(2021, 3, 1))
    grant(player, "m", date(2021, 3, 1))
    freeze(date(2022, 3, 1))  # the term's last valid day
    before = (
        list(PlayerTitle.objects.values_list("status", flat=True)),
        TitleChange.objects.count(),
        Notification.objects.count(),
    )

    with pytest.raises(CommandError, match=r"2022-03-02 is after the tour day 2022-03-01"):
        call_command("titles_expire", "--today", "2022-03-02", stdout=StringIO())
    with pytest.raises(CommandError, match="--simulate"):
        call_command("titles_remind", "--today", "2022-03-02", stdout=StringIO())
    with pytest.raises(ServiceError, match="after the tour day"):
        services.titles_expire(today=date(2022, 3, 2))

    assert before == (
        ["master"],
        TitleChange.objects.count(),
        Notification.objects.count(),
    )
    assert not TitleChange.objects.filter(kind="lapsed").exists()


def test_a_simulated_day_runs_and_says_so_in_the_log_and_the_history(
    freeze: Callable[[date], None],
    player: Player,
    grant: Callable[..., Qualification],
    caplog: pytest.LogCaptureFixture,
) -> None:
    freeze(date(2021, 3, 1))
    grant(player, "m", date(2021, 3, 1))
    out = StringIO()
    with caplog.at_level("WARNING", logger="unotour.titles"):
        call_command("titles_expire", "--today", "2022-03-02", "--simulate", stdout=out)
    assert out.getvalue() == "1 term(s) lapsed\n"
    [lapse] = TitleChange.objects.filter(kind="lapsed")
    assert lapse.reason == "expiry sweep (simulated as of 2022-03-02)"
    [line] = [r for r in caplog.records if r.getMessage() == "job_simulated"]
    assert line.fields == {  # type: ignore[attr-defined]
        "job": "titles_expire",
        "today": "2022-03-02",
        "tour_today": "2021-03-01",
    }


def test_a_reminder_without_a_channel_is_not_counted_as_sent(
    freeze: Callable[[date], None],
    make_player: Callable[..., Player],
    grant: Callable[..., Qualification],
) -> None:
    freeze(date(2021, 3, 1))
    silent = make_player()
    grant(silent, "m", date(2021, 3, 1))
    freeze(date(2022, 2, 22))

    assert services.titles_remind() == 0
    [notice] = Notification.objects.all()
    assert (notice.days, notice.channel, notice.sent_at) == (7, "none", None)
    assert len(mail.outbox) == 0

    # Once the player has an address, the reminder still due goes out, once.
    silent.user = User.objects.create_user(username="silent", email="s@example.com")
    silent.save()
    assert services.titles_remind() == 1
    assert services.titles_remind() == 0
    [notice] = Notification.objects.all()
    assert (notice.channel, notice.email) == ("email", "s@example.com")
    assert notice.sent_at is not None
    assert len(mail.outbox) == 1
