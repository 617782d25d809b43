"""The notices app's writes (issue #27): a notice per key, written once; the words of each
kind; an e-mail counted as sent only once the backend accepted it."""

import smtplib
from collections.abc import Callable
from datetime import date
from typing import Any

import pytest
from django.core import mail

from accounts.models import Player
from notices import delivery as email_delivery
from notices.delivery import EMAIL_MAX_ATTEMPTS, notice_email_send, retry_countdown
from notices.models import Notice, NoticeDelivery, NoticeKind
from notices.selectors import delivery_states
from notices.services import Draft, deliveries_record, notice_write, notices_write
from notices.tasks import notice_email_deliver
from notices.texts import event_label, notice_text

pytestmark = pytest.mark.django_db

ON = date(2021, 3, 1)


def draft(player: Player, key: str, kind: str = NoticeKind.TITLE_LIFETIME) -> Draft:
    return Draft(key, player.pk, kind, {}, ON)


def test_each_key_is_written_once_and_only_new_notices_come_back(
    make_player: Callable[..., Player],
) -> None:
    one, two = make_player(), make_player()

    written = notices_write([draft(one, "k:1"), draft(two, "k:2"), draft(one, "k:1")])

    assert [(n.key, n.player_id) for n in written] == [("k:1", one.pk), ("k:2", two.pk)]
    assert [n.pk for n in written] == sorted(n.pk for n in written)
    assert notices_write([draft(one, "k:1"), draft(two, "k:3")])[0].key == "k:3"
    assert notices_write([draft(one, "k:1"), draft(two, "k:2"), draft(two, "k:3")]) == []
    assert sorted(Notice.objects.values_list("key", flat=True)) == ["k:1", "k:2", "k:3"]
    stored = Notice.objects.get(key="k:1")
    assert (stored.kind, stored.params, stored.on) == ("title_lifetime", {}, ON)


def test_notice_write_says_whether_it_wrote(player: Player) -> None:
    first = notice_write(
        key="once", player=player, kind=NoticeKind.TITLE_LIFETIME, params={"a": 1}, on=ON
    )
    again = notice_write(
        key="once", player=player, kind=NoticeKind.TITLE_LIFETIME, params={"a": 2}, on=ON
    )

    assert first is not None
    assert again is None
    assert Notice.objects.get().params == {"a": 1}


MONTHLY = {"code": "2021-02-M", "kind": "monthly_final", "station": 13, "city": "南京", "name": ""}
WEEKLY = {"code": "2021-W05-F", "kind": "weekly_final", "station": None, "city": "", "name": ""}


@pytest.mark.parametrize(
    ("kind", "params", "text"),
    [
        (
            "advanced",
            {"source": WEEKLY, "target": MONTHLY},
            "从「2021-W05-F · 周赛」晋级「第13站 南京站 · 月赛」。",
        ),
        ("title_granted", {"valid_until": "2022-02-01"}, "获得大师头衔，有效期至 2022-02-01。"),
        ("title_extended", {"valid_until": "2023-02-01"}, "大师头衔延期，有效期至 2023-02-01。"),
        ("title_lifetime", {"valid_until": None}, "晋升终身大师。"),
        (
            "title_expiring",
            {"valid_until": "2022-02-01", "days": 30, "code": "ABC"},
            "大师头衔有效期至 2022-02-01，将在 30 天内到期。",
        ),
        (
            "title_lapsed",
            {"valid_until": "2022-02-01"},
            "大师头衔已到期失效（有效期至 2022-02-01）。",
        ),
        ("title_revoked", {"valid_until": None}, "全国头衔因违规被撤销。"),
        ("title_restored", {"valid_until": None}, "申诉成功，全国头衔已恢复。"),
        (
            "sanctioned",
            {"void_games": True, "revoke_titles": True, "suspend": True},
            "因违规被处罚：相关赛事成绩作废、全国头衔被撤销、暂停参赛资格。",
        ),
        (
            "sanctioned",
            {"void_games": False, "revoke_titles": False, "suspend": True},
            "因违规被处罚：暂停参赛资格。",
        ),
        ("sanction_reversed", {}, "申诉成功，处罚已撤销。"),
        ("appeal_rejected", {}, "申诉未获支持，处罚维持。"),
    ],
)
def test_the_words_of_each_kind(kind: str, params: dict[str, Any], text: str) -> None:
    assert notice_text(kind, params) == text


def test_every_kind_has_words() -> None:
    assert set(NoticeKind.values) == {
        "advanced",
        "title_granted",
        "title_extended",
        "title_lifetime",
        "title_expiring",
        "title_lapsed",
        "title_revoked",
        "title_restored",
        "sanctioned",
        "sanction_reversed",
        "appeal_rejected",
    }
    with pytest.raises(ValueError, match="unknown notice kind"):
        notice_text("unknown", {})


def test_an_organisers_event_is_named_by_its_name() -> None:
    assert event_label({**WEEKLY, "kind": "championship", "name": "全国锦标赛"}) == "全国锦标赛"
    assert event_label({**MONTHLY, "city": ""}) == "第13站 · 月赛"


def _email(player: Player, address: str, capture: Any) -> NoticeDelivery:
    with capture(execute=True):
        [notice] = notices_write([draft(player, f"e:{player.pk}")])
        deliveries_record(notices=[notice], webhooks={}, emails={notice.pk: address})
    return NoticeDelivery.objects.get(notice=notice)


def test_an_email_goes_once_the_transaction_commits_and_counts_as_sent(
    player: Player, django_capture_on_commit_callbacks: Any
) -> None:
    delivery = _email(player, "xhz@example.com", django_capture_on_commit_callbacks)

    [message] = mail.outbox
    assert (message.to, message.subject) == (["xhz@example.com"], "UNO 中国线上巡回赛通知")
    assert message.body == "小猴子，您好：\n\n晋升终身大师。\n"
    assert (delivery.channel, delivery.state, delivery.attempts, delivery.error) == (
        "email",
        "sent",
        1,
        "",
    )
    assert delivery.sent_at is not None
    assert delivery_states() == {("email", "sent"): 1}
    # a redelivered task sends nothing twice
    assert notice_email_deliver.apply(args=[delivery.pk]).get() == "sent"
    assert len(mail.outbox) == 1


def test_a_rolled_back_notice_sends_nothing(
    player: Player, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        [notice] = notices_write([draft(player, "gone")])
        deliveries_record(notices=[notice], webhooks={}, emails={notice.pk: "x@example.com"})
    assert len(callbacks) == 1  # the e-mail waits for the commit

    assert mail.outbox == []


def test_a_failing_mail_server_leaves_it_pending_then_failed(
    player: Player, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> int:
        raise smtplib.SMTPServerDisconnected("gone away")

    monkeypatch.setattr(email_delivery, "send_mail", refuse)
    delivery = _email(player, "xhz@example.com", django_capture_on_commit_callbacks)

    # the eager first attempt failed: the task's retry was logged, the delivery waits
    assert (delivery.state, delivery.attempts, delivery.sent_at) == ("pending", 1, None)
    assert delivery.error == "SMTPServerDisconnected: gone away"
    for _ in range(EMAIL_MAX_ATTEMPTS - 1):
        delivery = notice_email_send(delivery_id=delivery.pk)
    assert (delivery.state, delivery.attempts, delivery.sent_at) == ("failed", 5, None)
    assert notice_email_send(delivery_id=delivery.pk).attempts == 5  # nothing more
    assert mail.outbox == []
    assert delivery_states() == {("email", "failed"): 1}
    assert [retry_countdown(n) for n in (1, 2, 3, 7, 12)] == [60, 120, 240, 3600, 3600]


def test_no_address_no_email_delivery(player: Player) -> None:
    [notice] = notices_write([draft(player, "quiet")])

    assert deliveries_record(notices=[notice], webhooks={}, emails={notice.pk: ""}) == []
    assert NoticeDelivery.objects.count() == 0
