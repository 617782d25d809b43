"""Four eyes (SPEC §6 "Grants go through review"): the reviewer who entered a qualification
by hand cannot approve it — through the service, the API, the bulk approval or the review
page; another reviewer can. A refused approval writes nothing."""

from collections.abc import Callable
from datetime import date

import pytest
from django.contrib.auth.models import Group
from django.contrib.messages import get_messages
from django.test import Client
from rest_framework.test import APIClient

from accounts.models import Player, User
from accounts.roles import REVIEWER
from core.errors import ConflictError
from flows import grants
from tests.accounts.signin import client_sign_in
from tests.conftest import token_client
from titles import services
from titles.models import PlayerTitle, Qualification, QualificationRule, TitleChange

pytestmark = pytest.mark.django_db


@pytest.fixture
def second_reviewer(reviewer: User) -> User:
    other = User.objects.create_user(username="rev2", password="pw-for-tests-only")
    other.groups.add(Group.objects.get(name=REVIEWER))
    return other


@pytest.fixture
def entered(freeze: Callable[[date], None], player: Player, reviewer: User) -> Qualification:
    """A manual qualification the reviewer ``rev`` entered."""
    freeze(date(2021, 12, 31))
    return services.qualification_enter(
        player=player,
        rule=QualificationRule.objects.get(key="china_masters"),
        on=date(2021, 12, 20),
        source="china-masters-2021",
        evidence={},
        reason="offline final, results sheet on file",
        by=reviewer,
    )


def nothing_written(qualification: Qualification) -> None:
    fresh = Qualification.objects.get(pk=qualification.pk)
    assert (fresh.status, fresh.version, fresh.decided_by) == ("pending", 1, None)
    assert not TitleChange.objects.filter(player=qualification.player).exists()
    assert not PlayerTitle.objects.filter(player=qualification.player, status="lifetime").exists()


def test_the_service_refuses_the_entering_reviewer(
    entered: Qualification, reviewer: User, second_reviewer: User
) -> None:
    with pytest.raises(ConflictError) as refused:
        grants.qualification_approve(
            qualification=entered, by=reviewer, reason="ok", expected_version=1
        )
    assert refused.value.detail == {"reason": "four_eyes"}
    assert "Four eyes" in refused.value.message
    nothing_written(entered)

    approved = grants.qualification_approve(
        qualification=entered, by=second_reviewer, reason="ok", expected_version=1
    )
    assert (approved.status, approved.decided_by) == ("approved", second_reviewer)


def test_the_api_refuses_the_entering_reviewer(
    freeze: Callable[[date], None], player: Player, reviewer_api: APIClient, second_reviewer: User
) -> None:
    freeze(date(2021, 12, 31))
    manual = {
        "player": player.external_id,
        "rule": "china_masters",
        "on": "2021-12-20",
        "source": "china-masters-2021",
        "reason": "offline final, results sheet on file",
    }
    created = reviewer_api.post("/api/titles/qualifications/", manual, format="json")
    assert created.status_code == 201
    entered = Qualification.objects.get(pk=created.json()["id"])
    url = f"/api/titles/qualifications/{entered.pk}/approve/"
    body = {"expected_version": 1, "reason": "checked"}

    refused = reviewer_api.post(url, body, format="json")
    assert refused.status_code == 409
    assert (refused.json()["code"], refused.json()["fields"]) == (
        "conflict",
        {"reason": "four_eyes"},
    )
    nothing_written(entered)

    bulk = reviewer_api.post(
        "/api/titles/qualifications/bulk-approve/",
        {"items": [{"id": entered.pk, "expected_version": 1}]},
        format="json",
    )
    assert bulk.status_code == 200
    assert bulk.json()["approved"] == []
    assert [(r["id"], r["code"]) for r in bulk.json()["refused"]] == [(entered.pk, "conflict")]
    nothing_written(entered)

    other = token_client(second_reviewer).post(url, body, format="json")
    assert other.status_code == 200
    assert other.json()["status"] == "approved"


def test_the_review_page_refuses_the_entering_reviewer(
    entered: Qualification, reviewer: User, second_reviewer: User
) -> None:
    client = Client()
    client_sign_in(client, reviewer)
    response = client.post(
        f"/review/qualifications/{entered.pk}/approve/", {"expected_version": 1, "reason": ""}
    )
    assert response.status_code == 302
    [message] = [str(m) for m in get_messages(response.wsgi_request)]
    assert message.endswith("四眼原则：此资格由您录入，须由另一位审核员批准。")
    nothing_written(entered)

    other = Client()
    client_sign_in(other, second_reviewer)
    other.post(
        f"/review/qualifications/{entered.pk}/approve/", {"expected_version": 1, "reason": ""}
    )
    assert Qualification.objects.get(pk=entered.pk).status == "approved"
