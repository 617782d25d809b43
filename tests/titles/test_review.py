"""Review: optimistic locking, held players, audits, bulk and automatic approval."""

import threading
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

import pytest
from django.db import close_old_connections, connection

from accounts.models import Player, User
from core.errors import ConflictError
from flows import grants
from titles import selectors, services
from titles.models import PlayerTitle, Qualification, TitleChange
from titles.services import review

pytestmark = pytest.mark.django_db


def test_a_stale_version_is_a_conflict_and_writes_nothing(
    freeze: Callable[[date], None],
    player: Player,
    record: Callable[..., Qualification],
    reviewer: User,
) -> None:
    freeze(date(2021, 6, 1))
    pending = record(player, "event:2021-03-M", date(2021, 3, 1))
    grants.qualification_approve(
        qualification=pending, by=reviewer, reason="ok", expected_version=1
    )
    with pytest.raises(ConflictError) as refused:
        services.qualification_reject(
            qualification=pending, by=reviewer, reason="late look", expected_version=1
        )
    assert refused.value.detail == {"reason": "stale", "status": "approved", "version": 2}
    row = Qualification.objects.get(pk=pending.pk)
    assert (row.status, row.version, row.decision_reason) == ("approved", 2, "ok")
    assert TitleChange.objects.count() == 1


def test_held_player_cannot_be_approved(
    monkeypatch: pytest.MonkeyPatch,
    player: Player,
    record: Callable[..., Qualification],
    reviewer: User,
) -> None:
    pending = record(player, "event:2021-03-M", date(2021, 3, 1))
    monkeypatch.setattr(review, "player_is_held", lambda p: p.pk == player.pk)

    [item] = grants.review_items(list(selectors.review_queue()))
    assert (item.qualification.pk, item.held, item.audited) == (pending.pk, True, True)
    with pytest.raises(ConflictError) as refused:
        grants.qualification_approve(
            qualification=pending, by=reviewer, reason="ok", expected_version=1
        )
    assert refused.value.detail == {"reason": "held"}
    row = Qualification.objects.get(pk=pending.pk)
    assert (row.status, row.version, row.decided_by) == ("pending", 1, None)
    assert PlayerTitle.objects.get(player=player).status == "none"
    assert TitleChange.objects.count() == 0

    rejected = services.qualification_reject(
        qualification=pending, by=reviewer, reason="cheating confirmed", expected_version=1
    )
    assert (rejected.status, rejected.version) == ("rejected", 2)


def test_grant_not_cleared_by_its_audit_cannot_be_approved(
    monkeypatch: pytest.MonkeyPatch,
    player: Player,
    record: Callable[..., Qualification],
    reviewer: User,
) -> None:
    pending = record(player, "event:2021-03-M", date(2021, 3, 1))
    monkeypatch.setattr(grants, "grant_audit_is_clean", lambda q: False)
    with pytest.raises(ConflictError) as refused:
        grants.qualification_approve(
            qualification=pending, by=reviewer, reason="ok", expected_version=1
        )
    assert refused.value.detail == {"reason": "audit"}
    assert Qualification.objects.get(pk=pending.pk).status == "pending"


def test_held_hook_is_false_without_an_open_integrity_case(player: Player) -> None:
    assert services.player_is_held(player) is False


def test_bulk_approve_decides_each_and_lists_refusals(
    monkeypatch: pytest.MonkeyPatch,
    make_player: Callable[..., Player],
    record: Callable[..., Qualification],
    reviewer: User,
) -> None:
    clean, held = make_player(), make_player()
    a = record(clean, "event:2021-01-M", date(2021, 1, 1))
    b = record(clean, "event:2021-02-M", date(2021, 2, 1))
    c = record(held, "event:2021-02-M", date(2021, 2, 1))
    monkeypatch.setattr(review, "player_is_held", lambda p: p.pk == held.pk)

    outcome = grants.qualifications_bulk_approve(
        items=[(a.pk, 1), (b.pk, 7), (c.pk, 1), (999_999, 1)], by=reviewer, reason="batch"
    )

    assert outcome.approved == [a.pk]
    assert [(pk, code) for pk, code, _ in outcome.refused] == [
        (b.pk, "conflict"),
        (c.pk, "conflict"),
        (999_999, "not_found"),
    ]
    assert dict(Qualification.objects.values_list("pk", "status")) == {
        a.pk: "approved",
        b.pk: "pending",
        c.pk: "pending",
    }


def test_auto_approval_is_off_by_default_and_skips_held_and_recent(
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    freeze: Callable[[date], None],
    make_player: Callable[..., Player],
    record: Callable[..., Qualification],
) -> None:
    clean, held = make_player(), make_player()
    old = record(clean, "event:2021-01-M", date(2021, 1, 1))
    held_grant = record(held, "event:2021-01-M", date(2021, 1, 1))
    recent = record(clean, "event:2021-02-M", date(2021, 2, 1))
    now = old.created_at
    Qualification.objects.filter(pk__in=[old.pk, held_grant.pk]).update(
        created_at=now - timedelta(days=8)
    )
    monkeypatch.setattr(review, "player_is_held", lambda p: p.pk == held.pk)
    # Every event audited clean: the audit's side is in tests/flows/test_grants.py.
    monkeypatch.setattr(grants, "grant_audit_completed", lambda q: True)

    assert settings.TITLES_AUTO_APPROVE_AFTER_DAYS is None
    assert grants.qualifications_auto_approve() == 0
    settings.TITLES_AUTO_APPROVE_AFTER_DAYS = 7
    assert grants.qualifications_auto_approve() == 1
    assert grants.qualifications_auto_approve() == 0
    assert dict(Qualification.objects.values_list("pk", "status")) == {
        old.pk: "approved",
        held_grant.pk: "pending",
        recent.pk: "pending",
    }
    approved = Qualification.objects.get(pk=old.pk)
    assert (approved.decided_by, approved.decision_reason) == (
        None,
        "auto-approved: clean audit, no objection within 7 days",
    )


def test_a_rejection_can_be_reversed_by_approving(
    freeze: Callable[[date], None],
    player: Player,
    record: Callable[..., Qualification],
    reviewer: User,
) -> None:
    freeze(date(2021, 6, 1))
    pending = record(player, "event:2021-03-M", date(2021, 3, 1))
    services.qualification_reject(
        qualification=pending, by=reviewer, reason="looked odd", expected_version=1
    )
    approved = grants.qualification_approve(
        qualification=pending, by=reviewer, reason="audit cleared it", expected_version=2
    )
    assert (approved.status, approved.version) == ("approved", 3)
    assert PlayerTitle.objects.get(player=player).valid_until == date(2022, 3, 1)


@pytest.mark.django_db(transaction=True)
def test_two_reviewers_deciding_at_once_one_wins_one_conflicts(
    freeze: Callable[[date], None],
    make_player: Callable[..., Player],
    record: Callable[..., Qualification],
    roles: None,
) -> None:
    freeze(date(2021, 6, 1))
    first = User.objects.create_user(username="rev1")
    second = User.objects.create_user(username="rev2")
    player = make_player()
    pending = record(player, "event:2021-03-M", date(2021, 3, 1))
    barrier = threading.Barrier(2)
    outcomes: dict[str, str] = {}

    def decide(user: User, approve: bool) -> None:
        try:
            barrier.wait(timeout=10)
            decide_with = grants.qualification_approve if approve else services.qualification_reject
            decide_with(
                qualification=Qualification.objects.get(pk=pending.pk),
                by=user,
                reason=f"decided by {user.username}",
                expected_version=1,
            )
            outcomes[user.username] = "decided"
        except ConflictError as exc:
            outcomes[user.username] = exc.detail["reason"]
        finally:
            close_old_connections()
            connection.close()

    threads = [
        threading.Thread(target=decide, args=(first, True)),
        threading.Thread(target=decide, args=(second, False)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert sorted(outcomes.values()) == ["decided", "stale"]
    winner = next(name for name, outcome in outcomes.items() if outcome == "decided")
    row = Qualification.objects.get(pk=pending.pk)
    assert row.version == 2
    assert row.decided_by is not None
    assert row.decided_by.username == winner
    assert row.status == ("approved" if winner == "rev1" else "rejected")
    assert TitleChange.objects.count() == (1 if winner == "rev1" else 0)


@pytest.mark.parametrize(("action", "status"), [("approve", "approved"), ("reject", "rejected")])
def test_the_admin_actions_decide_through_the_services(
    admin_client: Any,
    player: Player,
    record: Callable[..., Qualification],
    action: str,
    status: str,
) -> None:
    pending = record(player, "m", date(2021, 3, 1))

    response = admin_client.post(
        "/admin/titles/qualification/",
        {"action": action, "_selected_action": [pending.pk]},
        follow=True,
    )

    assert response.status_code == 200
    decided = Qualification.objects.get(pk=pending.pk)
    assert (decided.status, decided.decision_reason) == (status, f"{status} in the admin")
