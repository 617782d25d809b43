"""The first materialisation on PostgreSQL (titles.recompute._materialise): with the title
rows, terms and history empty, titles_recompute_all COPYs them with the tables' secondary
indexes and constraints dropped, then recreates those exactly; it writes the same rows, in
the same order, as the normal path; the foreign keys it keeps are deferred again after it;
and it falls back to the normal path when it cannot lock the tables at once or when the
transaction has pending trigger events on them. SQLite always takes the normal path."""

import random
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

import psycopg
import pytest
from django.db import IntegrityError, connection, transaction

from accounts.models import Player, User
from titles import recompute
from titles.models import (
    PlayerTitle,
    Qualification,
    QualificationRule,
    TitleChange,
    TitleTerm,
)
from titles.recompute import titles_recompute_all

from .connections import backends, backends_once_closed

pytestmark = [pytest.mark.django_db]

TABLES = ["titles_playertitle", "titles_titleterm", "titles_titlechange"]


@pytest.fixture
def bulk(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of players of each bulk materialisation, one entry per run."""
    calls: list[int] = []
    materialise = recompute._materialise

    def spy(*args: Any, **kwargs: Any) -> int:
        calls.append(materialise(*args, **kwargs))
        return calls[-1]

    monkeypatch.setattr(recompute, "_materialise", spy)
    return calls


def settle() -> None:
    """Fire the deferred constraint checks now, then defer them again, as at the start of a
    transaction: PostgreSQL refuses to alter a table with pending trigger events, and the
    test's rows leave some."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")


def dump() -> tuple[list[tuple[Any, ...]], ...]:
    """Every materialised row in id (insertion) order, without the ids themselves."""
    return (
        list(PlayerTitle.objects.order_by("pk").values_list()),
        [row[1:] for row in TitleTerm.objects.order_by("pk").values_list()],
        [row[1:] for row in TitleChange.objects.order_by("pk").values_list()],
    )


def clear() -> None:
    TitleChange.objects.all().delete()
    TitleTerm.objects.all().delete()
    PlayerTitle.objects.all().delete()
    settle()


def schema() -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tablename, indexname, indexdef FROM pg_indexes "
            "WHERE tablename = ANY(%s) ORDER BY 1, 2",
            [TABLES],
        )
        indexes: list[tuple[Any, ...]] = cursor.fetchall()
        cursor.execute(
            "SELECT conrelid::regclass::text, conname, contype, pg_get_constraintdef(oid), "
            "condeferrable, condeferred, convalidated FROM pg_constraint "
            "WHERE conrelid = ANY(%s::regclass[]) ORDER BY 1, 2",
            [TABLES],
        )
        constraints: list[tuple[Any, ...]] = cursor.fetchall()
        return indexes + constraints


def random_ledger(make_player: Callable[..., Player], rng: random.Random) -> int:
    """40 players with 0–9 qualifications each over 2017–2021 (Master and Lifetime, some
    pending or rejected); returns how many players have an approved one."""
    rule = QualificationRule.objects.get(key="monthly_champion")
    rows, approved = [], set()
    for _ in range(40):
        player = make_player()
        for n in range(rng.randrange(10)):
            status = rng.choice(["approved"] * 8 + ["pending", "rejected"])
            lifetime = rng.random() < 0.15
            rows.append(
                Qualification(
                    player=player,
                    source=f"event:{n}",
                    rule=rule,
                    on=date(2017, 1, 1) + timedelta(days=rng.randrange(5 * 365)),
                    confers="lifetime" if lifetime else "master",
                    requires_valid_master=not lifetime or rng.random() < 0.7,
                    status=status,
                )
            )
            if status == "approved":
                approved.add(player.pk)
    Qualification.objects.bulk_create(rows)
    return len(approved)


@pytest.fixture
def ledger(freeze: Callable[[date], None], make_player: Callable[..., Player]) -> int:
    freeze(date(2021, 6, 1))
    return random_ledger(make_player, random.Random(5))


@pytest.mark.parametrize("chunk", [recompute.CHUNK, 7])
def test_the_bulk_path_writes_the_rows_of_the_normal_path(
    ledger: int, bulk: list[int], monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """In one chunk, and in chunks of 7 players (replayed in a second thread while the chunk
    before is written)."""
    settle()
    with monkeypatch.context() as patched:
        patched.setattr(recompute, "_take_empty_state", lambda: None)
        assert titles_recompute_all(reason="import") == ledger
    assert bulk == []
    normal = dump()
    clear()

    assert titles_recompute_all(reason="import", chunk=chunk) == ledger

    assert bulk == [ledger]
    assert dump() == normal
    titles, terms, changes = normal
    assert (len(titles), len(terms), len(changes)) == (ledger, 54, 168)
    assert {status for _, status, *_ in titles} == {"none", "master", "lapsed", "lifetime"}
    assert {state for *_, state, _ in terms} == {"current", "lapsed"}


def test_a_second_run_after_the_bulk_path_writes_nothing(ledger: int, bulk: list[int]) -> None:
    settle()
    titles_recompute_all(reason="import")
    first = dump()

    assert titles_recompute_all(reason="again") == ledger

    assert bulk == [ledger]
    assert dump() == first


def test_the_bulk_path_recreates_indexes_and_constraints_exactly(
    ledger: int, bulk: list[int]
) -> None:
    before = schema()
    settle()

    titles_recompute_all(reason="import")

    assert bulk == [ledger]
    assert schema() == before
    names = {row[1] for row in before}
    assert {"term_code_once", "term_once_per_start", "change_retracted_once"} <= names


def test_the_foreign_keys_kept_are_deferred_again(ledger: int, bulk: list[int]) -> None:
    settle()
    titles_recompute_all(reason="import")
    assert bulk == [ledger]
    missing = Player.objects.latest("pk").pk + 1

    PlayerTitle.objects.create(player_id=missing)  # checked at commit, as declared

    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    PlayerTitle.objects.filter(player_id=missing).delete()  # the test's own check at its end


def test_pending_trigger_events_keep_the_normal_path(
    ledger: int, bulk: list[int], reviewer: User
) -> None:
    settle()
    titles_recompute_all(reason="import")
    expected = dump()
    clear()
    change = TitleChange.objects.create(
        player=Player.objects.earliest("pk"), kind="granted", on=date(2020, 1, 1), by=reviewer
    )
    change.delete()  # the deferred check of its author stays pending

    assert titles_recompute_all(reason="import") == ledger

    assert bulk == [ledger]
    assert dump() == expected


def test_a_table_locked_elsewhere_keeps_the_normal_path(ledger: int, bulk: list[int]) -> None:
    settle()
    settings = connection.settings_dict
    with psycopg.connect(
        dbname=settings["NAME"],
        user=settings["USER"],
        host=settings["HOST"],
        port=settings["PORT"] or None,
        password=settings["PASSWORD"] or None,
    ) as other:
        other.execute("LOCK TABLE titles_titlechange IN ACCESS SHARE MODE")

        assert titles_recompute_all(reason="import") == ledger

    assert bulk == []
    assert PlayerTitle.objects.count() == ledger


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_bulk_path_reads_the_ledger_on_a_connection_of_its_own(
    ledger: int, bulk: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recompute, "STREAM_CHUNK", 2)  # fetched ahead again and again
    with monkeypatch.context() as patched:
        patched.setattr(recompute, "_take_empty_state", lambda: None)
        assert titles_recompute_all(reason="import") == ledger
    normal = dump()
    clear()
    alone = backends()
    seen: list[int] = []
    fetch = recompute._Prefetched._fetch

    def counted(self: recompute._Prefetched) -> list[Any]:
        seen.append(backends())
        return fetch(self)

    monkeypatch.setattr(recompute._Prefetched, "_fetch", counted)

    assert titles_recompute_all(reason="import", chunk=7) == ledger

    assert bulk == [ledger]
    assert dump() == normal
    assert len(seen) > ledger / 2
    assert set(seen) == {alone + 1}
    assert backends_once_closed(alone) == alone
