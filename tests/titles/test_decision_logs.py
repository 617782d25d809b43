"""Title decisions as structured log lines (issue 9): written on commit, never for a
decision that was refused or rolled back."""

from collections.abc import Callable
from datetime import date
from typing import Any

import pytest

from accounts.models import Player, User
from core.errors import ConflictError
from flows import grants
from titles import services
from titles.models import Qualification, Revocation

pytestmark = pytest.mark.django_db

Log = list[tuple[str, str, dict[str, Any]]]


def test_approval_and_rejection_are_logged_with_who_and_why(
    player: Player,
    record: Callable[..., Qualification],
    reviewer: User,
    event_log: Log,
    django_capture_on_commit_callbacks: Any,
) -> None:
    first = record(player, "m1", date(2021, 1, 10))
    second = record(player, "m2", date(2021, 2, 10))
    with django_capture_on_commit_callbacks(execute=True):
        grants.qualification_approve(
            qualification=first, by=reviewer, reason="evidence checked", expected_version=1
        )
        services.qualification_reject(
            qualification=second, by=reviewer, reason="wrong player", expected_version=1
        )

    assert event_log == [
        (
            "unotour.titles",
            "qualification_approved",
            {
                "qualification": first.pk,
                "player": player.external_id,
                "source": "m1",
                "on": date(2021, 1, 10),
                "confers": "master",
                "by": "rev",
                "reason": "evidence checked",
            },
        ),
        (
            "unotour.titles",
            "qualification_rejected",
            {
                "qualification": second.pk,
                "player": player.external_id,
                "source": "m2",
                "on": date(2021, 2, 10),
                "confers": "master",
                "by": "rev",
                "reason": "wrong player",
            },
        ),
    ]


def test_a_refused_decision_logs_nothing(
    player: Player,
    record: Callable[..., Qualification],
    reviewer: User,
    event_log: Log,
    django_capture_on_commit_callbacks: Any,
) -> None:
    qualification = record(player, "m1", date(2021, 1, 10))
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(ConflictError):
        grants.qualification_approve(
            qualification=qualification, by=reviewer, reason="late", expected_version=7
        )

    assert event_log == []
    assert Qualification.objects.get(pk=qualification.pk).status == "pending"


def test_revocation_and_restoration_are_logged(
    freeze: Callable[[date], None],
    player: Player,
    grant: Callable[..., Qualification],
    reviewer: User,
    event_log: Log,
    django_capture_on_commit_callbacks: Any,
) -> None:
    freeze(date(2021, 12, 31))
    kept = grant(player, "m1", date(2021, 1, 10))
    event_log.clear()
    with django_capture_on_commit_callbacks(execute=True):
        services.titles_revoke(
            player=player, on=date(2021, 12, 31), by=reviewer, reason="farm", case_ref="case-9"
        )
    revocation = Revocation.objects.get(player=player)
    with django_capture_on_commit_callbacks(execute=True):
        services.titles_restore(
            player=player, revocation=revocation, by=reviewer, reason="appeal upheld"
        )

    assert event_log == [
        (
            "unotour.titles",
            "titles_revoked",
            {
                "player": player.external_id,
                "on": date(2021, 12, 31),
                "revocation": revocation.pk,
                "case": "case-9",
                "voided": [kept.pk],
                "by": "rev",
                "reason": "farm",
            },
        ),
        (
            "unotour.titles",
            "titles_restored",
            {
                "player": player.external_id,
                "revocation": revocation.pk,
                "case": "case-9",
                "restored": [kept.pk],
                "by": "rev",
                "reason": "appeal upheld",
            },
        ),
    ]
