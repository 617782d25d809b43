"""Reviewer screens (SPEC §6 review): the queue with evidence, approve / reject at the version
seen (409 conflicts shown as messages), and the open integrity cases."""

import re

import pytest
from django.contrib.messages import get_messages
from django.test import Client

from accounts.models import User
from integrity.models import Case, CasePlayer
from tests.accounts.signin import client_sign_in
from tests.web.tour import Tour
from titles.models import PlayerTitle, Qualification, QualificationStatus, TitleStatus

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
