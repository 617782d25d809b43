"""Players' notices from the flows (issue #27; SPEC §4, §6, §7, §8): each fact becomes one
notice with its exact key and words, in the writer's transaction; running the producer
again writes nothing; the expiry notices come on the right Asia/Shanghai tour days."""

from collections.abc import Callable
from datetime import date, datetime, time
from typing import Any

import pytest
from celery.schedules import crontab
from django.conf import settings
from django.contrib.auth.models import Group
from django.core import mail
from django.test import Client
from django.utils import timezone

from accounts.models import Player, User
from accounts.roles import REVIEWER
from core.domain.clock import TOUR_TZ
from core.errors import ServiceError
from flows import notices as flow_notices
from flows import sanctions
from flows.corrections import player_games_restore, player_games_void
from flows.finalisation import event_finalise
from integrity.models import Appeal, Case, CasePlayer, Sanction
from integrity.services.cases import appeal_file
from notices.models import Notice, NoticeDelivery
from notices.texts import notice_text
from tests.titles import conftest as titles_fixtures
from tests.tournaments.factories import AFTER, make_event, make_season, score_games
from tests.tournaments.test_finalise import _field, _final_and_monthly
from titles import services as titles
from titles.models import Qualification, Revocation, TitleChange, TitleTerm
from titles.tasks import expiring_notices
from tournaments.models import Event
from webhooks.models import Delivery, Subscription

pytestmark = pytest.mark.django_db

freeze, make_player, player = (
    titles_fixtures.freeze,
    titles_fixtures.make_player,
    titles_fixtures.player,
)
record, grant = titles_fixtures.record, titles_fixtures.grant


def told(player: Player | None = None) -> list[tuple[str, str, str]]:
    """(key, kind, words) of every notice (of ``player``), oldest first."""
    rows = Notice.objects.order_by("id")
    if player is not None:
        rows = rows.filter(player=player)
    return [(n.key, n.kind, notice_text(n.kind, n.params)) for n in rows]


def at(moment: datetime, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timezone, "now", lambda: moment)


# --- advancement (SPEC §4) ---------------------------------------------------------------------

W05_TO_FEB = "从「2021-W05-F · 周赛」晋级「2021-02-M · 月赛」。"


def test_finalising_tells_each_advancing_player_once(
    organiser: User, django_capture_on_commit_callbacks: Any
) -> None:
    weekly, monthly = _final_and_monthly()
    players = _field(weekly)
    players["a1"].user = User.objects.create_user(username="a1", email="a1@example.com")
    players["a1"].save(update_fields=["user"])

    with django_capture_on_commit_callbacks(execute=True):
        event_finalise(event=weekly, by=organiser, now=AFTER)

    # national top 3 (a1 a2 b1) ∪ each province's first (a1, b1, c1); c0 is unranked
    assert told() == [
        (f"advanced:2021-W05-F:{key}", "advanced", W05_TO_FEB) for key in ("a1", "a2", "b1", "c1")
    ]
    notice = Notice.objects.get(key="advanced:2021-W05-F:a1")
    assert (notice.player, notice.on) == (players["a1"], date(2021, 2, 8))
    assert notice.params == {
        "source": {
            "code": "2021-W05-F",
            "kind": "weekly_final",
            "station": None,
            "city": "",
            "name": "",
        },
        "target": {
            "code": "2021-02-M",
            "kind": "monthly_final",
            "station": None,
            "city": "",
            "name": "",
        },
    }
    [message] = mail.outbox
    assert (message.to, message.body) == (["a1@example.com"], f"A1，您好：\n\n{W05_TO_FEB}\n")
    assert list(NoticeDelivery.objects.values_list("notice__key", "channel", "state")) == [
        ("advanced:2021-W05-F:a1", "email", "sent")
    ]

    with django_capture_on_commit_callbacks(execute=True) as again:
        assert event_finalise(event=weekly, by=organiser, now=AFTER).changed is False
    assert (again, Notice.objects.count(), len(mail.outbox)) == ([], 4, 1)
    assert flow_notices.advancement_notices(weekly) == []  # the producer itself, again
    # an event that feeds nothing tells no one
    score_games(monthly, {players["a1"]: [10] * 15})
    assert event_finalise(event=monthly, by=organiser, now=AFTER).champion == players["a1"]
    assert Notice.objects.count() == 4


def test_a_correction_that_adds_advancers_tells_them_and_no_one_twice(organiser: User) -> None:
    weekly, _ = _final_and_monthly()
    players = _field(weekly)
    event_finalise(event=weekly, by=organiser, now=AFTER)

    # b1's games voided: a3 enters the national top 3 and b2 leads 浙江
    player_games_void(player=players["b1"], events=[weekly], by=organiser, reason="farm")

    assert [key for key, _, _ in told()] == [
        f"advanced:2021-W05-F:{key}" for key in ("a1", "a2", "b1", "c1", "a3", "b2")
    ]
    player_games_restore(player=players["b1"], events=[weekly], by=organiser, reason="appeal")
    assert Notice.objects.count() == 6  # b1 advances again: told already


def test_a_failed_finalisation_leaves_no_notice(
    organiser: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    weekly, _ = _final_and_monthly()
    _field(weekly)

    def broken(event: Any) -> None:
        raise RuntimeError("audit queue down")

    monkeypatch.setattr("flows.finalisation.audit_event_enqueue", broken)
    with pytest.raises(RuntimeError, match="audit queue down"):
        event_finalise(event=weekly, by=organiser, now=AFTER)

    assert Notice.objects.count() == 0


# --- titles (SPEC §6) --------------------------------------------------------------------------


def test_granted_extended_lifetime_and_lapsed_each_once(
    freeze: Callable[[date], None],
    player: Player,
    grant: Callable[..., Qualification],
) -> None:
    freeze(date(2021, 3, 1))
    grant(player, "event:2021-02-M:champion", date(2021, 2, 16))
    freeze(date(2021, 4, 1))
    grant(player, "event:2021-03-M:champion", date(2021, 3, 16))

    assert told(player) == [
        (
            "title:granted:p0000001:2021-02-16:2022-02-16:event:2021-02-M:champion",
            "title_granted",
            "获得大师头衔，有效期至 2022-02-16。",
        ),
        (
            "title:extended:p0000001:2021-03-16:2023-02-16:event:2021-03-M:champion",
            "title_extended",
            "大师头衔延期，有效期至 2023-02-16。",
        ),
    ]
    assert Notice.objects.get(kind="title_extended").on == date(2021, 3, 16)

    freeze(date(2023, 2, 17))
    assert titles.titles_expire() == 1
    assert titles.titles_expire() == 0
    assert told(player)[2:] == [
        (
            "title:lapsed:p0000001:2023-02-17:2023-02-16:event:2021-03-M:champion",
            "title_lapsed",
            "大师头衔已到期失效（有效期至 2023-02-16）。",
        )
    ]

    champion = Player.objects.create(external_id="p0000009", name="冠军", province="浙江")
    freeze(date(2021, 6, 1))
    grant(champion, "event:2021-05-M:champion", date(2021, 5, 16))
    grant(champion, "event:2021-NC:champion", date(2021, 5, 20), "national_championship")
    assert [(key, words) for key, _, words in told(champion)] == [
        (
            "title:granted:p0000009:2021-05-16:2022-05-16:event:2021-05-M:champion",
            "获得大师头衔，有效期至 2022-05-16。",
        ),
        ("title:lifetime:p0000009:2021-05-20:-:event:2021-NC:champion", "晋升终身大师。"),
    ]


def test_revoked_and_restored_once_and_the_restored_grant_is_not_told_again(
    freeze: Callable[[date], None],
    player: Player,
    grant: Callable[..., Qualification],
    reviewer: User,
) -> None:
    freeze(date(2021, 3, 1))
    grant(player, "event:2021-02-M:champion", date(2021, 2, 16))

    titles.titles_revoke(
        player=player, on=date(2021, 3, 1), by=reviewer, reason="farm", case_ref="case-7"
    )
    freeze(date(2021, 3, 5))
    titles.titles_restore(
        player=player, revocation=Revocation.objects.get(), by=reviewer, reason="upheld"
    )

    # the restore re-added the granted row (a new history row): same fact, not told again
    assert TitleChange.objects.filter(kind="granted").count() == 2
    assert told(player) == [
        (
            "title:granted:p0000001:2021-02-16:2022-02-16:event:2021-02-M:champion",
            "title_granted",
            "获得大师头衔，有效期至 2022-02-16。",
        ),
        ("title:revoked:p0000001:2021-03-01:-:case-7", "title_revoked", "全国头衔因违规被撤销。"),
        (
            "title:restored:p0000001:2021-03-05:-:case-7",
            "title_restored",
            "申诉成功，全国头衔已恢复。",
        ),
    ]


def test_old_history_is_not_news(
    freeze: Callable[[date], None], player: Player, grant: Callable[..., Qualification]
) -> None:
    assert settings.NOTICES_TITLE_NEWS_DAYS == 90
    freeze(date(2021, 9, 1))
    grant(player, "event:2021-05-M:champion", date(2021, 6, 2))  # 91 days before

    assert TitleChange.objects.filter(kind="granted").count() == 1
    assert Notice.objects.count() == 0
    grant(player, "event:2021-06-M:champion", date(2021, 6, 3))  # 90 days before
    assert [kind for _, kind, _ in told(player)] == ["title_extended"]


def test_title_notices_go_to_the_game_and_by_email(
    freeze: Callable[[date], None],
    make_player: Callable[..., Player],
    grant: Callable[..., Qualification],
    django_capture_on_commit_callbacks: Any,
) -> None:
    Subscription.objects.create(
        name="game", url="http://127.0.0.1:9/none", events=["notice.created", "title.granted"]
    )
    holder = make_player(name="有邮箱", email="holder@example.com")
    freeze(date(2021, 3, 1))

    with django_capture_on_commit_callbacks(execute=False):
        grant(holder, "event:2021-02-M:champion", date(2021, 2, 16))

    assert sorted(Delivery.objects.values_list("event_type", flat=True)) == [
        "notice.created",
        "title.granted",
    ]
    assert sorted(NoticeDelivery.objects.values_list("channel", "email", "state")) == [
        ("email", "holder@example.com", "pending"),
        ("webhook", "", "pending"),
    ]


# --- sanctions and appeals (SPEC §7) -----------------------------------------------------------

REASON = "farm: one device d-9f2c41 at 203.0.113.7 with fb"


@pytest.fixture
def reviewer2(roles: None) -> User:
    user = User.objects.create_user(username="rev2", password="pw-for-tests-only")
    user.groups.add(Group.objects.get(name=REVIEWER))
    return user


@pytest.fixture
def case(freeze: Callable[[date], None], grant: Callable[..., Qualification]) -> Case:
    """fh (a Master since 2021-02-16) and fb, one case; the tour day is 2021-03-01."""
    freeze(date(2021, 3, 1))
    members = [
        Player.objects.create(external_id=external_id, name=external_id, province="江苏")
        for external_id in ("fh", "fb")
    ]
    grant(members[0], "event:2021-02-M:champion", date(2021, 2, 16))  # told: notice 1
    opened = Case.objects.create(key="fb|fh", families=["sessions"], score=9.0, reason="device")
    for member in members:
        CasePlayer.objects.create(case=opened, player=member)
    return opened


def _sanction(case: Case, reviewer: User) -> Case:
    event = Event.objects.filter(code="2021-02-M").first() or make_event(
        make_season(), "2021-02-M", "monthly_final", day=date(2021, 2, 16),
    )  # fmt: skip
    fb, fh = Player.objects.get(external_id="fb"), Player.objects.get(external_id="fh")
    return sanctions.case_sanction(
        case=case,
        by=reviewer,
        reason=REASON,
        decisions=[
            {"player": fh, "role": "helper", "revoke_titles": True, "suspend": True},
            {"player": fb, "role": "beneficiary", "void_games": True, "events": [event],
             "revoke_titles": True},
        ],
    )  # fmt: skip


def test_a_sanction_tells_each_player_in_public_words(
    case: Case, reviewer: User, client: Client, empty_cache: None
) -> None:
    _sanction(case, reviewer)

    fh, fb = (Sanction.objects.get(player__external_id=key) for key in ("fh", "fb"))
    assert told()[1:] == [
        ("title:revoked:fh:2021-03-01:-:" + f"integrity-case-{case.pk}", "title_revoked",
         "全国头衔因违规被撤销。"),
        (f"sanction:{fh.pk}", "sanctioned", "因违规被处罚：全国头衔被撤销、暂停参赛资格。"),
        (f"sanction:{fb.pk}", "sanctioned", "因违规被处罚：相关赛事成绩作废、全国头衔被撤销。"),
    ]  # fmt: skip
    assert Notice.objects.get(key=f"sanction:{fb.pk}").on == date(2021, 3, 1)
    stored = str(list(Notice.objects.values_list("key", "params")))
    page = client.get("/players/fb/").content.decode()
    assert "因违规被处罚：相关赛事成绩作废、全国头衔被撤销。" in page
    for secret in ("farm", "d-9f2c41", "203.0.113.7"):
        assert secret not in stored
        assert secret not in page
    assert flow_notices.sanction_notices(Sanction.objects.all()) == []  # again: nothing


def test_an_upheld_appeal_tells_everyone_it_cleared(
    case: Case, reviewer: User, reviewer2: User, freeze: Callable[[date], None]
) -> None:
    sanctioned = _sanction(case, reviewer)
    fb_player = Player.objects.get(external_id="fb")
    appeal = appeal_file(case=sanctioned, player=fb_player, statement="not me")
    freeze(date(2021, 3, 8))
    before = Notice.objects.count()

    sanctions.appeal_decide(appeal=appeal, by=reviewer2, upheld=True, reason="shared flat")

    fh, fb = (Sanction.objects.get(player__external_id=key) for key in ("fh", "fb"))
    assert told()[before:] == [
        ("title:restored:fh:2021-03-08:-:" + f"integrity-case-{case.pk}", "title_restored",
         "申诉成功，全国头衔已恢复。"),
        (f"sanction_reversed:{fh.pk}", "sanction_reversed", "申诉成功，处罚已撤销。"),
        (f"sanction_reversed:{fb.pk}", "sanction_reversed", "申诉成功，处罚已撤销。"),
    ]  # fmt: skip
    assert set(Notice.objects.filter(kind="sanction_reversed").values_list("on", flat=True)) == {
        date(2021, 3, 8)
    }
    appeal.refresh_from_db()
    assert flow_notices.appeal_notices(appeal, [fh, fb]) == []  # again: nothing


def test_a_rejected_appeal_tells_the_appellant(case: Case, reviewer: User, reviewer2: User) -> None:
    sanctioned = _sanction(case, reviewer)
    appeal = appeal_file(
        case=sanctioned, player=Player.objects.get(external_id="fb"), statement="not me"
    )
    before = Notice.objects.count()

    sanctions.appeal_decide(appeal=appeal, by=reviewer2, upheld=False, reason="same device")

    assert told()[before:] == [
        (f"appeal_rejected:{appeal.pk}", "appeal_rejected", "申诉未获支持，处罚维持。")
    ]
    assert Notice.objects.get(kind="appeal_rejected").player.external_id == "fb"
    assert Appeal.objects.get().status == "rejected"


def test_a_refused_sanction_tells_no_one(case: Case, reviewer: User) -> None:
    _sanction(case, reviewer)
    count = Notice.objects.count()

    with pytest.raises(ServiceError):
        _sanction(case, reviewer)  # the case is no longer open

    assert Notice.objects.count() == count


# --- the expiry sweep (SPEC §6 days, §8 jobs) -------------------------------------------------


def _sweep(day: date, clock: time, monkeypatch: pytest.MonkeyPatch) -> int:
    at(datetime.combine(day, clock, tzinfo=TOUR_TZ), monkeypatch)
    return flow_notices.expiring_notices_write()


def test_the_30_and_7_day_notices_come_on_their_tour_days(
    freeze: Callable[[date], None],
    make_player: Callable[..., Player],
    grant: Callable[..., Qualification],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    holder = make_player(name="持有人", email="holder@example.com")
    freeze(date(2021, 2, 20))
    grant(holder, "event:2021-02-M:champion", date(2021, 2, 1))  # valid through 2022-02-01
    code = TitleTerm.objects.get().code
    Notice.objects.all().delete()
    mail.outbox.clear()

    # the last second of 2022-01-01 in Shanghai: 31 days left
    assert _sweep(date(2022, 1, 1), time(23, 59, 59), monkeypatch) == 0
    # midnight in Shanghai (still 2022-01-01 in UTC): 30 days left
    assert _sweep(date(2022, 1, 2), time(0, 0), monkeypatch) == 1
    assert _sweep(date(2022, 1, 2), time(9, 5), monkeypatch) == 0  # re-run: nothing
    assert _sweep(date(2022, 1, 24), time(9, 5), monkeypatch) == 0  # 8 days left
    assert _sweep(date(2022, 1, 25), time(9, 5), monkeypatch) == 1  # 7 days left
    assert _sweep(date(2022, 2, 1), time(9, 5), monkeypatch) == 0  # the last valid day

    notices = Notice.objects.order_by("id")
    assert [(n.key, n.on, notice_text(n.kind, n.params)) for n in notices] == [
        (f"expiring30:{code}:2022-02-01", date(2022, 1, 2),
         "大师头衔有效期至 2022-02-01，将在 30 天内到期。"),
        (f"expiring7:{code}:2022-02-01", date(2022, 1, 25),
         "大师头衔有效期至 2022-02-01，将在 7 天内到期。"),
    ]  # fmt: skip
    # the titles' reminder e-mails this fact: the notice is not e-mailed a second time
    assert mail.outbox == []
    assert not NoticeDelivery.objects.exists()


def test_the_sweep_follows_the_civil_code_end_of_29_february(
    freeze: Callable[[date], None],
    player: Player,
    grant: Callable[..., Qualification],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    freeze(date(2020, 3, 1))
    grant(player, "event:2020-02-M:champion", date(2020, 2, 29))  # valid through 2021-02-28
    code = TitleTerm.objects.get().code

    due = {
        day: _sweep(day, time(9, 5), monkeypatch)
        for day in (date(2021, 1, 28), date(2021, 1, 29), date(2021, 2, 20), date(2021, 2, 21))
    }

    assert due == {
        date(2021, 1, 28): 0,
        date(2021, 1, 29): 1,
        date(2021, 2, 20): 0,
        date(2021, 2, 21): 1,
    }
    assert list(
        Notice.objects.filter(kind="title_expiring").order_by("id").values_list("key", "on")
    ) == [
        (f"expiring30:{code}:2021-02-28", date(2021, 1, 29)),
        (f"expiring7:{code}:2021-02-28", date(2021, 2, 21)),
    ]


def test_a_late_first_sweep_sends_only_the_7_day_notice_and_an_extension_is_told_again(
    freeze: Callable[[date], None],
    player: Player,
    grant: Callable[..., Qualification],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    freeze(date(2021, 2, 20))
    grant(player, "event:2021-02-M:champion", date(2021, 2, 1))
    code = TitleTerm.objects.get().code

    assert _sweep(date(2022, 1, 28), time(9, 5), monkeypatch) == 1  # 4 days left
    freeze(date(2022, 1, 29))
    grant(player, "event:2022-01-M:champion", date(2022, 1, 29))  # now through 2023-02-01
    assert _sweep(date(2023, 1, 2), time(9, 5), monkeypatch) == 1

    assert list(
        Notice.objects.filter(kind="title_expiring").order_by("id").values_list("key", flat=True)
    ) == [f"expiring7:{code}:2022-02-01", f"expiring30:{code}:2023-02-01"]


def test_a_lifetime_master_is_never_told_of_an_end(
    freeze: Callable[[date], None],
    player: Player,
    grant: Callable[..., Qualification],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    freeze(date(2021, 3, 1))
    grant(player, "event:2021-02-M:champion", date(2021, 2, 1))
    grant(player, "event:2021-NC:champion", date(2021, 2, 20), "national_championship")

    assert _sweep(date(2022, 1, 2), time(9, 5), monkeypatch) == 0


def test_the_sweep_is_on_the_beat_and_refuses_a_future_day(
    freeze: Callable[[date], None],
    player: Player,
    grant: Callable[..., Qualification],
) -> None:
    assert settings.CELERY_BEAT_SCHEDULE["titles-expiring-notices"] == {
        "task": "titles.expiring_notices",
        "schedule": crontab(minute=5, hour=9),
    }
    freeze(date(2021, 2, 20))
    grant(player, "event:2021-02-M:champion", date(2021, 2, 1))
    freeze(date(2022, 1, 2))

    assert expiring_notices.apply().get() == 1
    assert expiring_notices.apply().get() == 0
    with pytest.raises(ServiceError, match="after the tour day"):
        flow_notices.expiring_notices_write(today=date(2022, 1, 25))
    assert flow_notices.expiring_notices_write(today=date(2022, 1, 25), simulate=True) == 1
