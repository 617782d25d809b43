"""Revocation by a sanction and its reversal on appeal (SPEC §6, §7)."""

from collections.abc import Callable
from datetime import date
from typing import Any

import pytest

from accounts.models import Player, User
from core.errors import ConflictError, ServiceError
from titles import services
from titles.models import (
    REPLAY_KINDS,
    InternationalMaster,
    PlayerTitle,
    Qualification,
    Revocation,
    TitleChange,
    TitleTerm,
)

pytestmark = pytest.mark.django_db


def snapshot(player: Player) -> tuple[Any, ...]:
    title = PlayerTitle.objects.filter(player=player).values(
        "status", "valid_until", "lifetime_since", "terms"
    )
    return (
        list(title),
        list(
            TitleTerm.objects.filter(player=player)
            .order_by("start")
            .values_list("start", "valid_until", "sources", "code", "state")
        ),
        sorted(Qualification.objects.filter(player=player).values_list("source", "status")),
        sorted(
            TitleChange.objects.filter(
                player=player, kind__in=REPLAY_KINDS, retraction__isnull=True
            ).values_list("kind", "on", "source", "valid_until")
        ),
    )


def test_revoke_takes_every_national_title_and_restore_gives_it_back_exactly(
    freeze: Callable[[date], None],
    player: Player,
    grant: Callable[..., Qualification],
    record: Callable[..., Qualification],
    reviewer: User,
) -> None:
    freeze(date(2021, 12, 31))
    grant(player, "m1", date(2021, 1, 10))
    grant(player, "m2", date(2021, 6, 1))
    grant(player, "nc", date(2021, 11, 20), achievement="national_championship")
    record(player, "m3", date(2021, 12, 1))  # pending
    rejected = record(player, "m0", date(2020, 12, 1))
    services.qualification_reject(
        qualification=rejected, by=reviewer, reason="no", expected_version=1
    )
    services.international_master_enter(
        player=player,
        granted_on=date(2021, 5, 1),
        valid_until=None,
        source="WUF",
        by=reviewer,
    )
    before = snapshot(player)
    assert before[0][0]["status"] == "lifetime"

    services.titles_revoke(
        player=player,
        on=date(2021, 12, 15),
        by=reviewer,
        reason="collusion (串谋让分)",
        case_ref="case-7",
    )

    assert PlayerTitle.objects.filter(player=player).values_list(
        "status", "valid_until", "lifetime_since", "terms"
    ).get() == ("none", None, None, [])
    assert sorted(Qualification.objects.filter(player=player).values_list("source", "status")) == [
        ("m0", "rejected"),
        ("m1", "voided"),
        ("m2", "voided"),
        ("m3", "voided"),
        ("nc", "voided"),
    ]
    assert list(TitleTerm.objects.filter(player=player).values_list("state", flat=True)) == [
        "revoked"
    ]
    revocation = Revocation.objects.get(player=player)
    assert revocation.case_ref == "case-7"
    assert InternationalMaster.objects.filter(player=player).count() == 1
    assert list(
        TitleChange.objects.filter(player=player, kind__in=["revoked", "retracted"])
        .order_by("id")
        .values_list("kind", "source")
    ) == [
        ("revoked", "case-7"),
        ("retracted", "m1"),
        ("retracted", "m2"),
        ("retracted", "nc"),
    ]

    services.titles_restore(player=player, revocation=revocation, by=reviewer, reason="appeal won")

    assert snapshot(player) == before
    assert TitleChange.objects.filter(player=player, kind="restored").count() == 1
    with pytest.raises(ConflictError):
        services.titles_restore(player=player, revocation=revocation, by=reviewer, reason="again")


def test_revocation_needs_a_reason_and_writes_nothing_without_one(
    player: Player, grant: Callable[..., Qualification], reviewer: User
) -> None:
    grant(player, "m1", date(2021, 1, 10))
    with pytest.raises(ServiceError):
        services.titles_revoke(player=player, on=date(2021, 2, 1), by=reviewer, reason="")
    assert Revocation.objects.count() == 0
    assert Qualification.objects.get(player=player).status == "approved"


def test_a_revoked_source_is_not_reinstated_by_recording_it_again(
    player: Player, grant: Callable[..., Qualification], reviewer: User
) -> None:
    grant(player, "m1", date(2021, 1, 10))
    services.titles_revoke(player=player, on=date(2021, 2, 1), by=reviewer, reason="farming")
    again = services.achievement_record(
        achievement="monthly_champion",
        player=player,
        on=date(2021, 1, 10),
        source="m1",
        evidence={},
        by=None,
    )
    assert again is not None
    assert again.status == "voided"


def test_a_player_who_never_held_a_title_gets_no_revoked_or_restored_entry(
    freeze: Callable[[date], None],
    player: Player,
    record: Callable[..., Qualification],
    reviewer: User,
) -> None:
    freeze(date(2021, 12, 31))
    pending = record(player, "m3", date(2021, 12, 1))  # pending: no title held

    services.titles_revoke(player=player, on=date(2021, 12, 20), by=reviewer, reason="sanction")

    revocation = Revocation.objects.get(player=player)
    assert revocation.voided == [[pending.pk, "pending"]]
    assert Qualification.objects.get(pk=pending.pk).status == "voided"
    assert not TitleChange.objects.filter(player=player, kind__in=["revoked", "restored"]).exists()

    services.titles_restore(player=player, revocation=revocation, by=reviewer, reason="appeal")

    assert Qualification.objects.get(pk=pending.pk).status == "pending"
    assert not TitleChange.objects.filter(player=player, kind__in=["revoked", "restored"]).exists()
