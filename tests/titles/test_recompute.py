"""SPEC §6 decisions through the services: materialised state and history, exactly."""

from collections.abc import Callable
from datetime import date
from typing import Any

import pytest

from accounts.models import Player, User
from flows import grants
from titles import services
from titles.domain.codes import term_code
from titles.models import (
    PlayerTitle,
    Qualification,
    QualificationRule,
    TitleChange,
    TitleTerm,
)
from titles.recompute import titles_recompute_all

pytestmark = pytest.mark.django_db

A, B, C = "event:2020-01-M", "event:2020-Q2-F", "event:2021-03-M"


def state(player: Player) -> tuple[Any, ...]:
    title = PlayerTitle.objects.get(player=player)
    return (
        title.status,
        title.valid_until,
        title.lifetime_since,
        [(t["start"], t["valid_until"], t["sources"]) for t in title.terms],
    )


def terms(player: Player) -> list[tuple[Any, ...]]:
    return list(
        TitleTerm.objects.filter(player=player)
        .order_by("start")
        .values_list("start", "valid_until", "sources", "state")
    )


def history(player: Player, after: int = 0) -> list[tuple[Any, ...]]:
    return list(
        TitleChange.objects.filter(player=player, id__gt=after)
        .order_by("id")
        .values_list("kind", "on", "source", "valid_until", "by__username", "reason")
    )


def last_change_id() -> int:
    return TitleChange.objects.order_by("-id").values_list("id", flat=True).first() or 0


def test_only_approved_qualifications_count(
    freeze: Callable[[date], None],
    player: Player,
    record: Callable[..., Qualification],
    reviewer: User,
) -> None:
    freeze(date(2021, 6, 1))
    pending = record(player, C, date(2021, 3, 1))
    assert state(player) == ("none", None, None, [])
    assert TitleTerm.objects.count() == 0
    assert TitleChange.objects.count() == 0

    grants.qualification_approve(
        qualification=pending, by=reviewer, reason="evidence checked", expected_version=1
    )
    assert state(player) == ("master", date(2022, 3, 1), None, [("2021-03-01", "2022-03-01", [C])])
    assert terms(player) == [(date(2021, 3, 1), date(2022, 3, 1), [C], "current")]
    assert history(player) == [
        ("granted", date(2021, 3, 1), C, date(2022, 3, 1), "rev", "evidence checked")
    ]
    record(player, "event:2021-05-M", date(2021, 5, 1))  # pending: changes nothing
    assert state(player)[1] == date(2022, 3, 1)
    assert TitleChange.objects.count() == 1


def test_rejecting_a_middle_qualification_recomputes_everything_after_it(
    freeze: Callable[[date], None],
    player: Player,
    grant: Callable[..., Qualification],
    reviewer: User,
) -> None:
    freeze(date(2021, 6, 1))
    grant(player, A, date(2020, 1, 5))
    middle = grant(player, B, date(2020, 6, 1))
    grant(player, C, date(2021, 3, 1))
    assert state(player) == (
        "master",
        date(2023, 1, 5),
        None,
        [("2020-01-05", "2023-01-05", [A, B, C])],
    )
    code = TitleTerm.objects.get(player=player).code
    mark = last_change_id()

    services.qualification_reject(
        qualification=middle, by=reviewer, reason="collusion found", expected_version=2
    )

    assert Qualification.objects.get(pk=middle.pk).status == "rejected"
    assert state(player) == (
        "master",
        date(2022, 3, 1),
        None,
        [("2020-01-05", "2021-01-05", [A]), ("2021-03-01", "2022-03-01", [C])],
    )
    assert terms(player) == [
        (date(2020, 1, 5), date(2021, 1, 5), [A], "lapsed"),
        (date(2021, 3, 1), date(2022, 3, 1), [C], "current"),
    ]
    assert TitleTerm.objects.get(player=player, start=date(2020, 1, 5)).code == code
    why = "collusion found"
    assert history(player, after=mark) == [
        ("retracted", date(2020, 6, 1), B, date(2022, 1, 5), "rev", why),
        ("retracted", date(2021, 3, 1), C, date(2023, 1, 5), "rev", why),
        ("lapsed", date(2021, 1, 6), A, date(2021, 1, 5), "rev", why),
        ("granted", date(2021, 3, 1), C, date(2022, 3, 1), "rev", why),
    ]


def test_a_voided_qualification_takes_its_extension_with_it(
    freeze: Callable[[date], None],
    player: Player,
    grant: Callable[..., Qualification],
    organiser: User,
) -> None:
    freeze(date(2021, 6, 1))
    grant(player, A, date(2020, 1, 5))
    grant(player, "event:2020-12-M", date(2020, 12, 1))
    assert state(player)[1] == date(2022, 1, 5)
    mark = last_change_id()

    services.achievement_withdraw(source=A, player=player, by=organiser, reason="event corrected")

    assert Qualification.objects.get(player=player, source=A).status == "voided"
    assert state(player) == (
        "master",
        date(2021, 12, 1),
        None,
        [("2020-12-01", "2021-12-01", ["event:2020-12-M"])],
    )
    assert terms(player) == [
        (date(2020, 1, 5), date(2022, 1, 5), [A, "event:2020-12-M"], "void"),
        (date(2020, 12, 1), date(2021, 12, 1), ["event:2020-12-M"], "current"),
    ]
    why = "event corrected"
    assert history(player, after=mark) == [
        ("retracted", date(2020, 1, 5), A, date(2021, 1, 5), "org", why),
        ("retracted", date(2020, 12, 1), "event:2020-12-M", date(2022, 1, 5), "org", why),
        ("granted", date(2020, 12, 1), "event:2020-12-M", date(2021, 12, 1), "org", why),
    ]


def test_a_late_earlier_dated_result_merges_two_terms(
    freeze: Callable[[date], None], player: Player, grant: Callable[..., Qualification]
) -> None:
    freeze(date(2021, 6, 1))
    grant(player, "x", date(2020, 1, 10))
    grant(player, "z", date(2021, 3, 1))
    assert terms(player) == [
        (date(2020, 1, 10), date(2021, 1, 10), ["x"], "lapsed"),
        (date(2021, 3, 1), date(2022, 3, 1), ["z"], "current"),
    ]
    mark = last_change_id()

    grant(player, "y", date(2020, 12, 1))

    assert state(player) == (
        "master",
        date(2023, 1, 10),
        None,
        [("2020-01-10", "2023-01-10", ["x", "y", "z"])],
    )
    assert terms(player) == [
        (date(2020, 1, 10), date(2023, 1, 10), ["x", "y", "z"], "current"),
        (date(2021, 3, 1), date(2022, 3, 1), ["z"], "void"),
    ]
    why = "evidence checked"
    assert history(player, after=mark) == [
        ("retracted", date(2021, 1, 11), "x", date(2021, 1, 10), "rev", why),
        ("retracted", date(2021, 3, 1), "z", date(2022, 3, 1), "rev", why),
        ("extended", date(2020, 12, 1), "y", date(2022, 1, 10), "rev", why),
        ("extended", date(2021, 3, 1), "z", date(2023, 1, 10), "rev", why),
    ]


def test_two_on_one_day_grant_then_extend_and_29_february_ends_on_28th(
    freeze: Callable[[date], None], player: Player, grant: Callable[..., Qualification]
) -> None:
    freeze(date(2020, 3, 1))
    grant(player, "wc-80x", date(2020, 2, 29), achievement="world_cup_80x")
    assert state(player)[1] == date(2021, 2, 28)
    grant(player, "wc-8x", date(2020, 2, 29), achievement="world_cup_8x")
    assert state(player) == (
        "master",
        date(2022, 2, 28),
        None,
        [("2020-02-29", "2022-02-28", ["wc-80x", "wc-8x"])],
    )


def test_lifetime_needs_a_valid_master_unless_the_rule_says_otherwise(
    freeze: Callable[[date], None],
    make_player: Callable[..., Player],
    grant: Callable[..., Qualification],
) -> None:
    freeze(date(2021, 12, 31))
    holder, outsider, invited = make_player(), make_player(), make_player()
    grant(holder, "m", date(2021, 1, 10))
    grant(holder, "nc", date(2021, 11, 20), achievement="national_championship")
    assert state(holder) == (
        "lifetime",
        date(2022, 1, 10),
        date(2021, 11, 20),
        [("2021-01-10", "2022-01-10", ["m"])],
    )
    assert history(holder)[-1][:3] == ("lifetime", date(2021, 11, 20), "nc")

    grant(outsider, "nc", date(2021, 11, 20), achievement="national_championship")
    assert state(outsider) == ("none", None, None, [])
    assert list(TitleChange.objects.filter(player=outsider).values_list("kind", "on", "note")) == [
        ("ignored", date(2021, 11, 20), "no valid Master title on that day")
    ]

    QualificationRule.objects.filter(key="china_masters").update(requires_valid_master=False)
    grant(invited, "cm", date(2021, 12, 1), achievement="china_masters")
    assert state(invited) == ("lifetime", None, date(2021, 12, 1), [])


def test_recompute_with_no_change_writes_nothing(
    freeze: Callable[[date], None],
    make_player: Callable[..., Player],
    grant: Callable[..., Qualification],
    django_assert_max_num_queries: Any,
) -> None:
    freeze(date(2021, 6, 1))
    first, second = make_player(), make_player()
    grant(first, "x", date(2020, 1, 10))
    grant(first, "z", date(2021, 3, 1))
    grant(second, "y", date(2021, 5, 1))
    before = (
        list(PlayerTitle.objects.order_by("pk").values()),
        list(TitleTerm.objects.order_by("pk").values()),
        list(TitleChange.objects.order_by("pk").values()),
    )
    assert titles_recompute_all(reason="again") == 2
    assert titles_recompute_all(reason="again", chunk=1) == 2
    after = (
        list(PlayerTitle.objects.order_by("pk").values()),
        list(TitleTerm.objects.order_by("pk").values()),
        list(TitleChange.objects.order_by("pk").values()),
    )
    assert after == before


def test_bulk_recompute_materialises_the_ledger_like_the_services(
    freeze: Callable[[date], None],
    make_player: Callable[..., Player],
    grant: Callable[..., Qualification],
) -> None:
    freeze(date(2021, 6, 1))
    first, second = make_player(), make_player()
    grant(first, "x", date(2020, 1, 10))
    grant(first, "z", date(2021, 3, 1))
    grant(second, "y", date(2021, 5, 1))
    expected = (state(first), state(second), terms(first), terms(second))
    PlayerTitle.objects.all().delete()
    TitleTerm.objects.all().delete()
    TitleChange.objects.all().delete()

    assert titles_recompute_all(reason="rebuild") == 2

    assert (state(first), state(second), terms(first), terms(second)) == expected
    assert TitleTerm.objects.get(player=second).code == term_code(
        second.external_id, date(2021, 5, 1)
    )
    assert history(first) == [
        ("granted", date(2020, 1, 10), "x", date(2021, 1, 10), None, "rebuild"),
        ("lapsed", date(2021, 1, 11), "x", date(2021, 1, 10), None, "rebuild"),
        ("granted", date(2021, 3, 1), "z", date(2022, 3, 1), None, "rebuild"),
    ]
