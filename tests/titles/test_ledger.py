"""The qualification ledger: rules as data, recording once per source, withdrawal."""

from collections.abc import Callable
from datetime import date

import pytest
from django.db import IntegrityError, transaction

from accounts.models import Player, User
from core.errors import ConflictError, ServiceError
from titles import services
from titles.models import PlayerTitle, Qualification, QualificationRule

pytestmark = pytest.mark.django_db


def test_default_rules_are_seeded_once_and_admin_edits_survive() -> None:
    assert list(QualificationRule.objects.values_list("key", "confers")) == [
        ("annual_final_champion", "master"),
        ("china_masters", "lifetime"),
        ("monthly_champion", "master"),
        ("national_championship", "lifetime"),
        ("quarterly_champion", "master"),
        ("world_cup_1x", "master"),
        ("world_cup_80x", "master"),
        ("world_cup_8x", "master"),
    ]
    QualificationRule.objects.filter(key="monthly_champion").update(active=False)
    QualificationRule.objects.create(key="weekly_top_1", confers="master")
    services.rules_ensure_defaults()
    assert QualificationRule.objects.count() == 9
    assert QualificationRule.objects.get(key="monthly_champion").active is False


def test_record_returns_none_without_an_active_rule(player: Player) -> None:
    QualificationRule.objects.filter(key="monthly_champion").update(active=False)
    for achievement in ("monthly_champion", "no_such_rule"):
        assert (
            services.achievement_record(
                achievement=achievement,
                player=player,
                on=date(2021, 3, 1),
                source="event:2021-03-M",
                evidence={},
                by=None,
            )
            is None
        )
    assert Qualification.objects.count() == 0
    assert PlayerTitle.objects.count() == 0


def test_a_custom_rule_added_in_the_admin_qualifies(player: Player) -> None:
    QualificationRule.objects.create(key="weekly_top_1", confers="master", description="(2)")
    qualification = services.achievement_record(
        achievement="weekly_top_1",
        player=player,
        on=date(2021, 3, 8),
        source="event:2021-W10-F",
        evidence={"rank": 1},
        by=None,
    )
    assert qualification is not None
    assert (qualification.status, qualification.confers, qualification.rule.key) == (
        "pending",
        "master",
        "weekly_top_1",
    )


def test_the_same_achievement_is_recorded_once(
    player: Player, record: Callable[..., Qualification]
) -> None:
    first = record(player, "event:2021-03-M", date(2021, 3, 1))
    again = services.achievement_record(
        achievement="monthly_champion",
        player=player,
        on=date(2021, 3, 2),
        source="event:2021-03-M",
        evidence={"rank": 1, "score": 1},
        by=None,
    )
    assert again is not None
    assert again.pk == first.pk
    assert (again.on, again.version, again.evidence) == (date(2021, 3, 1), 1, first.evidence)
    assert Qualification.objects.count() == 1


def test_withdrawn_then_achieved_again_is_pending_again(
    player: Player, grant: Callable[..., Qualification], organiser: User
) -> None:
    first = grant(player, "event:2021-03-M", date(2021, 3, 1))
    services.achievement_withdraw(
        source="event:2021-03-M", player=player, by=organiser, reason="game voided"
    )
    services.achievement_withdraw(
        source="event:2021-03-M", player=player, by=organiser, reason="game voided"
    )
    services.achievement_withdraw(source="nothing", player=player, by=organiser, reason="x")
    voided = Qualification.objects.get(pk=first.pk)
    assert (voided.status, voided.version, voided.decision_reason) == ("voided", 3, "game voided")

    again = services.achievement_record(
        achievement="monthly_champion",
        player=player,
        on=date(2021, 3, 1),
        source="event:2021-03-M",
        evidence={"rank": 1},
        by=None,
    )
    assert again is not None
    assert (again.pk, again.status, again.version, again.evidence) == (
        first.pk,
        "pending",
        4,
        {"rank": 1},
    )


def test_manual_entry_needs_a_reason_and_a_past_date(
    freeze: Callable[[date], None], player: Player, reviewer: User
) -> None:
    freeze(date(2021, 12, 1))
    rule = QualificationRule.objects.get(key="national_championship")
    with pytest.raises(ServiceError, match="reason"):
        services.qualification_enter(
            player=player,
            rule=rule,
            on=date(2021, 11, 20),
            source="nc",
            evidence={},
            reason=" ",
            by=reviewer,
        )
    with pytest.raises(ServiceError, match="future"):
        services.qualification_enter(
            player=player,
            rule=rule,
            on=date(2021, 12, 2),
            source="nc",
            evidence={},
            reason="offline final",
            by=reviewer,
        )
    assert Qualification.objects.count() == 0
    entered = services.qualification_enter(
        player=player,
        rule=rule,
        on=date(2021, 11, 20),
        source="nc-2021",
        evidence={"venue": "上海"},
        reason="offline final",
        by=reviewer,
    )
    assert (entered.source, entered.status, entered.evidence) == (
        "manual:nc-2021",
        "pending",
        {"venue": "上海", "reason": "offline final"},
    )
    with pytest.raises(ConflictError):
        services.qualification_enter(
            player=player,
            rule=rule,
            on=date(2021, 11, 20),
            source="nc-2021",
            evidence={},
            reason="again",
            by=reviewer,
        )
    assert Qualification.objects.count() == 1


def test_international_master_never_touches_national_titles(player: Player, reviewer: User) -> None:
    record = services.international_master_enter(
        player=player,
        granted_on=date(2021, 5, 1),
        valid_until=date(2023, 4, 30),
        source="WUF 2021",
        by=reviewer,
    )
    assert (record.granted_on, record.valid_until) == (date(2021, 5, 1), date(2023, 4, 30))
    assert PlayerTitle.objects.count() == 0
    assert Qualification.objects.count() == 0
    with pytest.raises(ConflictError):
        services.international_master_enter(
            player=player,
            granted_on=date(2021, 5, 1),
            valid_until=None,
            source="WUF 2021",
            by=reviewer,
        )
    with pytest.raises(ServiceError, match="before"):
        services.international_master_enter(
            player=player,
            granted_on=date(2021, 5, 1),
            valid_until=date(2021, 4, 1),
            source="other",
            by=reviewer,
        )


@pytest.mark.parametrize(
    ("field", "value", "constraint"),
    [
        ("confers", "grand", "qualification_confers_valid"),
        ("source", "", "qualification_source_given"),
    ],
)
def test_the_ledger_refuses_what_the_replay_cannot_replay(
    player: Player, field: str, value: str, constraint: str
) -> None:
    """The recompute replays ledger rows without the domain's argument checks: the database
    holds them."""
    rule = QualificationRule.objects.get(key="monthly_champion")
    values = {"source": "event:x", "confers": "master", field: value}

    with pytest.raises(IntegrityError, match=constraint), transaction.atomic():
        Qualification.objects.create(player=player, rule=rule, on=date(2021, 3, 31), **values)

    assert not Qualification.objects.exists()
