"""The reviewer's case console (issue 27; SPEC §7): the ranked queue with its filters, a case's
evidence in words, and its actions — take, dismiss, sanction after reading the plan, record
and decide an appeal (four eyes) — each at the version seen; refused and stale forms write
nothing. The case is the farm of ``tests.web.cases`` (a real audit's flags)."""

import re
from datetime import date, datetime
from typing import Any
from urllib.parse import quote

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.utils import timezone

from accounts.models import Player, User
from accounts.roles import GAME_SERVER, ORGANISER, REVIEWER
from core.domain.clock import TOUR_TZ
from flows.sanctions import case_sanction
from integrity.models import Appeal, Case, CaseEvent, CasePlayer, Flag, Sanction
from integrity.services.cases import appeal_file, case_take
from tests.accounts.signin import client_sign_in
from tests.web.cases import (
    NOTICES,
    REASON,
    STATEMENT,
    TODAY,
    UPHELD,
    Farm,
    build_farm,
    changed,
    notices_of,
    sanction_data,
    state_before,
    state_sanctioned,
    tour_state,
)
from titles.models import Qualification, Revocation, TitleChange
from tournaments.models import Correction, Game
from web.case_evidence import identifier_graph, short_identifier

pytestmark = pytest.mark.django_db


@pytest.fixture
def march(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timezone, "now", lambda: TODAY)


@pytest.fixture
def farm(march: None, reviewer: User) -> Farm:
    return build_farm(reviewer)


@pytest.fixture
def reviewer2(reviewer: User) -> User:
    user = User.objects.create_user(username="rev2", password="pw-for-tests-only")
    user.groups.add(Group.objects.get(name=REVIEWER))
    return user


def signed_in(user: User) -> Client:
    return client_sign_in(Client(), user)


def text(response: Any) -> str:
    """The page's visible text, whitespace collapsed (scripts and tags dropped)."""
    html = re.sub(r"<script.*?</script>", "", response.content.decode(), flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def section(response: Any, anchor: str) -> str:
    """The visible text of the page's ``<section id=anchor>``."""
    html = response.content.decode()
    start = html.index(">", html.index(f'<section class="card" id="{anchor}"')) + 1
    return text(type("R", (), {"content": html[start : html.index("</section>", start)].encode()}))


def said(client: Client, response: Any) -> list[str]:
    """The messages the page an action redirected to shows (the action's outcome)."""
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    return [text(type("R", (), {"content": m.encode()})) for m in MESSAGE.findall(page)]


MESSAGE = re.compile(r'<li class="message [a-z]+">(.*?)</li>', re.S)


def at(moment: datetime | None) -> str:
    """A stored time as the pages show it (Asia/Shanghai)."""
    assert moment is not None
    return moment.astimezone(TOUR_TZ).strftime("%Y-%m-%d %H:%M")


def written() -> dict[str, int]:
    """The rows every step of a case writes."""
    return {
        model.__name__: model.objects.count()
        for model in (
            CaseEvent,
            Sanction,
            Appeal,
            Correction,
            Revocation,
            TitleChange,
            Qualification,
        )
    }


def case_row(case: Case) -> tuple[str, int, int | None, int | None]:
    case.refresh_from_db()
    return case.status, case.version, case.assigned_to_id, case.decided_by_id


# --- who may ---------------------------------------------------------------------------------


def _user(kind: str) -> User | None:
    if kind == "anonymous":
        return None
    user = User.objects.create_user(username=f"u-{kind}", password="pw-for-tests-only")
    role = {"organiser": ORGANISER, "game_server": GAME_SERVER}.get(kind)
    if role:
        user.groups.add(Group.objects.get(name=role))
    return user


@pytest.mark.parametrize("kind", ["anonymous", "player", "game_server", "organiser"])
def test_only_reviewers_open_the_console_or_act(farm: Farm, reviewer: User, kind: str) -> None:
    user = _user(kind)
    client = Client()
    if user is not None:
        client.force_login(user)
    case = farm.case
    game = Game.objects.filter(seats__player=farm.players["b"]).order_by("pk").first()
    assert game is not None
    pages = [
        "/review/cases/",
        "/review/cases/?state=decided&family=pointflow",
        f"/review/cases/{case.pk}/",
        f"/review/cases/{case.pk}/games/{game.record_id}/",
    ]
    for path in pages:
        response = client.get(path)
        if user is None:
            assert (response.status_code, response["Location"]) == (
                302,
                f"/signin/?next={quote(path, safe='/')}",
            )
        else:
            assert response.status_code == 403, path

    def refused(path: str, data: dict[str, Any]) -> None:
        before, state, row = written(), tour_state(farm), case_row(case)
        response = client.post(path, data)
        if user is None:
            assert response.status_code == 302
            assert response["Location"].startswith("/signin/?next=")
        else:
            assert response.status_code == 403, path
        assert (written(), tour_state(farm), case_row(case)) == (before, state, row)

    version = {"expected_version": case.version}
    refused(f"/review/cases/{case.pk}/take/", version)
    refused(f"/review/cases/{case.pk}/dismiss/", {**version, "reason": "家人共用平板"})
    refused(f"/review/cases/{case.pk}/sanction/", sanction_data(case))
    refused(f"/review/cases/{case.pk}/sanction/", sanction_data(case, confirm="true"))

    sanctioned = case_sanction(
        case=case,
        by=reviewer,
        reason="farm",
        decisions=[{"player": farm.players["h"], "role": "helper", "suspend": True}],
    )
    refused(
        f"/review/cases/{case.pk}/appeals/",
        {"expected_version": sanctioned.version, "player": "h", "statement": "不是我"},
    )
    appeal = appeal_file(case=sanctioned, player=farm.players["h"], statement="不是我")
    case.refresh_from_db()
    refused(
        f"/review/cases/{case.pk}/appeals/{appeal.pk}/decide/",
        {"expected_version": case.version, "decision": "uphold", "reason": "证据不足"},
    )
    assert Appeal.objects.get(pk=appeal.pk).status == "pending"


def test_forms_are_posts_with_the_csrf_token(farm: Farm, reviewer: User) -> None:
    client = Client(enforce_csrf_checks=True)
    client_sign_in(client, reviewer)
    before, row = written(), case_row(farm.case)
    path = f"/review/cases/{farm.case.pk}/"
    assert client.get(f"{path}take/").status_code == 405
    assert client.post(f"{path}take/", {"expected_version": 0}).status_code == 403
    response = client.post(f"{path}sanction/", sanction_data(farm.case, confirm="true"))
    assert response.status_code == 403
    assert (written(), case_row(farm.case)) == (before, row)


# --- the queue -------------------------------------------------------------------------------


def _quiet_case(farm: Farm) -> Case:
    """A lower case of two honest players, already dismissed."""
    case = Case.objects.create(
        key="a3|a4", score=2.0, families=["sessions"], status=Case.Status.DISMISSED
    )
    for key in ("a3", "a4"):
        CasePlayer.objects.create(case=case, player=farm.players[key], role="cleared")
    return case


def test_the_queue_ranks_and_filters_the_cases(farm: Farm, reviewer: User) -> None:
    quiet = _quiet_case(farm)
    client = signed_in(reviewer)

    def listed(query: str = "") -> list[str]:
        html = client.get(f"/review/cases/{query}").content.decode()
        return re.findall(r'<li class="case-row" id="case-(\d+)">', html)

    top, low = str(farm.case.pk), str(quiet.pk)
    assert listed() == [top]  # undecided cases by default
    assert listed("?state=all") == [top, low]
    assert listed("?state=decided") == [low]
    assert listed("?state=open") == [top]
    assert listed("?state=taken") == []
    assert listed("?state=all&family=pointflow") == [top]
    assert listed("?state=all&family=sessions") == [top, low]
    assert listed("?state=all&family=boosting") == []
    assert listed("?state=all&event=2021-02-M") == [top]
    assert listed("?state=nonsense") == [top]  # an invalid filter shows the default queue

    response = client.get("/review/cases/?state=all")
    page = text(response)
    assert "2 个案件，按评分从高到低排列" in page
    assert f"#{top} 白雪、黑土 待处理 评分 156.4" in page
    assert f"#{low} 青山、绿水 已结案（不处罚） 评分 2.0" in page
    assert f"同桌 让分 设备与地址 2021-02-M · 立案 {at(farm.case.opened_at)}" in page
    assert f'href="/review/cases/{top}/"' in response.content.decode()

    case_take(case=farm.case, by=reviewer, expected_version=farm.case.version)
    assert listed("?state=taken") == [top]
    assert "处理中" in text(client.get("/review/cases/?state=taken"))
    assert "处理人 rev" in text(client.get("/review/cases/?state=taken"))


def test_the_title_queue_links_each_open_case_to_its_page(farm: Farm, reviewer: User) -> None:
    html = signed_in(reviewer).get("/review/").content.decode()
    assert f'<a href="/review/cases/{farm.case.pk}/">处理 →</a>' in html
    assert '<a href="/review/cases/">全部案件 →</a>' in html
    assert "/admin/" not in html


def test_the_queue_pages(farm: Farm, reviewer: User) -> None:
    for i in range(21):
        Case.objects.create(key=f"k{i}", score=1.0 - i / 100)
    client = signed_in(reviewer)
    first = client.get("/review/cases/").content.decode()
    assert len(re.findall(r'class="case-row"', first)) == 20
    assert "第 1 / 2 页" in text(client.get("/review/cases/"))
    second = client.get("/review/cases/?page=2").content.decode()
    assert len(re.findall(r'class="case-row"', second)) == 2


# --- the evidence ----------------------------------------------------------------------------


def test_the_case_page_puts_the_evidence_in_words(farm: Farm, reviewer: User) -> None:
    response = signed_in(reviewer).get(f"/review/cases/{farm.case.pk}/")
    assert response.status_code == 200
    flags = section(response, "flags")
    shared = Game.objects.filter(seats__player=farm.players["h"]).values_list("record_id")
    first = sorted((record for (record,) in shared), key=lambda r: (len(r), r))[:8]
    assert (
        "同局两座同源 近乎确证 same_table sessions-1 · event:2021-02-M "
        "白雪与黑土在同一局的两个座位上使用同一台设备 d-farm，共 15 局 "
        "一台设备同时坐两个座位：近乎确证是一人操作两个账号。 "
        f"对局：{'、'.join(first)} 等 15 项"
    ) in flags
    assert (
        "白雪赢的 15 局里黑土都在同桌，平均剩 100 分手牌（q = 4.2×10⁻⁷） "
        "其中 15 局黑土的手牌不比任何没出完的陌生对手轻（常一起排队的人不算陌生对手），"
        "随机预期 5 局。 "
        "这些局里黑土共输给白雪 1500 分；黑土赢白雪的 0 局里，白雪输给黑土 0 分。 "
        "检验：数黑土手牌不比陌生对手轻的局数（黑土不和白雪同桌的输局太少，不够比较）。"
    ) in flags
    assert (
        "白雪与黑土一起同桌 15 局，随机预期 6.4 局（q = 2.3×10⁻⁵） "
        "窗口内白雪打了 15 局，黑土打了 15 局；两人同时在线的小时段 2 个。"
    ) in flags
    assert "白雪、黑土共用 1 台设备、0 个 IP 地址 设备：d-farm" in flags

    assert section(response, "pairs").endswith("白雪、黑土 15 6.4 0 / 0")
    flows = section(response, "flows")
    assert "输分者 ＼ 受益者 白雪 黑土 白雪 — 0 局 · 0 分 黑土 15 局 · 1500 分 —" in flows
    html = response.content.decode()
    assert 'id="flow-chart"' in html
    assert '<script id="flow-data" type="application/json">' in html
    assert '"data": [[1, 0, 0, 0, 0], [0, 1, 15, 1500, 15]]' in html
    assert "static/vendor/echarts/echarts.min.js" in html
    assert section(response, "identifiers") == (
        "共用设备与地址 连线：选手在证据窗口内用过该设备或地址。 "
        "设备 d-farm 白雪、黑土 IP 地址与设备属于个人信息，仅审核员可见。"
    )
    assert (
        '<div id="identifier-chart" class="chart chart-identifiers" role="img" '
        'aria-label="共用设备与地址关系图：数据见下面的列表"></div>'
    ) in html
    assert (
        '<script id="identifier-data" type="application/json">'
        '{"nodes": [{"id": "player:b", "name": "\\u767d\\u96ea", "category": 0}, '
        '{"id": "player:h", "name": "\\u9ed1\\u571f", "category": 0}, '
        '{"id": "device:d-farm", "name": "\\u8bbe\\u5907 d-farm", "full": "d-farm", '
        '"category": 1}], '
        '"links": [{"source": "player:b", "target": "device:d-farm"}, '
        '{"source": "player:h", "target": "device:d-farm"}], '
        '"categories": [{"name": "\\u9009\\u624b"}, {"name": "\\u8bbe\\u5907"}, '
        '{"name": "IP \\u5730\\u5740"}]}</script>'
    ) in html

    games = section(response, "games")
    assert "涉案选手同桌的对局 15 局（最近的在前）" in games
    played = Game.objects.filter(seats__player=farm.players["b"]).order_by("ended_at")
    earliest, latest = played.first(), played.last()
    assert earliest is not None
    assert latest is not None
    assert games.index(f"{latest.record_id} ") < games.index(f"{earliest.record_id} ")
    assert (
        "0 白雪 — 0 112 198.51.100.7 d-farm 1 黑土 WD4 W 100 -100 198.51.100.8 d-farm "
        "2 青山 R5 5 -5 203.0.113.3 d-a3 3 绿水 G7 7 -7 203.0.113.4 d-a4"
    ) in games
    assert "查看对局（无走法记录） →" in games

    log = section(response, "log")
    opened = CaseEvent.objects.get(case=farm.case)
    assert log == (
        f"案件记录 {at(opened.at)} 立案 · 系统 — benefit: pointflow; 15 near-conclusive "
        "same-table link(s); with coseating 审计 event:2021-02-M：4 个标记，评分 156.4"
    )


def test_identifiers_are_shortened_on_the_graph_whole_up_to_sixteen_characters() -> None:
    assert short_identifier("198.51.100.7") == "198.51.100.7"
    assert short_identifier("d-farm") == "d-farm"
    assert short_identifier("0123456789abcdef") == "0123456789abcdef"
    assert short_identifier("0123456789abcdefg") == "01234567…defg"
    assert short_identifier("2001:db8:85a3::8a2e:370:7334") == "2001:db8…7334"


def test_the_shared_identifiers_as_a_graph() -> None:
    names = {"b": "白雪", "h": "黑土", "z": "紫云", "x": "外人"}
    graph = identifier_graph(
        ["b", "h", "q", "z"],
        [
            {"kind": "device", "identifier": "d-farm", "players": ["b", "h"]},
            {"kind": "device", "identifier": "0f3a9c2e5d6b7a8c9d0e77b1", "players": ["h", "z"]},
            {"kind": "ip", "identifier": "198.51.100.7", "players": ["b", "h", "z"]},
            {"kind": "asn", "identifier": "AS4134", "players": ["b", "x"]},
        ],
        lambda key: names.get(key, key),
    )
    assert graph == {
        "nodes": [
            {"id": "player:b", "name": "白雪", "category": 0},
            {"id": "player:h", "name": "黑土", "category": 0},
            {"id": "player:q", "name": "q", "category": 0},  # shares nothing: stands alone
            {"id": "player:z", "name": "紫云", "category": 0},
            {"id": "player:x", "name": "外人", "category": 0},  # not of the case: after them
            {"id": "device:d-farm", "name": "设备 d-farm", "full": "d-farm", "category": 1},
            {
                "id": "device:0f3a9c2e5d6b7a8c9d0e77b1",
                "name": "设备 0f3a9c2e…77b1",
                "full": "0f3a9c2e5d6b7a8c9d0e77b1",
                "category": 1,
            },
            {
                "id": "ip:198.51.100.7",
                "name": "IP 地址 198.51.100.7",
                "full": "198.51.100.7",
                "category": 2,
            },
            {"id": "asn:AS4134", "name": "asn AS4134", "full": "AS4134", "category": 3},
        ],
        "links": [
            {"source": "player:b", "target": "device:d-farm"},
            {"source": "player:h", "target": "device:d-farm"},
            {"source": "player:h", "target": "device:0f3a9c2e5d6b7a8c9d0e77b1"},
            {"source": "player:z", "target": "device:0f3a9c2e5d6b7a8c9d0e77b1"},
            {"source": "player:b", "target": "ip:198.51.100.7"},
            {"source": "player:h", "target": "ip:198.51.100.7"},
            {"source": "player:z", "target": "ip:198.51.100.7"},
            {"source": "player:b", "target": "asn:AS4134"},
            {"source": "player:x", "target": "asn:AS4134"},
        ],
        "categories": [{"name": "选手"}, {"name": "设备"}, {"name": "IP 地址"}, {"name": "asn"}],
    }
    assert identifier_graph(["b"], [], lambda key: names[key]) == {
        "nodes": [{"id": "player:b", "name": "白雪", "category": 0}],
        "links": [],
        "categories": [{"name": "选手"}, {"name": "设备"}, {"name": "IP 地址"}],
    }


def test_a_flag_its_presenter_does_not_know_is_said_generically(farm: Farm, reviewer: User) -> None:
    flagged = farm.case.flags.select_related("run").first()
    assert flagged is not None
    run = flagged.run
    odd = Flag.objects.create(
        run=run,
        detector=Flag.Detector.COSEATING,
        version="coseat-0",
        family=Flag.Family.BEHAVIOUR,
        player_keys=["b", "h"],
        statistic=3.0,
        q_value=0.0042,
        evidence={"pairs": 3},
        score=0.5,
    )
    old = Flag.objects.create(
        run=run,
        detector=Flag.Detector.SESSIONS,
        version="sessions-0",
        family=Flag.Family.LINKS,
        player_keys=["b", "h"],
        evidence={"device": "d-old", "ip": "192.0.2.1"},
        score=0.1,
    )
    farm.case.flags.add(odd, old)
    flags = section(signed_in(reviewer).get(f"/review/cases/{farm.case.pk}/"), "flags")
    assert (
        "同桌过多 coseating coseat-0 · event:2021-02-M 白雪、黑土：统计量 3（q = 0.0042） pairs: 3"
        in (flags)
    )
    assert "白雪、黑土共用 1 台设备、1 个 IP 地址 设备：d-old IP 地址：192.0.2.1" in flags


def test_a_linked_game_lists_its_moves(farm: Farm, reviewer: User) -> None:
    game = Game.objects.filter(seats__player=farm.players["b"]).order_by("pk").first()
    assert game is not None
    Game.objects.filter(pk=game.pk).update(
        log={
            "v": 1,
            "deal": [["R5", "B7"], ["WD4", "W"], ["R5"], ["G7"]],
            "pile": [],
            "moves": [
                {"t": 0, "flip": "B3"},
                {"t": 2100, "seat": 0, "play": "B7"},
                {"t": 4000, "seat": 1, "play": "W", "color": "G"},
                {"t": 5200, "seat": 2, "draw": 1},
                {"t": 6900, "seat": 2, "pass": True},
                {"t": 9900, "seat": 3, "play": ["R3", "B3"], "color": "B", "auto": True},
                {"t": 12400, "seat": 0, "uno": True},
                {"t": 12500, "seat": 1, "catch": 0},
                {"t": 62500, "seat": 0, "play": "R7", "swap": 3},
                {"t": 178000, "end": "time"},
            ],
        }
    )
    client = signed_in(reviewer)
    case_page = client.get(f"/review/cases/{farm.case.pk}/").content.decode()
    link = f'href="/review/cases/{farm.case.pk}/games/{game.record_id}/">查看走法记录 →'
    assert link in case_page
    response = client.get(f"/review/cases/{farm.case.pk}/games/{game.record_id}/")
    page = text(response)
    assert "0 白雪 b R5 B7 — 0 112 198.51.100.7 d-farm" in page
    moves = page[page.index("走法记录") :]
    assert moves == (
        "走法记录 0:00.0 翻开 B3 0:02.1 白雪出 B7 0:04.0 黑土出 W 选绿色 0:05.2 青山摸 1 张 "
        "0:06.9 青山过 0:09.9 绿水出 R3 B3 选蓝色 超时代出 0:12.4 白雪喊 UNO "
        "0:12.5 黑土抓白雪没喊 UNO 1:02.5 白雪出 R7 与绿水换牌 2:58.0 时间到，本局结束 "
        "UNO 中国线上巡回赛 名录月度快照 API 文档"
    )
    other = Game.objects.exclude(seats__player__in=[farm.players["b"], farm.players["h"]]).first()
    assert other is not None
    missing = client.get(f"/review/cases/{farm.case.pk}/games/{other.record_id}/")
    assert missing.status_code == 404


# --- the journey -----------------------------------------------------------------------------


def test_sanction_after_the_plan_then_a_second_reviewer_upholds_the_appeal(
    farm: Farm, reviewer: User, reviewer2: User
) -> None:
    before = tour_state(farm)
    assert before == state_before(farm)
    client = signed_in(reviewer)
    queue = client.get("/review/cases/").content.decode()
    top = re.search(r'<a class="case-link" href="(/review/cases/\d+/)">', queue)
    assert top is not None
    path = top.group(1)
    assert path == f"/review/cases/{farm.case.pk}/"
    assert "白雪与黑土一起同桌 15 局，随机预期 6.4 局（q = 2.3×10⁻⁵）" in text(client.get(path))

    taken = client.post(f"{path}take/", {"expected_version": 0})
    assert (taken.status_code, taken["Location"]) == (302, path)
    assert said(client, taken) == [f"已领取案件 #{farm.case.pk}。"]
    assert case_row(farm.case) == ("open", 1, reviewer.pk, None)

    # The plan first: nothing is written.
    counts = written()
    plan = client.post(f"{path}sanction/", sanction_data(farm.case))
    assert plan.status_code == 200
    actions = section(plan, "actions")
    assert (
        "确认后将执行以下处罚（尚未写入）： 白雪 （受益者）：作废对局 2021-02-M 、撤销头衔 "
        f"黑土 （协助者）：撤销头衔、停赛 理由：{REASON} "
        "下游变化 2021-02-M · 白雪 · 作废该选手的对局 作废 15 个座位的成绩 冠军：白雪 → 蓝天 "
        "晋级：加入 蓝天，移出 白雪 下游赛事名单：加入 蓝天，移出 白雪 "
        "下游赛事 2021-Q1-F：名单变化，未开赛 白雪: 1680 分 15 局 第 1 名 晋级 → 0 分 0 局 "
        "冠军资格：撤回 白雪，记录 蓝天 "
        "头衔变化 白雪：大师（有效期至 2022-02-08） → 无头衔 "
        "黑土：大师（有效期至 2022-02-08） → 无头衔 "
        "白雪：头衔被撤销（2021-03-10） 白雪：撤回此前的“获得大师”（2021-02-08） "
        "黑土：头衔被撤销（2021-03-10） 黑土：撤回此前的“获得大师”（2021-02-08） "
        "确认处罚 取消"
    ) in actions
    html = plan.content.decode()
    for hidden in (
        '<input type="hidden" name="confirm" value="true">',
        '<input type="hidden" name="expected_version" value="1">',
        '<input type="hidden" name="events-b" value="2021-02-M">',
        '<input type="hidden" name="suspend-h" value="on">',
    ):
        assert hidden in html
    assert (written(), tour_state(farm)) == (counts, before)
    assert case_row(farm.case) == ("open", 1, reviewer.pk, None)

    confirmed = client.post(f"{path}sanction/", sanction_data(farm.case, confirm="true"))
    assert (confirmed.status_code, confirmed["Location"]) == (302, path)
    assert said(client, confirmed) == [f"已处罚（案件 #{farm.case.pk}）：白雪、黑土。"]
    assert case_row(farm.case) == ("sanctioned", 2, reviewer.pk, reviewer.pk)
    assert changed(farm) == state_sanctioned(farm)
    # Told of the sanction; the reversal's two notices are still to come.
    assert notices_of(farm) == {key: feed[2:] for key, feed in NOTICES.items()}
    page = client.get(path)
    assert section(page, "sanctions").startswith(
        "处罚与申诉 白雪 （受益者）· 作废对局 2021-02-M 撤销头衔 2021-03-10 起，rev "
        "黑土 （协助者）· 撤销头衔 停赛 2021-03-10 起，rev"
    )
    # The voided games stay the case's evidence, for whoever decides the appeal.
    assert section(page, "pairs").endswith("白雪、黑土 15 6.4 0 / 0")
    assert "设备 d-farm 白雪、黑土" in section(page, "identifiers")
    assert "涉案选手同桌的对局 15 局（最近的在前）" in section(page, "games")
    punished = CaseEvent.objects.get(case=farm.case, action="sanctioned")
    assert f"{at(punished.at)} 处罚 · rev — {REASON} " in section(page, "log")
    assert "白雪（受益者）：作废 2021-02-M 的对局、撤销头衔 黑土（协助者）：撤销头衔、停赛" in (
        section(page, "log")
    )

    filed = client.post(
        f"{path}appeals/", {"expected_version": 2, "player": "b", "statement": STATEMENT}
    )
    assert said(client, filed) == ["已记录白雪的申诉。"]
    appeal = Appeal.objects.get(case=farm.case)
    decide = f"{path}appeals/{appeal.pk}/decide/"
    page = client.get(path)
    assert "四眼原则：您作出了处罚，此申诉须由另一位审核员裁决。" in section(page, "actions")

    # Four eyes: the reviewer who sanctioned cannot decide; nothing is written.
    counts, state = written(), tour_state(farm)
    refused = client.post(decide, {"expected_version": 3, "decision": "uphold", "reason": "我错了"})
    assert said(client, refused) == [
        "四眼原则：作出处罚的审核员不能裁决申诉，须由另一位审核员裁决。"
    ]
    assert (written(), tour_state(farm), case_row(farm.case)) == (
        counts,
        state,
        ("sanctioned", 3, reviewer.pk, reviewer.pk),
    )

    second = signed_in(reviewer2)
    assert "四眼原则" not in section(second.get(path), "actions")
    upheld = second.post(decide, {"expected_version": 3, "decision": "uphold", "reason": UPHELD})
    assert said(second, upheld) == [f"申诉成立：案件 #{farm.case.pk} 的处罚已全部撤销。"]
    assert case_row(farm.case) == ("reversed", 4, reviewer.pk, reviewer.pk)
    assert Appeal.objects.get(pk=appeal.pk).status == "upheld"
    after = tour_state(farm)
    assert after == before
    assert after["champion"] == farm.players["b"].pk
    assert after["entries"] == [("b", "advanced", "2021-02-M")]
    assert after["titles"] == [
        ("b", "master", date(2022, 2, 8), None),
        ("h", "master", date(2022, 2, 8), None),
    ]
    page = client.get(path)
    assert section(page, "actions") == "处理 此案件已决定，不再接受操作。"
    log = section(page, "log")
    for step in ("立案 · 系统", "领取 · rev", "处罚 · rev", f"申诉 · rev — {STATEMENT}"):
        assert step in log
    assert f"申诉成立，撤销处罚 · rev2 — {UPHELD} 恢复：白雪、黑土" in log
    assert notices_of(farm) == NOTICES


def test_the_sanction_form_says_what_is_missing_and_writes_nothing(
    farm: Farm, reviewer: User
) -> None:
    client = signed_in(reviewer)
    path = f"/review/cases/{farm.case.pk}/sanction/"
    counts, row = written(), case_row(farm.case)
    nobody = client.post(path, {"expected_version": 0, "reason": "farm"})
    assert "请至少为一名选手选择身份和处罚。" in section(nobody, "actions")
    idle = client.post(path, {"expected_version": 0, "reason": "farm", "role-b": "beneficiary"})
    assert "请至少选择一项处罚：作废对局、撤销头衔或停赛。" in section(idle, "actions")
    roleless = client.post(path, {"expected_version": 0, "reason": "farm", "revoke-h": "on"})
    assert "请选择身份：受益者或协助者。" in section(roleless, "actions")
    foreign = client.post(
        path, {"expected_version": 0, "reason": "farm", "role-b": "helper", "events-b": "2021-Q1-F"}
    )
    assert "选择一个有效的选项" in section(foreign, "actions")
    assert (written(), case_row(farm.case)) == (counts, row)


def test_dismissal_with_a_reason(farm: Farm, reviewer: User) -> None:
    client = signed_in(reviewer)
    path = f"/review/cases/{farm.case.pk}/"
    response = client.post(f"{path}dismiss/", {"expected_version": 0, "reason": "家人共用平板"})
    assert said(client, response) == [f"案件 #{farm.case.pk} 已结案，不予处罚。"]
    assert case_row(farm.case) == ("dismissed", 1, None, reviewer.pk)
    roles = set(CasePlayer.objects.filter(case=farm.case).values_list("role", flat=True))
    assert roles == {"cleared"}
    page = client.get(path)
    assert "结案（不处罚） · rev — 家人共用平板" in section(page, "log")
    assert "涉案选手 白雪 b · 江苏 已排除 大师 黑土 h · 江苏 已排除 大师" in section(
        page, "players"
    )


# --- stale forms -----------------------------------------------------------------------------


def test_a_stale_form_is_a_conflict_and_writes_nothing(
    farm: Farm, reviewer: User, reviewer2: User
) -> None:
    path = f"/review/cases/{farm.case.pk}/"
    first, second = signed_in(reviewer), signed_in(reviewer2)
    seen = 'name="expected_version" value="0"'
    assert seen in first.get(path).content.decode()
    assert seen in second.get(path).content.decode()
    assert said(first, first.post(f"{path}take/", {"expected_version": 0})) == [
        f"已领取案件 #{farm.case.pk}。"
    ]
    counts, state, row = written(), tour_state(farm), case_row(farm.case)
    assert row == ("open", 1, reviewer.pk, None)

    conflict = (
        "案件已有更新（您看到的是第 0 版，现在是第 1 版）：本次操作没有执行，请查看最新状态后再试。"
    )
    for action, data in (
        ("take/", {"expected_version": 0}),
        ("dismiss/", {"expected_version": 0, "reason": "家人共用平板"}),
        ("sanction/", sanction_data(farm.case, expected_version=0)),
        ("sanction/", sanction_data(farm.case, expected_version=0, confirm="true")),
    ):
        response = second.post(f"{path}{action}", data)
        assert response["Location"] == path, action
        assert said(second, response) == [conflict], action
        assert (written(), tour_state(farm), case_row(farm.case)) == (counts, state, row)

    # A decided case refuses what only an open one takes.
    dismissed = second.post(f"{path}dismiss/", {"expected_version": 1, "reason": "家人共用平板"})
    assert said(second, dismissed) == [f"案件 #{farm.case.pk} 已结案，不予处罚。"]
    late = first.post(f"{path}take/", {"expected_version": 2})
    assert said(first, late) == ["案件现为“已结案（不处罚）”，不能执行此操作。"]
    assert case_row(farm.case) == ("dismissed", 2, reviewer.pk, reviewer2.pk)


def test_a_stale_appeal_form_is_a_conflict(farm: Farm, reviewer: User, reviewer2: User) -> None:
    case = case_sanction(
        case=farm.case,
        by=reviewer,
        reason="farm",
        decisions=[{"player": farm.players["b"], "role": "beneficiary", "revoke_titles": True}],
    )
    appeal = appeal_file(case=case, player=farm.players["b"], statement="不是我")
    case.refresh_from_db()
    assert case.version == 2
    client = signed_in(reviewer2)
    counts, state = written(), tour_state(farm)
    decide = f"/review/cases/{case.pk}/appeals/{appeal.pk}/decide/"
    reasonless = client.post(decide, {"expected_version": 2, "decision": "uphold", "reason": ""})
    assert reasonless["Location"] == f"/review/cases/{case.pk}/#actions"
    assert said(client, reasonless) == ["裁决须选择成立或驳回，并写明理由。"]
    stale = client.post(decide, {"expected_version": 1, "decision": "uphold", "reason": "采纳"})
    assert said(client, stale) == [
        "案件已有更新（您看到的是第 1 版，现在是第 2 版）：本次操作没有执行，请查看最新状态后再试。"
    ]
    assert (written(), tour_state(farm)) == (counts, state)
    assert Appeal.objects.get(pk=appeal.pk).status == "pending"
    rejected = client.post(
        decide, {"expected_version": 2, "decision": "reject", "reason": "同一设备"}
    )
    assert said(client, rejected) == [f"申诉驳回：案件 #{case.pk} 的处罚维持。"]
    assert case_row(case) == ("sanctioned", 3, None, reviewer.pk)
    assert tour_state(farm) == state


def test_the_console_speaks_english_under_en(farm: Farm, reviewer: User) -> None:
    client = signed_in(reviewer)
    assert client.get("/en/review/cases/?state=all").status_code == 200
    page = client.get(f"/en/review/cases/{farm.case.pk}/")
    assert page.status_code == 200
    assert '<html lang="en">' in page.content.decode()


def test_unknown_cases_games_and_appeals_are_not_found(farm: Farm, reviewer: User) -> None:
    client = signed_in(reviewer)
    assert client.get("/review/cases/999999/").status_code == 404
    assert client.post("/review/cases/999999/take/", {"expected_version": 0}).status_code == 404
    path = f"/review/cases/{farm.case.pk}/"
    assert client.get(f"{path}games/no-such-game/").status_code == 404
    decide = client.post(f"{path}appeals/999999/decide/", {"expected_version": 0})
    assert decide.status_code == 404
    assert Player.objects.filter(external_id="b").exists()
