"""The feed on a player's page (issue #27): only that player's notices, newest first, in the
page's words; nothing of a sanction beyond its public wording."""

import re
from collections.abc import Callable
from datetime import date, datetime

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import Player
from core.domain.clock import TOUR_TZ
from notices.models import NoticeKind
from notices.selectors import player_notices
from notices.services import Draft, notices_write

pytestmark = pytest.mark.django_db

FEED = re.compile(r'<ol class="timeline notices">(.*?)</ol>', re.S)
ITEM = re.compile(r'<li class="notice-(\w+)"><time[^>]*>([\d-]+)</time> (.*?)</li>')


def feed(client: Client, player: Player) -> list[tuple[str, str, str]]:
    """(kind, day, words) of each item of the page's feed, top first ([] without a feed)."""
    answer = client.get(f"/players/{player.external_id}/")
    assert answer.status_code == 200
    found = FEED.search(answer.content.decode())
    return ITEM.findall(found[1]) if found else []


def write_at(moment: datetime, monkeypatch: pytest.MonkeyPatch, *drafts: Draft) -> None:
    monkeypatch.setattr(timezone, "now", lambda: moment)
    notices_write(drafts)


def test_a_player_sees_their_own_notices_newest_first(
    client: Client,
    make_player: Callable[..., Player],
    monkeypatch: pytest.MonkeyPatch,
    empty_cache: None,
) -> None:
    mine, other = make_player(name="小猴子"), make_player(name="别人")
    on = date(2021, 3, 1)
    write_at(
        datetime(2021, 3, 1, 23, 30, tzinfo=TOUR_TZ),  # 15:30 UTC: still 3-1 in Shanghai
        monkeypatch,
        Draft("a", mine.pk, NoticeKind.TITLE_GRANTED, {"valid_until": "2022-02-16"}, on),
        Draft("b", other.pk, NoticeKind.TITLE_LIFETIME, {}, on),
    )
    write_at(
        datetime(2021, 3, 2, 0, 30, tzinfo=TOUR_TZ),  # 3-1 in UTC, 3-2 in Shanghai
        monkeypatch,
        Draft("c", mine.pk, NoticeKind.SANCTIONED, {"revoke_titles": True}, on),
        Draft("d", mine.pk, NoticeKind.TITLE_REVOKED, {"valid_until": None}, on),
    )
    write_at(
        datetime(2021, 3, 9, 10, 0, tzinfo=TOUR_TZ),
        monkeypatch,
        Draft("e", mine.pk, NoticeKind.SANCTION_REVERSED, {}, on),
    )

    assert feed(client, mine) == [
        ("sanction_reversed", "2021-03-09", "申诉成功，处罚已撤销。"),
        ("title_revoked", "2021-03-02", "全国头衔因违规被撤销。"),
        ("sanctioned", "2021-03-02", "因违规被处罚：全国头衔被撤销。"),
        ("title_granted", "2021-03-01", "获得大师头衔，有效期至 2022-02-16。"),
    ]
    assert feed(client, other) == [("title_lifetime", "2021-03-01", "晋升终身大师。")]
    assert [n.key for n in player_notices(player=mine, limit=2)] == ["e", "d"]


def test_no_notice_no_feed(client: Client, player: Player, empty_cache: None) -> None:
    answer = client.get(f"/players/{player.external_id}/")

    assert answer.status_code == 200
    assert 'id="notices"' not in answer.content.decode()
