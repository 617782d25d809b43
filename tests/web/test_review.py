"""Reviewer screens (SPEC §6 review): the queue with evidence, approve / reject at the version
seen (409 conflicts shown as messages), and the open integrity cases."""

import html as html_lib
import re
from datetime import date

import pytest
from django.contrib.messages import get_messages
from django.test import Client

from accounts.models import Player, User
from integrity.models import AuditRun, Case, CasePlayer, Flag
from tests.accounts.signin import client_sign_in
from tests.tournaments.factories import local
from tests.web.tour import Tour
from titles import services
from titles.models import (
    PlayerTitle,
    Qualification,
    QualificationStatus,
    TitleChange,
    TitleStatus,
)
from tournaments.models import Event, Season
from web import grant_evidence

pytestmark = pytest.mark.django_db


def reviewer_client(tour: Tour) -> Client:
    client = Client()
    client_sign_in(client, tour.reviewer)
    return client


def decide(
    client: Client, qualification: Qualification, decision: str, **data: object
) -> list[str]:
    response = client.post(
        f"/review/qualifications/{qualification.pk}/{decision}/",
        {"expected_version": qualification.version, "reason": "", **data},
    )
    assert response.status_code == 302
    assert response["Location"] == "/review/"
    return [str(message) for message in get_messages(response.wsgi_request)]


def state(qualification: Qualification) -> tuple[str, int]:
    qualification.refresh_from_db()
    return qualification.status, qualification.version


def test_reviewers_only(tour: Tour) -> None:
    anonymous = Client().get("/review/")
    assert anonymous.status_code == 302
    assert anonymous["Location"] == "/signin/?next=/review/"
    player_user = User.objects.create_user(username="someone", password="pw-for-tests-only")
    client = Client()
    client.force_login(player_user)
    assert client.get("/review/").status_code == 403
    before = state(tour.pending)
    refused = client.post(
        f"/review/qualifications/{tour.pending.pk}/approve/",
        {"expected_version": tour.pending.version, "reason": ""},
    )
    assert refused.status_code == 403
    assert state(tour.pending) == before


def test_queue_shows_the_pending_grant_its_evidence_and_open_cases(tour: Tour) -> None:
    html = reviewer_client(tour).get("/review/").content.decode()
    grants = re.findall(r'<article class="card grant" id="grant-(\d+)">', html)
    assert grants == [str(tour.pending.pk)]
    grant = html.split('id="grant-', 1)[1].split("</article>", 1)[0]
    assert "李娜" in grant
    assert "manual:2021-01 线下赛" in grant
    assert "线下赛事" in grant  # the evidence (the reviewer's reason) is shown to reviewers
    assert f'name="expected_version" value="{tour.pending.version}"' in grant
    assert grant.count("csrfmiddlewaretoken") == 2
    cases = html.split("未结诚信案件", 1)[1]
    case = Case.objects.get()
    assert f'<td class="num">{case.pk}</td>' in cases
    assert "陈静" in cases
    assert "杨磊" in cases


def test_approve_at_the_version_seen(tour: Tour) -> None:
    client = reviewer_client(tour)
    messages = decide(client, tour.pending, "approve", reason="证书已核对")
    assert messages == ["已批准: 李娜 · manual:2021-01 线下赛"]
    assert state(tour.pending) == (QualificationStatus.APPROVED, 2)
    title = PlayerTitle.objects.get(player=tour.players["p0000003"])
    assert (title.status, str(title.valid_until)) == (TitleStatus.MASTER, "2022-01-31")


def test_a_stale_decision_is_a_conflict_and_changes_nothing(tour: Tour) -> None:
    client = reviewer_client(tour)
    seen = Qualification.objects.get(pk=tour.pending.pk)
    decide(client, tour.pending, "reject", reason="证据不足")
    assert state(tour.pending) == (QualificationStatus.REJECTED, 2)
    messages = decide(client, seen, "approve")
    assert messages[-1] == (
        "李娜 · manual:2021-01 线下赛: 其他审核员已先作出决定（409），请查看最新状态。"
    )
    assert state(tour.pending) == (QualificationStatus.REJECTED, 2)
    assert not PlayerTitle.objects.filter(
        player=tour.players["p0000003"], status=TitleStatus.MASTER
    ).exists()


def test_reject_needs_a_reason(tour: Tour) -> None:
    messages = decide(reviewer_client(tour), tour.pending, "reject", reason="  ")
    assert messages == ["李娜 · manual:2021-01 线下赛: A rejection needs a reason."]
    assert state(tour.pending) == (QualificationStatus.PENDING, 1)


def test_a_held_player_cannot_be_approved(tour: Tour) -> None:
    case = Case.objects.get()
    CasePlayer.objects.create(case=case, player=tour.players["p0000003"])
    client = reviewer_client(tour)
    html = client.get("/review/").content.decode()
    assert "诚信案件未结：暂缓" in html
    assert re.search(r'<button type="submit" class="approve" disabled>', html)
    messages = decide(client, tour.pending, "approve")
    assert messages == [
        "李娜 · manual:2021-01 线下赛: 该选手有未结的诚信案件，其头衔申请暂缓审核。"
    ]
    assert state(tour.pending) == (QualificationStatus.PENDING, 1)


def test_decisions_need_the_csrf_token(tour: Tour) -> None:
    client = Client(enforce_csrf_checks=True)
    client_sign_in(client, tour.reviewer)
    response = client.post(
        f"/review/qualifications/{tour.pending.pk}/approve/",
        {"expected_version": tour.pending.version},
    )
    assert response.status_code == 403
    assert state(tour.pending) == (QualificationStatus.PENDING, 1)


def test_bad_decisions(tour: Tour) -> None:
    client = reviewer_client(tour)
    assert client.get(f"/review/qualifications/{tour.pending.pk}/approve/").status_code == 405
    assert (
        client.post(
            f"/review/qualifications/{tour.pending.pk}/grant/", {"expected_version": 1}
        ).status_code
        == 404
    )
    assert client.post("/review/qualifications/999999/approve/", {}).status_code == 404
    messages = decide(client, tour.pending, "approve", expected_version="x")
    assert messages == ["决定无效：请重新载入队列后再试。"]
    assert state(tour.pending) == (QualificationStatus.PENDING, 1)


# --- evidence in words, four eyes, bulk decisions (issue 27, "Title review") ----------------


def event_grant(tour: Tour, key: str, event: str, **evidence: object) -> Qualification:
    """A pending champion's grant of ``event`` for player ``key``, recorded by the tour's
    reviewer at finalisation (not by hand: four eyes does not apply)."""
    qualification = services.achievement_record(
        achievement="monthly_champion",
        player=tour.players[key],
        on=date(2021, 1, 31),
        source=f"event:{event}:champion",
        evidence={"event": event, **evidence},
        by=tour.reviewer,
    )
    assert qualification is not None
    return qualification


def grant_html(html: str, qualification: Qualification) -> str:
    return html.split(f'<article class="card grant" id="grant-{qualification.pk}">', 1)[1].split(
        "</article>", 1
    )[0]


def evidence_items(grant: str) -> list[str]:
    """The evidence lines of a grant's HTML, their tags and links as ``[text](href)``."""
    listed = grant.split('<ul class="evidence-lines">', 1)[1].split("</ul>", 1)[0]
    items = re.findall(r"<li[^>]*>(.*?)</li>", listed, re.S)
    linked = [re.sub(r'<a href="([^"]*)">([^<]*)</a>', r"[\2](\1)", item) for item in items]
    return [html_lib.unescape(item.strip()) for item in linked]


def bulk(client: Client, *items: Qualification | str, **data: object) -> list[str]:
    chosen = [i if isinstance(i, str) else f"{i.pk}:{i.version}" for i in items]
    response = client.post("/review/qualifications/bulk/", {"items": chosen, **data})
    assert response.status_code == 302
    assert response["Location"] == "/review/"
    return [str(message) for message in get_messages(response.wsgi_request)]


def row(qualification: Qualification) -> tuple[object, ...]:
    """What a decision writes on the qualification."""
    qualification.refresh_from_db()
    return (
        qualification.status,
        qualification.version,
        qualification.decided_by_id,
        qualification.decision_reason,
    )


def test_the_evidence_in_words_with_its_links(tour: Tour) -> None:
    """A champion's grant: the sentence, the event's board and the player's row on it, the
    audit completed without a flag (no case link: the console's filter knows no case of
    it). A held player's grant from an audit that flagged them links that event's cases.
    A manual entry: its reason and note; an unknown event and key: said as they are."""
    AuditRun.objects.create(
        key="event:2021-01-M",
        event=tour.monthly,
        window_start=tour.monthly.starts_at,
        window_end=tour.monthly.ends_at,
        status=AuditRun.Status.COMPLETED,
        started_at=local(2021, 2, 8, 11),
        finished_at=local(2021, 2, 8, 11, 30),
    )
    AuditRun.objects.filter(key="event:2021-W05-F").update(
        status=AuditRun.Status.COMPLETED, finished_at=local(2021, 2, 8, 14, 5)
    )
    # As the audit writes a flag: its players too, not only their keys.
    Flag.objects.get().players.add(tour.players["p0000006"], tour.players["p0000007"])
    champion = event_grant(tour, "p0000002", "2021-01-M", station=5, rank=1, score=1680, games=15)
    flagged = event_grant(tour, "p0000006", "2021-W05-F", rank=2, score=300, games=12)
    unknown = event_grant(tour, "p0000004", "2099-X", venue="上海", rank="第一")
    html = reviewer_client(tour).get("/review/").content.decode()

    assert evidence_items(grant_html(html, champion)) == [
        "2021-01-M 月赛冠军（第5站 天津站），第 1 名，1680 分，15 局"
        " · [赛事成绩榜](/events/2021-01-M/)"
        " · [王伟在本赛事的成绩](/events/2021-01-M/?q=p0000002)",
        "诚信审计：2021-01-M 的审计于 2021-02-08 11:30 完成，没有标记该选手。",
    ]
    assert evidence_items(grant_html(html, flagged)) == [
        "2021-W05-F 周赛，第 2 名，300 分，12 局"
        " · [赛事成绩榜](/events/2021-W05-F/)"
        " · [陈静在本赛事的成绩](/events/2021-W05-F/?q=p0000006)",
        "诚信审计：2021-W05-F 的审计于 2021-02-08 14:05 完成，1 项标记涉及该选手。"
        " · [该赛事的诚信案件](/review/cases/?event=2021-W05-F&state=all)",
    ]
    assert evidence_items(grant_html(html, unknown)) == [
        "2099-X",
        "系统中没有赛事 2099-X。",
        "rank: 第一",
        "venue: 上海",
    ]
    assert evidence_items(grant_html(html, tour.pending)) == [
        "录入理由：线下赛事",
        "备注：赛事记录",
    ]
    # The links lead somewhere: the board finds the player, the console lists the case.
    client = reviewer_client(tour)
    board = client.get("/events/2021-01-M/?q=p0000002")
    assert board.status_code == 200
    assert "王伟" in board.content.decode()
    cases = client.get("/review/cases/?event=2021-W05-F&state=all").content.decode()
    assert f"#{Case.objects.get().pk} 陈静、杨磊" in cases


def test_evidence_words_without_the_database() -> None:
    """The words are a pure function of the qualification and the facts: a seated event
    links the player's seats and games; a World Cup representative; an audit not run."""
    season = Season(year=2021)
    seated = Event(season=season, code="2021-NC", kind="championship", format="seated")
    player = Player(pk=7, external_id="p0000007", name="杨磊", province="江苏")
    won = Qualification(
        player=player,
        source="event:2021-NC:champion",
        evidence={"event": "2021-NC", "rank": 1, "games": 9, "demo": True},
    )
    facts = grant_evidence.Facts(events={"2021-NC": seated})
    assert [
        (line.text, [(link.text, link.url) for link in line.links])
        for line in grant_evidence.evidence_lines(won, facts)
    ] == [
        (
            "2021-NC 锦标赛冠军，第 1 名，9 局",
            [
                ("赛事成绩榜", "/events/2021-NC/"),
                ("杨磊在本赛事的座位与对局", "/events/2021-NC/tables/?q=p0000007"),
            ],
        ),
        ("诚信审计：2021-NC 尚未审计。", []),
        ("演示数据（由 demo 命令生成）", []),
    ]
    cup = Qualification(
        player=player,
        source="world_cup:2021-01:80x",
        evidence={"world_cup": "2021-01", "ranking": "80x"},
    )
    assert [line.text for line in grant_evidence.evidence_lines(cup, facts)] == [
        "UNO 世界杯 2021-01 月末，80× 倍数场排行中国第一"
    ]
    assert grant_evidence.recorded_words(cup, viewer_id=None) == "世界杯月末快照自动记录"
    running = grant_evidence.AuditFacts(
        status="running", started_at=local(2021, 2, 8, 14), finished_at=None, flags_on_player=0
    )
    assert grant_evidence.audit_line("2021-NC", running, has_cases=False).text == (
        "诚信审计：2021-NC 的审计于 2021-02-08 14:00 开始，尚未完成。"
    )
    won.version = 3
    assert grant_evidence.version_words(won) == "第 3 版（记录后改动过 2 次）"


def test_who_recorded_it_and_four_eyes_before_submitting(tour: Tour) -> None:
    """The reviewer who entered a grant by hand reads that they did and cannot approve it
    (the button is disabled, the reason said); another reviewer can."""
    entrant = User.objects.get(username="tour-entrant")
    mine = reviewer_client(tour)
    client_sign_in(mine, entrant)
    own = grant_html(mine.get("/review/").content.decode(), tour.pending)
    assert '<dd class="grant-recorded">由您手工录入 · ' in own
    assert '<dd class="grant-version">第 1 版（记录后未改动）</dd>' in own
    assert '<span class="badge badge-warn">由您录入</span>' in own
    assert (
        f'<p class="refusal" id="refusal-{tour.pending.pk}">'
        "不能批准：四眼原则：此资格由您录入，须由另一位审核员批准。</p>"
    ) in own
    assert '<button type="submit" class="approve" disabled>' in own
    # Submitted anyway (an old page): refused, nothing written.
    assert decide(mine, tour.pending, "approve") == [
        "李娜 · manual:2021-01 线下赛: 四眼原则：此资格由您录入，须由另一位审核员批准。"
    ]
    assert state(tour.pending) == (QualificationStatus.PENDING, 1)

    other = grant_html(reviewer_client(tour).get("/review/").content.decode(), tour.pending)
    assert '<dd class="grant-recorded">由 tour-entrant 手工录入 · ' in other
    assert "由您录入" not in other
    assert 'class="refusal"' not in other
    assert '<button type="submit" class="approve">' in other
    assert '<span class="badge badge-none">无赛事可审计：由审核员核对</span>' in other


def test_bulk_approve_decides_each_at_its_version(tour: Tour) -> None:
    """Two grants chosen; the second was rejected by another reviewer after the page was
    read: the first is approved, the second refused as stale and left as it was."""
    second = event_grant(tour, "p0000002", "2021-01-M", station=5, rank=1, score=1680, games=15)
    seen = Qualification.objects.get(pk=second.pk)
    other = User.objects.get(username="tour-entrant")
    services.qualification_reject(
        qualification=second, by=other, reason="成绩更正中", expected_version=1
    )
    before = row(second)
    assert before == (QualificationStatus.REJECTED, 2, other.pk, "成绩更正中")
    changes = TitleChange.objects.filter(player=tour.players["p0000002"]).count()

    messages = bulk(
        reviewer_client(tour), tour.pending, seen, decision="approve", reason="证书已核对"
    )
    assert messages == [
        "已批准 1 项：李娜 · manual:2021-01 线下赛",
        "未批准 王伟 · event:2021-01-M:champion: 其他审核员已先作出决定（409），请查看最新状态。",
    ]
    assert row(tour.pending) == (QualificationStatus.APPROVED, 2, tour.reviewer.pk, "证书已核对")
    assert row(second) == before
    assert TitleChange.objects.filter(player=tour.players["p0000002"]).count() == changes
    title = PlayerTitle.objects.get(player=tour.players["p0000003"])
    assert (title.status, str(title.valid_until)) == (TitleStatus.MASTER, "2022-01-31")


def test_bulk_refusals_say_why_each_was_refused(tour: Tour) -> None:
    """Four eyes and a held player, each in words; the grants are left as they were."""
    entrant = User.objects.get(username="tour-entrant")
    held = event_grant(tour, "p0000006", "2021-W05-F", rank=1)
    client = reviewer_client(tour)
    client_sign_in(client, entrant)
    messages = bulk(client, tour.pending, held, decision="approve", reason="")
    assert messages == [
        "未批准 李娜 · manual:2021-01 线下赛: 四眼原则：此资格由您录入，须由另一位审核员批准。",
        "未批准 陈静 · event:2021-W05-F:champion: 该选手有未结的诚信案件，其头衔申请暂缓审核。",
    ]
    assert row(tour.pending) == (QualificationStatus.PENDING, 1, None, "")
    assert row(held) == (QualificationStatus.PENDING, 1, None, "")


def test_bulk_reject_with_a_reason(tour: Tour) -> None:
    second = event_grant(tour, "p0000002", "2021-01-M", rank=1)
    messages = bulk(reviewer_client(tour), tour.pending, second, decision="reject", reason="重复")
    assert messages == [
        "已驳回 2 项：李娜 · manual:2021-01 线下赛、王伟 · event:2021-01-M:champion"
    ]
    assert row(tour.pending) == (QualificationStatus.REJECTED, 2, tour.reviewer.pk, "重复")
    assert row(second) == (QualificationStatus.REJECTED, 2, tour.reviewer.pk, "重复")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"decision": "reject", "reason": "  "}, "驳回须填写理由。"),
        ({"decision": "grant", "reason": "x"}, "未知的决定“grant”。"),
        ({"reason": "x"}, "请选择批准或驳回。"),
        ({"decision": "approve", "items": []}, "请至少勾选一项头衔申请。"),
        ({"decision": "approve", "items": ["12:x"]}, "所选项目无效，请重新载入队列后再试。"),
    ],
)
def test_bad_bulk_input_writes_nothing(tour: Tour, data: dict[str, object], message: str) -> None:
    second = event_grant(tour, "p0000002", "2021-01-M", rank=1)
    before = (row(tour.pending), row(second))
    items = data.pop("items", [f"{tour.pending.pk}:1", f"{second.pk}:1"])
    response = reviewer_client(tour).post("/review/qualifications/bulk/", {"items": items, **data})
    assert response.status_code == 302
    assert [str(m) for m in get_messages(response.wsgi_request)] == [
        f"批量决定无效，未作任何改动：{message}"
    ]
    assert (row(tour.pending), row(second)) == before


def test_bulk_is_for_reviewers_with_the_csrf_token(tour: Tour) -> None:
    player_user = User.objects.create_user(username="someone", password="pw-for-tests-only")
    client = Client()
    client.force_login(player_user)
    data = {"items": [f"{tour.pending.pk}:1"], "decision": "approve"}
    assert client.post("/review/qualifications/bulk/", data).status_code == 403
    checked = Client(enforce_csrf_checks=True)
    client_sign_in(checked, tour.reviewer)
    assert checked.post("/review/qualifications/bulk/", data).status_code == 403
    assert reviewer_client(tour).get("/review/qualifications/bulk/").status_code == 405
    assert state(tour.pending) == (QualificationStatus.PENDING, 1)


def test_the_queue_offers_each_grant_to_the_bulk_form_at_its_version(tour: Tour) -> None:
    html = reviewer_client(tour).get("/review/").content.decode()
    assert '<form method="post" action="/review/qualifications/bulk/" id="review-bulk"' in html
    grant = grant_html(html, tour.pending)
    assert (
        f'<input type="checkbox" id="pick-{tour.pending.pk}" name="items"'
        f' value="{tour.pending.pk}:1" form="review-bulk">'
    ) in grant
