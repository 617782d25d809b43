"""The bulk recompute (titles.recompute.titles_recompute_all): an unchanged player is skipped
by fingerprint without reading their terms or history; a day that changes a term's state,
or an unknown fingerprint, still goes through the full comparison; a player another writer
materialised after the bulk read is left as that writer wrote it."""

from collections.abc import Callable
from datetime import date
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import Player, User
from flows import grants
from titles import recompute, replaying, writing
from titles.models import PlayerTitle, Qualification, TitleChange, TitleTerm
from titles.recompute import fingerprint, player_history, titles_recompute_all

from .connections import backends

pytestmark = pytest.mark.django_db


def dump() -> tuple[list[Any], ...]:
    return (
        list(PlayerTitle.objects.order_by("pk").values()),
        list(TitleTerm.objects.order_by("pk").values()),
        list(TitleChange.objects.order_by("pk").values()),
    )


def test_the_services_store_the_fingerprint_of_the_replay(
    freeze: Callable[[date], None], player: Player, grant: Callable[..., Qualification]
) -> None:
    freeze(date(2021, 6, 1))
    grant(player, "x", date(2020, 1, 10))
    first = PlayerTitle.objects.get(player=player).fingerprint
    grant(player, "z", date(2021, 3, 1))

    stored = PlayerTitle.objects.get(player=player).fingerprint
    assert stored == fingerprint(player_history(player.pk))
    assert stored != first


def test_an_unchanged_player_is_skipped_without_reading_terms_or_history(
    freeze: Callable[[date], None],
    make_player: Callable[..., Player],
    grant: Callable[..., Qualification],
) -> None:
    freeze(date(2021, 6, 1))
    first, second = make_player(), make_player()
    grant(first, "x", date(2020, 1, 10))
    grant(first, "z", date(2021, 3, 1))
    grant(second, "y", date(2021, 5, 1))
    before = dump()

    with CaptureQueriesContext(connection) as captured:
        assert titles_recompute_all(reason="again") == 2

    assert dump() == before
    read = " ".join(query["sql"] for query in captured.captured_queries)
    assert "titles_titlechange" not in read
    assert '"titles_titleterm"."sources"' not in read


def test_a_term_that_ended_since_is_lapsed_by_the_bulk_recompute(
    freeze: Callable[[date], None], player: Player, grant: Callable[..., Qualification]
) -> None:
    freeze(date(2021, 6, 1))
    grant(player, "m", date(2021, 3, 1))
    stored = PlayerTitle.objects.get(player=player).fingerprint

    freeze(date(2022, 3, 2))
    assert titles_recompute_all(reason="nightly") == 1

    title = PlayerTitle.objects.get(player=player)
    assert (title.status, title.fingerprint) == ("lapsed", stored)
    assert list(TitleTerm.objects.values_list("state", flat=True)) == ["lapsed"]
    assert list(
        TitleChange.objects.order_by("id").values_list("kind", "on", "valid_until", "reason")
    ) == [
        ("granted", date(2021, 3, 1), date(2022, 3, 1), "evidence checked"),
        ("lapsed", date(2022, 3, 2), date(2022, 3, 1), "nightly"),
    ]
    after = dump()
    titles_recompute_all(reason="nightly")
    assert dump() == after


def test_an_unknown_fingerprint_is_compared_and_only_the_fingerprint_written(
    freeze: Callable[[date], None], player: Player, grant: Callable[..., Qualification]
) -> None:
    freeze(date(2021, 6, 1))
    grant(player, "m", date(2021, 3, 1))
    stored = PlayerTitle.objects.get(player=player).fingerprint
    PlayerTitle.objects.update(fingerprint=None)
    before = dump()

    titles_recompute_all(reason="again")

    after = dump()
    assert PlayerTitle.objects.get(player=player).fingerprint == stored
    before[0][0]["fingerprint"] = stored
    assert after == before


def test_a_player_materialised_after_the_read_is_left_to_its_writer(
    freeze: Callable[[date], None],
    player: Player,
    record: Callable[..., Qualification],
    reviewer: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    freeze(date(2021, 6, 1))
    pending = record(player, "m", date(2021, 3, 1))
    PlayerTitle.objects.update(fingerprint=None)  # so the bulk recompute compares the player
    plan = replaying.plan

    def plan_then_approve(read: Any, today: date) -> Any:
        planned = plan(read, today)  # from the qualifications as read: none approved
        monkeypatch.setattr(recompute, "plan", plan)  # the approval recomputes too
        grants.qualification_approve(
            qualification=pending, by=reviewer, reason="meanwhile", expected_version=1
        )
        return planned

    monkeypatch.setattr(recompute, "plan", plan_then_approve)
    titles_recompute_all(reason="bulk")

    title = PlayerTitle.objects.get(player=player)
    assert (title.status, title.fingerprint) == ("master", fingerprint(player_history(player.pk)))
    assert list(TitleTerm.objects.values_list("start", "state")) == [(date(2021, 3, 1), "current")]
    assert list(TitleChange.objects.values_list("kind", "reason")) == [("granted", "meanwhile")]


@pytest.mark.django_db(transaction=True)
def test_the_ledger_is_streamed_and_the_writes_commit_between_the_fetches(
    freeze: Callable[[date], None],
    make_player: Callable[..., Player],
    grant: Callable[..., Qualification],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Outside a transaction (autocommit, as the nightly job runs): the ledger is streamed two
    # rows at a time through the ORM's iterator on this one connection (a server-side cursor
    # where the settings allow one; the test settings stream client-side), with one write
    # transaction per range of players.
    monkeypatch.setattr(recompute, "STREAM_CHUNK", 2)
    freeze(date(2021, 6, 1))
    players = [make_player() for _ in range(5)]
    for n, player in enumerate(players):
        grant(player, f"a{n}", date(2020, 1, 10))
        grant(player, f"b{n}", date(2021, 3, 1))
    PlayerTitle.objects.update(fingerprint=None)  # so that every player is written again
    before = dump()
    alone = backends()
    seen: list[tuple[int, bool]] = []
    write = writing.write

    def watched(*args: Any, **kwargs: Any) -> int:
        seen.append((backends(), connection.in_atomic_block))
        return write(*args, **kwargs)

    monkeypatch.setattr(recompute, "write", watched)

    assert titles_recompute_all(reason="again", chunk=1) == 5

    assert seen == [(alone, True)] * 5  # no connection of its own
    assert not connection.in_atomic_block
    after = dump()
    assert [title["fingerprint"] for title in after[0]] == [
        fingerprint(player_history(player.pk)) for player in players
    ]
    for title in before[0] + after[0]:
        title["fingerprint"] = None
    assert after == before
