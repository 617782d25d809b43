"""The fast paths of ingest keep every check and message of the slow ones (SPEC §3, §9):
``validate_deal``'s counting fast path, the summed hand points, the event check skipped under
lock only when the event row is unchanged, one leaderboard version bump per event per batch."""

import json
import random
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

import pytest

from accounts.models import Player
from flows.ingest import games_import, games_ingest
from tests.tournaments.conftest import RecordBuilder
from tournaments.domain.cards import CLASSIC, HAPPY, CardError, CardTable, parse_hand, validate_deal
from tournaments.models import Entry, Event, Game, Standing
from tournaments.services.ingest import Rejection
from tournaments.services.ingest_rules import RecordRules


def _reference_deal(hands: Sequence[Any], table: CardTable) -> None:
    """``validate_deal`` as it was before its fast path: every hand parsed, seat by seat."""
    seen: dict[str, int] = {}
    total = 0
    for seat, hand in enumerate(hands):
        codes = parse_hand(hand, table, seat=seat)
        total += len(codes)
        for code in codes:
            seen[code] = seen.get(code, 0) + 1
    if total > table.size:
        raise CardError(f"the hands hold {total} cards but the deck holds {table.size}")
    for code, count in seen.items():
        if count > table.copies[code]:
            raise CardError(
                f"card {code!r} appears {count} times but the deck holds {table.copies[code]}",
                code=code,
            )


def _outcome(check: Any, hands: Sequence[Any], table: CardTable) -> tuple[Any, ...] | None:
    try:
        check(hands, table)
    except CardError as exc:
        return (str(exc), exc.reason, repr(exc.code), exc.seat)
    return None


def _random_hand(rng: random.Random, codes: list[str]) -> tuple[str, list[Any]]:
    """A hand as (kind, cards): mostly a list, sometimes a tuple, an iterator or a string."""
    hand: list[Any] = [rng.choice(codes) for _ in range(rng.choice((0, 1, 3, 8, 30)))]
    if hand and rng.random() < 0.15:  # a bad card somewhere
        hand[rng.randrange(len(hand))] = rng.choice(("R10", "r5", 5, None, ["R5"], "W "))
    return rng.choice(("list",) * 17 + ("tuple", "iterator", "string")), hand


def _made(kind: str, cards: list[Any]) -> Any:
    if kind == "string":
        return " ".join(map(str, cards))
    makers: dict[str, Callable[[list[Any]], Any]] = {"list": list, "tuple": tuple, "iterator": iter}
    return makers[kind](cards)


@pytest.mark.parametrize("table", [CLASSIC, HAPPY], ids=lambda t: t.name)
def test_the_deal_fast_path_refuses_exactly_what_the_seat_by_seat_check_refuses(
    table: CardTable,
) -> None:
    rng = random.Random(3)
    codes = list(table.points)
    refused = 0
    for _ in range(3000):
        specs = [_random_hand(rng, codes) for _ in range(rng.randint(2, 6))]
        expected = _outcome(_reference_deal, [_made(*spec) for spec in specs], table)
        assert _outcome(validate_deal, [_made(*spec) for spec in specs], table) == expected
        refused += expected is not None
    assert 300 < refused < 2900  # both outcomes were exercised


def test_a_deal_of_known_cards_names_its_first_overdealt_card() -> None:
    with pytest.raises(CardError) as caught:
        validate_deal([["W", "R1"], ["W", "W", "R1"], ["W", "W", "R1"]])
    assert (str(caught.value), caught.value.code, caught.value.seat) == (
        "card 'W' appears 5 times but the deck holds 4",
        "W",
        None,
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("hand", "field", "reason"),
    [
        (["G7", "R5", ["R5"]], "seats[2].hand[2]", "unknown card ['R5']"),
        (["G7", None, "X9"], "seats[2].hand[1]", "unknown card None"),
        (["G7", "R5", True], "seats[2].hand[2]", "unknown card True"),
    ],
)
def test_a_bad_card_after_good_ones_is_named_by_its_position(
    record: RecordBuilder, hand: list[Any], field: str, reason: str
) -> None:
    hands: tuple[list[Any], ...] = (["R1"], ["R2"], hand, [])

    report = games_ingest(records=[record("g-1", hands=hands)])

    assert report.rejected == [Rejection(0, "g-1", field, reason)]
    assert not Game.objects.exists()


@pytest.mark.django_db
def test_an_event_window_moved_after_validation_is_checked_again_under_lock(
    event: Event, record: RecordBuilder
) -> None:
    """The importer validates with the event it cached; the write re-checks a changed row."""
    lines = [
        json.dumps(record("g-1")),
        json.dumps(
            record(
                "g-2",
                started_at="2021-02-03T11:00:00+08:00",
                ended_at="2021-02-03T11:02:00+08:00",
            )
        ),
    ]
    rejects: list[dict[str, Any]] = []

    def shorten_after_first_batch(summary: Any) -> None:
        Event.objects.filter(pk=event.pk).update(ends_at=event.starts_at + timedelta(days=1))

    summary = games_import(
        lines=lines, batch_size=1, on_rejects=rejects.extend, on_batch=shorten_after_first_batch
    )

    window = "2021-02-01T10:00:00+08:00 – 2021-02-02T10:00:00+08:00"
    assert (summary.ingested, summary.rejected) == (1, 1)
    assert rejects == [
        {
            "line": 2,
            "id": "g-2",
            "field": "started_at",
            "reason": f"outside the window of event {event.code} ({window})",
            "record": json.loads(lines[1]),
        }
    ]
    assert list(Game.objects.values_list("record_id", flat=True)) == ["g-1"]


@pytest.mark.django_db
def test_each_batch_bumps_its_events_leaderboard_version_once(
    event: Event, record: RecordBuilder
) -> None:
    lines = [
        json.dumps(
            record(
                f"g-{i}",
                players=[f"p{i % 4}-{seat}" for seat in range(4)],
                started_at=f"2021-02-01T1{i}:00:00+08:00",
                ended_at=f"2021-02-01T1{i}:02:00+08:00",
            )
        )
        for i in range(6)
    ]

    rejects: list[dict[str, Any]] = []

    summary = games_import(lines=lines, batch_size=4, on_rejects=rejects.extend)

    event.refresh_from_db()
    assert (summary.ingested, rejects, event.leaderboard_version) == (6, [], 2)
    games = sorted(Standing.objects.filter(event=event).values_list("games", flat=True))
    assert games == [1] * 8 + [2] * 8


# --- the importer's pipeline: the next batch is validated while one is written ---------


@pytest.mark.django_db
def test_a_record_repeated_in_a_later_batch_is_caught_by_the_write(
    event: Event, record: RecordBuilder
) -> None:
    """Batch 2's ids are looked up before batch 1 is written; the write still sorts them."""
    changed = record("g-2", players=("a1", "a2", "a3", "a4"))
    lines = [json.dumps(r) for r in (record("g-1"), record("g-2"), record("g-1"), changed)]
    rejects: list[dict[str, Any]] = []

    summary = games_import(lines=lines, batch_size=2, on_rejects=rejects.extend)

    assert (summary.ingested, summary.duplicates, summary.conflicts) == (2, 1, 1)
    reason = "id g-2 is already stored with a different record"
    assert rejects == [{"line": 4, "id": "g-2", "field": "id", "reason": reason, "record": changed}]
    assert sorted(Game.objects.values_list("record_id", flat=True)) == ["g-1", "g-2"]
    assert Standing.objects.filter(event=event).count() == 4


@pytest.mark.django_db
def test_the_entrants_of_a_closed_event_are_loaded_before_validation_leaves_the_thread(
    event: Event, record: RecordBuilder
) -> None:
    event.open_entry = False
    event.save()
    for i, province in ((1, "江苏"), (2, "浙江"), (3, "广东")):
        player = Player.objects.create(
            external_id=f"p000000{i}", name=f"玩家0{i}", province=province
        )
        Entry.objects.create(event=event, player=player, basis=Entry.Basis.ADVANCED)
    rejects: list[dict[str, Any]] = []

    summary = games_import(lines=[json.dumps(record("g-1"))], on_rejects=rejects.extend)

    reason = f"player p0000004 has no entry in event {event.code} (entry is closed)"
    assert (summary.ingested, summary.rejected) == (0, 1)
    field = "seats[3].player.id"
    assert rejects == [
        {"line": 1, "id": "g-1", "field": field, "reason": reason, "record": record("g-1")}
    ]
    assert not Game.objects.exists()


@pytest.mark.django_db
def test_detached_rules_refuse_to_query(event: Event) -> None:
    rules = RecordRules()
    rules.load([event.code])
    detached = rules.detached()

    assert detached.event(event.code) == rules.event(event.code)
    with pytest.raises(RuntimeError, match="event 'other' was not loaded"):
        detached.event("other")
    with pytest.raises(RuntimeError, match="the entrants of event -1 were not loaded"):
        detached.entrants(-1)
