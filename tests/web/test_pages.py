"""The public pages (SPEC §5, §6) over the small tour of ``tests.web.tour``."""

import json
import re
from typing import Any

import pytest
from django.test import Client

from ratings.selectors import rating_history_points
from tests.web.tour import (
    SECRET_CASE,
    SECRET_CLIENT,
    SECRET_DEVICE,
    SECRET_IP,
    SECRET_REASON,
    Tour,
)
from titles.models import TitleTerm

pytestmark = pytest.mark.django_db


def script_data(html: str, element_id: str) -> Any:
    """The JSON in the page's ``<script id=element_id>`` block."""
    found = re.search(rf'id="{element_id}"[^>]*>(.*?)</script>', html, re.S)
    assert found is not None, element_id
    return json.loads(found[1])


def page(url: str, status: int = 200, *, htmx: bool = False) -> str:
    """The body of ``url`` (as htmx asks for it with ``htmx``), checking its status."""
    response = Client().get(url, headers={"HX-Request": "true"} if htmx else None)
    assert response.status_code == status, url
    return response.content.decode()


def rows(html: str, table: str = "leaderboard") -> list[list[str]]:
    """The text of each body row of the first ``table.<table>`` (cells stripped of tags);
    a cut-off line is the row ``["CUT", its text]``."""
    body = html.split(f'<table class="{table}', 1)[1].split("<tbody>", 1)[1]
    body = body.split("</tbody>", 1)[0]
    found = []
    for row in re.findall(r"<tr([^>]*)>(.*?)</tr>", body, re.S):
        cells = [
            re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", cell)).strip()
            for cell in re.findall(r"<td[^>]*>(.*?)</td>", row[1], re.S)
        ]
        found.append(["CUT", *cells] if "cutline" in row[0] else cells)
    return found


def test_home_shows_the_season_open_events_and_latest_champions(tour: Tour) -> None:
    html = page("/")
    assert "2021 赛季" in html
    live = html.split("正在进行", 1)[1].split("最新冠军", 1)[0]
    assert re.findall(r'href="/events/([^/]+)/"', live) == ["2021-W05-F", "2021-W06-Q"]
    assert "第6站 重庆站 · 周赛" in live
    champions = html.split("最新冠军", 1)[1]
    assert re.findall(r'href="/events/([^/]+)/"', champions) == ["2021-01-M", "2021-W01-F"]
    assert champions.count('href="/players/p0000001/"') == 2


def test_calendar_lists_every_station_with_its_champion(tour: Tour) -> None:
    client = Client()
    assert client.get("/seasons/")["Location"] == "/seasons/2021/"
    stations = rows(page("/seasons/2021/"), "stations")
    assert len(stations) == 69
    assert stations[0] == ["第1站 北京站", "2021-01-11", "周赛", "2021-W01-F", "小猴子"]
    assert stations[4] == ["第5站 天津站", "2021-02-02", "月赛", "2021-01-M", "小猴子"]
    assert stations[5] == ["第6站 重庆站", "2021-02-08", "周赛", "2021-W05-F", "待定"]
    assert stations[12][0] == "第13站 南京站"
    assert stations[-4][2:4] == ["年赛", "2021-A"]
    assert stations[-1][2:4] == ["月赛", "2021-12-M"]
    page("/seasons/1999/", 404)


def test_live_board_refreshes_and_draws_the_national_cut(tour: Tour) -> None:
    html = page("/events/2021-W05-F/")
    assert 'hx-trigger="every 10s"' in html
    assert f'hx-get="/events/2021-W05-F/board/?v={tour.live.leaderboard_version}"' in html
    board = rows(html)
    assert [row[0] for row in board] == [
        "1", "2", "3", "CUT", "4", "5", "6", "7", "8", "9", "10", "11", "12", "—", "—", "—", "—",
    ]  # fmt: skip
    assert board[3] == ["CUT", "晋级线 · 全国前 3 名"]
    assert board[0] == ["1", "黄丽 p0000008", "北京", "175", "4", "67"]
    assert board[1] == ["2", "小猴子 p0000001", "江苏", "175", "4", "67"]
    assert board[-1][4] == "1 局数不足"


def test_live_province_board_draws_the_province_cut(tour: Tour) -> None:
    board = rows(page("/events/2021-W05-F/?province=江苏"))
    assert [(row[0], row[1]) for row in board] == [
        ("1", "小猴子 p0000001"),
        ("CUT", "晋级线 · 江苏前 1 名"),
        ("2", "杨磊 p0000007"),
        ("3", "王伟 p0000002"),
        ("4", "徐超 p0000012"),
    ]


def test_board_partial_answers_204_while_the_version_is_unchanged(tour: Tour) -> None:
    client = Client()
    version = tour.live.leaderboard_version
    assert client.get(f"/events/2021-W05-F/board/?v={version}").status_code == 204
    fresh = client.get(f"/events/2021-W05-F/board/?v={version - 1}&province=江苏")
    assert fresh.status_code == 200
    html = fresh.content.decode()
    assert html.startswith('<div id="board"')
    assert f"?v={version}&amp;province=" in html
    assert "<html" not in html


def test_search_by_external_id_and_by_name(tour: Tour) -> None:
    by_id = rows(page("/events/2021-W05-F/?q=p0000007"))
    assert by_id == [["6", "杨磊 p0000007", "江苏", "-15", "4", "-3"]]
    by_name = rows(page("/events/2021-W05-F/?q=新手"))
    assert [row[1] for row in by_name] == [
        "新手甲 p0000013",
        "新手乙 p0000014",
        "新手丙 p0000015",
        "新手丁 p0000016",
    ]
    in_province = rows(page("/events/2021-W05-F/?province=江苏&q=杨"))
    assert in_province == [["2", "杨磊 p0000007", "江苏", "-15", "4", "-3"]]
    assert "没有找到选手“nobody”。" in page("/events/2021-W05-F/?q=nobody")


def test_finalised_event_shows_champion_and_advancement_basis(tour: Tour) -> None:
    html = page("/events/2021-W01-F/")
    assert "hx-trigger" not in html
    assert "最终排名" in html
    champion = html.split('class="card champion-card"', 1)[1].split("</section>", 1)[0]
    assert 'href="/players/p0000001/">小猴子</a>' in champion
    assert "4 人晋级（全国名额 3，省内名额 4）" in champion
    board = rows(html)
    assert board[:5] == [
        ["1", "小猴子 p0000001", "江苏", "149", "3", "67", "1", "全国名额 省内名额"],
        ["2", "李娜 p0000003", "浙江", "105", "3", "67", "1", "全国名额 省内名额"],
        ["3", "黄丽 p0000008", "北京", "105", "3", "67", "1", "全国名额 省内名额"],
        ["CUT", "晋级线 · 全国前 3 名"],
        ["4", "刘洋 p0000005", "广东", "35", "3", "41", "1", "省内名额"],
    ]
    assert all(row[-1] == "" for row in board[5:])
    province = rows(page("/events/2021-W01-F/?province=广东"))
    assert [row if row[0] == "CUT" else row[:2] + row[-2:] for row in province[:3]] == [
        ["1", "刘洋 p0000005", "4", "省内名额"],
        ["CUT", "晋级线 · 广东前 1 名"],
        ["2", "吴杰 p0000010", "8", ""],
    ]


def test_weekly_qualifier_board_points_to_the_province_tabs(tour: Tour) -> None:
    html = page("/events/2021-W06-Q/")
    assert "本赛事按省晋级（各省前 2 名）：选择省份查看晋级线。" in html
    assert "还没有成绩。" in html
    page("/events/NOPE/", 404)


def test_board_pages(tour: Tour, settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("web.views.public.BOARD_PAGE_SIZE", 5)
    first = page("/events/2021-W05-F/")
    assert "第 1 / 4 页" in first
    assert 'href="/events/2021-W05-F/?page=2"' in first
    second = rows(page("/events/2021-W05-F/?page=2"))
    assert [row[0] for row in second] == ["6", "7", "8", "9", "10"]
    third = rows(page("/events/2021-W05-F/?page=3"))
    assert [row[0] for row in third] == ["11", "12", "—", "—", "—"]
    last = rows(page("/events/2021-W05-F/?page=4"))
    assert last == [["—", "新手丙 p0000015", "四川", "-29", "1 局数不足", "-29"]]


def test_player_page_charts_and_history(tour: Tour) -> None:
    monkey = tour.players["p0000001"]
    html = page("/players/p0000001/")
    points = script_data(html, "rating-data")
    expected = rating_history_points(player_id=monkey.pk)
    assert points == [[moment.isoformat(), round(value, 2)] for moment, value in expected]
    assert len(points) == 10
    timeline = script_data(html, "title-data")
    code = TitleTerm.objects.get(player=monkey).code
    # the player's credential, linked from the page (issue 29)
    assert f'href="/api/titles/terms/{code}/credential/" download="{code}.jsonld"' in html
    assert timeline == {
        "terms": [
            {"start": "2021-02-02", "valid_until": "2022-02-02", "state": "current", "code": code}
        ],
        "lifetime_since": None,
        "today": "2021-02-08",
    }
    assert "2022-02-02" in html.split("大师有效期至", 1)[1][:200]
    best = rows(html.replace("<table>", '<table class="best">', 2).split("最佳成绩", 1)[1], "best")
    assert best == [["月赛", "1", "1", "1"], ["周赛", "2", "1", "1"]]
    assert html.count('href="/events/2021-W01-F/">第1站 北京站 · 周赛</a>') == 2


def test_lifetime_master_timeline_marks_lifetime(tour: Tour) -> None:
    html = page("/players/p0000008/")
    timeline = script_data(html, "title-data")
    assert timeline["lifetime_since"] == "2020-09-01"
    assert [term["start"] for term in timeline["terms"]] == ["2020-06-01"]
    history = html.split('<ol class="timeline">', 1)[1].split("</ol>", 1)[0]
    items = [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", item)).strip()
             for item in re.findall(r"<li[^>]*>(.*?)</li>", history, re.S)]  # fmt: skip
    assert items == ["2020-09-01 晋升终身大师", "2020-06-01 获得大师 有效期至 2021-06-01"]


def test_titles_as_of_a_day(tour: Tour) -> None:
    today = page("/players/p0000001/")
    assert 'type="date" name="as_of" value="2021-02-08"' in today
    assert 'name="as_of" value="2021-02-08"' in page("/en/players/p0000001/")
    before = page("/players/p0000001/?as_of=2021-01-15")
    assert "2021-01-15，小猴子的头衔：" in before
    assert 'status-none">无头衔' in before
    during = page("/players/p0000001/titles/?as_of=2021-06-01", htmx=True)
    assert during.startswith('<div id="titles-on"')
    assert 'status-master">大师' in during
    assert "大师任期 2021-02-02 起，有效期至 2022-02-02" in during
    assert "event:2021-01-M:champion" in during
    lifetime = page("/players/p0000008/titles/?as_of=2021-02-08", htmx=True)
    assert 'status-lifetime">终身大师' in lifetime
    assert "自 2020-09-01 起为终身大师" in lifetime
    assert re.findall(r'class="muted code">([^<]+)<', lifetime) == [
        "manual:2020-06 月赛",
        "manual:2020 全国锦标赛",
    ]
    page("/players/nobody/", 404)


def test_registry_lists_and_filters(tour: Tour) -> None:
    current = rows(page("/masters/"), "registry")
    assert [row[:3] for row in current] == [
        ["小猴子 p0000001", "江苏", "大师"],
        ["黄丽 p0000008", "北京", "终身大师"],
    ]
    assert current[0][3] == "2022-02-02"
    assert current[1][3] == "终身（2020-09-01 起）"
    assert [row[0] for row in rows(page("/masters/?view=master"), "registry")] == [
        "小猴子 p0000001"
    ]
    assert [row[0] for row in rows(page("/masters/?view=lifetime"), "registry")] == [
        "黄丽 p0000008"
    ]
    assert [row[0] for row in rows(page("/masters/?province=北京"), "registry")] == [
        "黄丽 p0000008"
    ]
    lapsed = rows(page("/masters/?view=lapsed"), "registry")
    code = TitleTerm.objects.get(player=tour.players["p0000009"]).code
    assert lapsed == [["赵强 p0000009", "北京", "2019-10-01", "2020-10-01", code]]
    revoked = rows(page("/masters/?view=revoked"), "registry")
    assert revoked == [["吴杰 p0000010", "广东", "2021-01-15"]]
    assert "没有符合条件的记录。" in page("/masters/?view=revoked&province=江苏")


def test_verification_by_code(tour: Tour) -> None:
    code = TitleTerm.objects.get(player=tour.players["p0000001"]).code
    client = Client()
    typed = f"{code[:4].lower()}-{code[4:8]} {code[8:]}"
    redirect = client.get("/verify/", {"code": typed})["Location"]
    assert redirect == f"/verify/{typed.replace(' ', '%20')}/"
    html = page(f"/verify/{typed}/")
    assert "✓ 有效的大师头衔" in html
    flat = re.sub(r"<[^>]+>", "|", html.split('<dl class="facts">', 1)[1].split("</dl>", 1)[0])
    facts = [part.strip() for part in flat.split("|") if part.strip()]
    assert facts == [
        "验证码", code, "持有人", "小猴子", "p0000001 · 江苏", "任期开始", "2021-02-02",
        "有效期至", "2022-02-02", "状态", "有效",
    ]  # fmt: skip
    revoked = TitleTerm.objects.get(player=tour.players["p0000010"]).code
    assert "✗ 该头衔已被撤销" in page(f"/verify/{revoked}/")
    lapsed = TitleTerm.objects.get(player=tour.players["p0000009"]).code
    assert "✗ 该任期已过期" in page(f"/verify/{lapsed}/")
    assert "没有与“NOPE”对应的大师任期或终身大师头衔。" in page("/verify/NOPE/", 404)


def test_english_pages(tour: Tour) -> None:
    html = page("/en/events/2021-W05-F/")
    assert '<html lang="en">' in html
    assert "Station 6 · 重庆 · Weekly final" in html
    assert "Cut-off · national top 3" in html
    assert "Station 13 · 南京" in page("/en/seasons/2021/")


PUBLIC_PAGES = (
    "/",
    "/seasons/2021/",
    "/events/2021-W05-F/",
    "/events/2021-W05-F/?province=广东",
    "/events/2021-W05-F/?q=陈静",
    "/events/2021-W05-F/board/",
    "/events/2021-W01-F/",
    "/events/2021-01-M/?province=广东",
    "/players/?q=杨",
    "/players/p0000006/",
    "/players/p0000007/",
    "/players/p0000010/",
    "/players/p0000010/?as_of=2021-01-01",
    "/masters/",
    "/masters/?view=lapsed",
    "/masters/?view=revoked",
    "/verify/",
    "/exports/snapshots/",
    "/exports/events/2021-W05-F/leaderboard.csv",
    "/exports/events/2021-W01-F/leaderboard.json",
    "/exports/seasons/2021/champions.csv",
    "/exports/masters.json",
    "/en/players/p0000007/",
)


def test_no_session_or_integrity_detail_on_public_pages(tour: Tour) -> None:
    revoked = TitleTerm.objects.get(player=tour.players["p0000010"]).code
    client = Client()
    for url in (*PUBLIC_PAGES, f"/verify/{revoked}/"):
        response = client.get(url)
        assert response.status_code == 200, url
        body = response.getvalue().decode()  # the streamed content joined, or the content
        for secret in (SECRET_IP, SECRET_DEVICE, SECRET_CLIENT, SECRET_REASON, SECRET_CASE):
            assert secret not in body, (url, secret)


@pytest.mark.parametrize("url", ["/players/p0000001/", "/players/p0000001/titles/"])
def test_an_as_of_that_is_not_a_date_is_a_400_with_a_message(tour: Tour, url: str) -> None:
    html = page(url + "?as_of=yesterday", status=400, htmx=url.endswith("/titles/"))
    assert "查询日期无效" in html
    assert "2021-02-08，小猴子的头衔" not in html  # no answer for today in its place


def test_the_as_of_answer_is_shareable(tour: Tour) -> None:
    html = page("/players/p0000001/")
    assert 'hx-get="/players/p0000001/titles/"' in html
    assert 'hx-push-url="true"' in html
    shared = Client().get("/players/p0000001/titles/?as_of=2021-06-01")
    assert (shared.status_code, shared["Location"]) == (302, "/players/p0000001/?as_of=2021-06-01")
    opened = page(shared["Location"])
    assert "<html" in opened
    assert 'status-master">大师' in opened.split('id="titles-on"', 1)[1]
