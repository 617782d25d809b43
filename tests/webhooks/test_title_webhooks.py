"""Title webhooks (issue #7): each history row of a subscribed kind, in its transaction.

granted / lifetime → ``title.granted``, extended → ``title.extended``, lapsed →
``title.lapsed``, revoked → ``title.revoked`` (``flows.titles.WEBHOOK_OF_KIND``).
"""

import json
from collections.abc import Callable
from datetime import date
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from accounts.models import Player, User
from flows import grants
from flows.titles import title_changes_emit
from tests.titles import conftest as titles_fixtures
from titles import services
from titles.announce import title_changes_written
from titles.models import PlayerTitle, Qualification, QualificationRule, TitleChange
from titles.recompute import titles_recompute_all
from webhooks.models import Delivery, Subscription

pytestmark = pytest.mark.django_db

# The titles tests' fixtures: a frozen tour day, players, grants through the services.
freeze, make_player, player = (
    titles_fixtures.freeze,
    titles_fixtures.make_player,
    titles_fixtures.player,
)
record, grant = titles_fixtures.record, titles_fixtures.grant

TITLE_EVENTS = ["title.granted", "title.extended", "title.lapsed", "title.revoked"]


@pytest.fixture
def partner(db: Any) -> Subscription:
    return Subscription.objects.create(
        name="partner", url="https://partner.example/hooks", events=TITLE_EVENTS
    )


def sent() -> list[tuple[str, dict[str, Any]]]:
    """(event type, payload) of every delivery, oldest first."""
    return [
        (event_type, json.loads(body)["data"])
        for event_type, body in Delivery.objects.order_by("id").values_list("event_type", "body")
    ]


def change_id(player: Player, kind: str, source: str) -> int:
    return TitleChange.objects.get(player=player, kind=kind, source=source).pk


def who(player: Player) -> dict[str, str]:
    return {"external_id": player.external_id, "name": player.name}


def test_approval_sends_one_granted_with_the_exact_payload(
    freeze: Callable[[date], None],
    partner: Subscription,
    player: Player,
    grant: Callable[..., Qualification],
) -> None:
    freeze(date(2021, 3, 1))
    grant(player, "event:2021-02-M", date(2021, 2, 1))

    assert sent() == [
        (
            "title.granted",
            {
                "change_id": change_id(player, "granted", "event:2021-02-M"),
                "on": "2021-02-01",
                "player": {"external_id": "p0000001", "name": "小猴子"},
                "title": "master",
                "valid_until": "2022-02-01",
                "sources": ["event:2021-02-M"],
            },
        )
    ]
    assert Delivery.objects.get().subscription == partner


def test_a_second_qualification_sends_one_extended(
    freeze: Callable[[date], None],
    partner: Subscription,
    player: Player,
    grant: Callable[..., Qualification],
) -> None:
    freeze(date(2021, 7, 1))
    grant(player, "m1", date(2021, 2, 1))
    grant(player, "m2", date(2021, 6, 1))

    assert [event for event, _ in sent()] == ["title.granted", "title.extended"]
    assert sent()[1][1] == {
        "change_id": change_id(player, "extended", "m2"),
        "on": "2021-06-01",
        "player": who(player),
        "title": "master",
        "valid_until": "2023-02-01",
        "sources": ["m1", "m2"],
    }


def test_lifetime_is_sent_as_granted(
    freeze: Callable[[date], None],
    partner: Subscription,
    player: Player,
    grant: Callable[..., Qualification],
) -> None:
    freeze(date(2021, 12, 1))
    grant(player, "m1", date(2021, 2, 1))
    grant(player, "nc", date(2021, 11, 20), achievement="national_championship")

    assert sent()[1] == (
        "title.granted",
        {
            "change_id": change_id(player, "lifetime", "nc"),
            "on": "2021-11-20",
            "player": who(player),
            "title": "lifetime",
            "valid_until": None,
            "sources": ["nc"],
        },
    )
    assert len(sent()) == 2


def test_a_recompute_after_the_end_sends_the_lapse_then_the_new_term(
    freeze: Callable[[date], None],
    partner: Subscription,
    player: Player,
    grant: Callable[..., Qualification],
) -> None:
    freeze(date(2021, 3, 1))
    grant(player, "m1", date(2021, 2, 1))
    freeze(date(2022, 6, 1))  # the term ended on 2022-02-01; no sweep ran
    grant(player, "m2", date(2022, 5, 1))

    assert sent()[1:] == [
        (
            "title.lapsed",
            {
                "change_id": change_id(player, "lapsed", "m1"),
                "on": "2022-02-02",
                "player": who(player),
                "title": "master",
                "valid_until": "2022-02-01",
                "sources": ["m1"],
            },
        ),
        (
            "title.granted",
            {
                "change_id": change_id(player, "granted", "m2"),
                "on": "2022-05-01",
                "player": who(player),
                "title": "master",
                "valid_until": "2023-05-01",
                "sources": ["m2"],
            },
        ),
    ]


def test_the_expiry_sweep_sends_one_lapsed(
    freeze: Callable[[date], None],
    partner: Subscription,
    player: Player,
    grant: Callable[..., Qualification],
) -> None:
    freeze(date(2021, 7, 1))
    grant(player, "m1", date(2021, 2, 1))
    grant(player, "m2", date(2021, 6, 1))
    freeze(date(2023, 2, 2))

    assert services.titles_expire() == 1
    assert services.titles_expire() == 0  # idempotent: no second lapse, no second webhook

    assert sent()[2:] == [
        (
            "title.lapsed",
            {
                "change_id": change_id(player, "lapsed", "m2"),
                "on": "2023-02-02",
                "player": who(player),
                "title": "master",
                "valid_until": "2023-02-01",
                "sources": ["m1", "m2"],
            },
        )
    ]


def test_a_revocation_sends_one_revoked_with_the_titles_taken(
    freeze: Callable[[date], None],
    partner: Subscription,
    player: Player,
    grant: Callable[..., Qualification],
    reviewer: User,
) -> None:
    freeze(date(2021, 7, 1))
    grant(player, "m1", date(2021, 2, 1))
    grant(player, "m2", date(2021, 6, 1))

    services.titles_revoke(
        player=player, on=date(2021, 6, 30), by=reviewer, reason="collusion", case_ref="IC-7"
    )

    assert sent()[2:] == [
        (
            "title.revoked",
            {
                "change_id": change_id(player, "revoked", "IC-7"),
                "on": "2021-06-30",
                "player": who(player),
                "title": "master",
                "valid_until": "2023-02-01",
                "sources": ["IC-7"],
            },
        )
    ]


def test_a_rolled_back_change_sends_nothing(
    freeze: Callable[[date], None],
    partner: Subscription,
    player: Player,
    record: Callable[..., Qualification],
    reviewer: User,
    django_capture_on_commit_callbacks: Any,
) -> None:
    freeze(date(2021, 3, 1))
    pending = record(player, "m1", date(2021, 2, 1))

    inside: list[int] = []

    def approve_then_fail() -> None:
        with transaction.atomic():
            grants.qualification_approve(
                qualification=pending, by=reviewer, reason="ok", expected_version=1
            )
            inside.append(Delivery.objects.count())
            raise RuntimeError("the caller fails")

    with (
        django_capture_on_commit_callbacks(execute=False) as callbacks,
        pytest.raises(RuntimeError, match="the caller fails"),
    ):
        approve_then_fail()

    assert inside == [1]  # written inside the transaction …
    assert (Delivery.objects.count(), len(callbacks)) == (0, 0)  # … and rolled back with it
    assert TitleChange.objects.count() == 0
    assert Qualification.objects.get().status == "pending"


@pytest.mark.parametrize("events", [[], ["event.finalised"]])
def test_without_a_subscription_one_check_and_nothing_sent(
    events: list[str],
    freeze: Callable[[date], None],
    player: Player,
    record: Callable[..., Qualification],
    reviewer: User,
) -> None:
    if events:
        Subscription.objects.create(name="finals", url="https://x.example/h", events=events)
    Subscription.objects.create(
        name="off", url="https://y.example/h", events=TITLE_EVENTS, active=False
    )
    freeze(date(2021, 3, 1))
    pending = record(player, "m1", date(2021, 2, 1))

    with CaptureQueriesContext(connection) as queries:
        grants.qualification_approve(
            qualification=pending, by=reviewer, reason="ok", expected_version=1
        )

    webhooks = [q["sql"] for q in queries.captured_queries if "webhooks_" in q["sql"]]
    assert len(webhooks) == 1
    assert "webhooks_subscription" in webhooks[0]
    assert Delivery.objects.count() == 0
    assert TitleChange.objects.filter(kind="granted").count() == 1


def test_recompute_all_announces_an_imported_ledger(
    freeze: Callable[[date], None],
    partner: Subscription,
    make_player: Callable[..., Player],
) -> None:
    freeze(date(2021, 7, 1))
    rule = QualificationRule.objects.get(key="monthly_champion")
    players = [make_player(), make_player()]
    for player in players:  # a bulk import: approved rows, no title row
        for source, on in (("m1", date(2021, 2, 1)), ("m2", date(2021, 6, 1))):
            Qualification.objects.create(
                player=player, source=source, rule=rule, on=on, confers="master", status="approved"
            )

    assert titles_recompute_all(chunk=1) == 2

    assert PlayerTitle.objects.count() == 2
    assert [(event, data["player"], data["change_id"]) for event, data in sent()] == [
        (event, who(player), change_id(player, kind, source))
        for player in players
        for event, kind, source in (
            ("title.granted", "granted", "m1"),
            ("title.extended", "extended", "m2"),
        )
    ]
    titles_recompute_all()  # nothing changed: nothing written, nothing sent
    assert len(sent()) == 4


def test_titles_announce_and_the_flow_sends_without_a_receiver_nothing_is_sent(
    freeze: Callable[[date], None],
    partner: Subscription,
    player: Player,
    grant: Callable[..., Qualification],
) -> None:
    """The titles app knows no webhook: it announces its history rows
    (titles.announce.title_changes_written) and flows.titles sends them."""
    freeze(date(2021, 3, 1))
    uid = "flows.titles.title_changes_emit"
    assert title_changes_written.disconnect(dispatch_uid=uid)
    try:
        heard: list[list[Any]] = []

        def listen(sender: Any, *, changes: list[Any], **kwargs: Any) -> None:
            heard.append(changes)

        title_changes_written.connect(listen, weak=False)
        try:
            grant(player, "m1", date(2021, 2, 1))
        finally:
            title_changes_written.disconnect(listen)
    finally:
        title_changes_written.connect(title_changes_emit, dispatch_uid=uid)

    granted = TitleChange.objects.get(kind="granted")
    assert heard == [[(granted.pk, player.pk, "granted", date(2021, 2, 1), date(2022, 2, 1), "m1")]]
    assert Delivery.objects.count() == 0
    grant(player, "m2", date(2021, 2, 15))  # connected again: sent
    assert [event for event, _ in sent()] == ["title.extended"]
