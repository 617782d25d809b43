"""Tests for tournaments.services.ingest (and ingest_validation): game record v1 in, games,
seats, players and live standings out (SPEC §3, §4, §9)."""

import copy
import hashlib
import io
import json
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from accounts.models import Player, PlayerChange, User
from core.domain.clock import TOUR_TZ
from flows.ingest import games_import, games_ingest
from tests.tournaments.conftest import EVENT_CODE, RecordBuilder, make_record
from tournaments.domain.cards import CLASSIC, double_deck
from tournaments.domain.leaderboard import standing_from_scores
from tournaments.models import Entry, Event, EventStatus, Game, Seat, Standing
from tournaments.services.ingest import Conflict, IngestReport, Rejection

Counts = Callable[[], dict[str, int]]


def canonical_digest(record: dict[str, Any]) -> str:
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- a good record ----------------------------------------------------------------------


@pytest.mark.django_db
def test_a_record_lands_with_its_game_seats_players_and_standings(
    event: Event, record: RecordBuilder
) -> None:
    good = record("g-0000001")

    report = games_ingest(records=[good])

    assert report == IngestReport(ingested=1, duplicates=[], conflicts=[], rejected=[])
    assert report.errors is False
    game = Game.objects.get()
    assert (
        game.record_id,
        game.digest,
        game.event_id,
        game.mode,
        game.started_at,
        game.ended_at,
        game.ended_by,
        game.seat_count,
        game.log,
        game.voided,
    ) == (
        "g-0000001",
        canonical_digest(good),
        event.pk,
        "singles",
        datetime(2021, 2, 1, 10, 0, 3, tzinfo=TOUR_TZ),
        datetime(2021, 2, 1, 10, 3, 1, tzinfo=TOUR_TZ),
        "out",
        4,
        None,
        False,
    )
    seats = Seat.objects.order_by("seat").values_list(
        "seat",
        "player__external_id",
        "team",
        "hand",
        "hand_points",
        "score",
        "event_id",
        "ended_at",
        "voided",
        "ip",
        "device",
        "client",
    )
    ended = datetime(2021, 2, 1, 10, 3, 1, tzinfo=TOUR_TZ)
    hands = [("", 0, 82), ("R5", 5, -5), ("G7 GS", 27, -27), ("WD4", 50, -50)]
    assert list(seats) == [
        (i, f"p000000{i + 1}", None, hand, points, score, event.pk, ended, False)
        + (f"203.0.113.{i + 1}", f"d-00000{i}", "1.4.2")
        for i, (hand, points, score) in enumerate(hands)
    ]
    assert list(Player.objects.values_list("external_id", "name", "province")) == [
        ("p0000001", "玩家01", "江苏"),
        ("p0000002", "玩家02", "浙江"),
        ("p0000003", "玩家03", "广东"),
        ("p0000004", "玩家04", "北京"),
    ]
    assert PlayerChange.objects.count() == 0
    standings = Standing.objects.order_by("player_key").values_list(
        "player_key", "province", "games", "kept", "total", "best", "reached_at", "eligible"
    )
    assert list(standings) == [
        ("p0000001", "江苏", 1, [82], 82, 82, ended, False),
        ("p0000002", "浙江", 1, [-5], -5, -5, ended, False),
        ("p0000003", "广东", 1, [-27], -27, -27, ended, False),
        ("p0000004", "北京", 1, [-50], -50, -50, ended, False),
    ]
    event.refresh_from_db()
    assert event.leaderboard_version == 1


@pytest.mark.django_db
def test_a_seat_without_session_stores_no_ip_and_blank_device_and_client(
    record: RecordBuilder,
) -> None:
    report = games_ingest(records=[record(sessions=False)])

    assert report.ingested == 1
    assert set(Seat.objects.values_list("ip", "device", "client")) == {(None, "", "")}


@pytest.mark.django_db
def test_session_fields_may_be_null_and_ipv6_is_stored_compressed(record: RecordBuilder) -> None:
    good = record()
    good["seats"][0]["session"] = {"ip": "2001:DB8:0:0:0:0:0:1", "device": None, "client": None}
    good["seats"][1]["session"] = None

    assert games_ingest(records=[good]).ingested == 1
    assert list(Seat.objects.order_by("seat").values_list("ip", "device", "client")[:2]) == [
        ("2001:db8::1", "", ""),
        (None, "", ""),
    ]


@pytest.mark.django_db
def test_a_game_ended_on_time_needs_no_empty_hand(record: RecordBuilder) -> None:
    hands = (["R1"], ["R5"], ["G7", "GS"], ["WD4"])  # points 1, 5, 27, 50
    report = games_ingest(records=[record(ended_by="time", hands=hands)])

    assert report.ingested == 1
    assert list(Seat.objects.order_by("seat").values_list("score", flat=True)) == [
        4 + 26 + 49,
        -5,
        -27,
        -50,
    ]


@pytest.mark.django_db
def test_times_with_other_offsets_are_placed_in_shanghai_hours(record: RecordBuilder) -> None:
    # 02:00Z is 10:00 in Shanghai: inside the daily hours.
    report = games_ingest(
        records=[record(started_at="2021-02-03T02:00:00Z", ended_at="2021-02-03T02:02:00Z")]
    )

    assert report.ingested == 1
    assert Game.objects.get().started_at == datetime(2021, 2, 3, 10, 0, tzinfo=TOUR_TZ)


@pytest.mark.django_db
def test_doubles_are_scored_by_team(record: RecordBuilder) -> None:
    # Team 0 holds the lowest hand (0): it wins the losing team's total 5 + 50 = 55.
    hands: tuple[list[str], ...] = ([], ["R5"], ["G7", "GS"], ["WD4"])
    report = games_ingest(records=[record(mode="doubles", teams=(0, 1, 0, 1), hands=hands)])

    assert report.ingested == 1
    assert list(Seat.objects.order_by("seat").values_list("team", "score")) == [
        (0, 55),
        (1, -55),
        (0, 55),
        (1, -55),
    ]


@pytest.mark.django_db
def test_singles_follow_the_season_scoring(event: Event, record: RecordBuilder) -> None:
    event.season.singles_scoring = "penalty"
    event.season.save()

    games_ingest(records=[record()])

    assert list(Seat.objects.order_by("seat").values_list("score", flat=True)) == [0, -5, -27, -50]


@pytest.mark.django_db
def test_cards_follow_the_season_card_table(event: Event, record: RecordBuilder) -> None:
    event.season.card_table = double_deck(CLASSIC).to_dict()
    event.season.save()
    hands: tuple[list[str], ...] = (
        [],
        ["W", "W", "W"],
        ["W", "W", "W"],
        ["W", "W"],
    )  # 8 W: only a double deck

    report = games_ingest(records=[record(hands=hands)])

    assert report.ingested == 1
    assert list(Seat.objects.order_by("seat").values_list("hand", flat=True)) == [
        "",
        "W W W",
        "W W W",
        "W W",
    ]


@pytest.mark.django_db
def test_an_entrant_of_a_closed_event_is_accepted(
    event: Event, record: RecordBuilder, db_counts: Counts
) -> None:
    event.open_entry = False
    event.save()
    players = [
        Player.objects.create(external_id=f"p000000{i}", name=f"玩家0{i}", province=province)
        for i, province in ((1, "江苏"), (2, "浙江"), (3, "广东"), (4, "北京"))
    ]
    for player in players:
        Entry.objects.create(event=event, player=player, basis=Entry.Basis.ADVANCED)

    report = games_ingest(records=[record()])

    assert report.ingested == 1
    assert db_counts()["Player"] == 4


# --- refused records: the database is unchanged ----------------------------------------


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A mutation setting ``path`` (dots and [i]) of a record; ``...`` deletes the key."""

    def mutate(record: dict[str, Any]) -> None:
        target: Any = record
        parts = path.replace("[", ".").replace("]", "").split(".")
        for part in parts[:-1]:
            target = target[int(part)] if part.isdigit() else target[part]
        last = parts[-1]
        key: Any = int(last) if last.isdigit() else last
        if value is ...:
            del target[key]
        else:
            target[key] = value

    return mutate


def _hands(*hands: list[str]) -> Callable[[dict[str, Any]], None]:
    def mutate(record: dict[str, Any]) -> None:
        for seat, hand in zip(record["seats"], hands, strict=True):
            seat["hand"] = hand

    return mutate


def _doubles(*teams: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(record: dict[str, Any]) -> None:
        record["mode"] = "doubles"
        for seat, team in zip(record["seats"], teams, strict=True):
            seat["team"] = team

    return mutate


def _times(started: str, ended: str) -> Callable[[dict[str, Any]], None]:
    def mutate(record: dict[str, Any]) -> None:
        record["started_at"] = started
        record["ended_at"] = ended

    return mutate


def _seats(count: int) -> Callable[[dict[str, Any]], None]:
    def mutate(record: dict[str, Any]) -> None:
        players = [f"p{i:07d}" for i in range(1, count + 1)]
        hands: list[list[str]] = [[] for _ in players]
        record["seats"] = make_record(players=players, hands=hands)["seats"]

    return mutate


WINDOW = "2021-02-01T10:00:00+08:00 – 2021-02-07T23:59:59.999999+08:00"

REFUSED = [
    ("missing id", _set("id", ...), "id", "required"),
    ("id not a string", _set("id", 7), "id", "must be a string"),
    ("id blank", _set("id", "  "), "id", "must not be blank"),
    ("id too long", _set("id", "g" * 65), "id", "longer than 64 characters"),
    ("id with NUL", _set("id", "g\x001"), "id", "holds a NUL character"),
    (
        "id with a slash",
        _set("id", "g/1"),
        "id",
        "may hold only letters A-Z a-z, digits and - _ . (found U+002F 'SOLIDUS')",
    ),
    ("unknown field", _set("extra", 1), "extra", "unknown field"),
    ("missing mode", _set("mode", ...), "mode", "required"),
    ("missing seats", _set("seats", ...), "seats", "required"),
    ("event not a string", _set("event", 5), "event", "must be a string"),
    ("unknown event", _set("event", "2099-W01-Q"), "event", "unknown event '2099-W01-Q'"),
    ("bad mode", _set("mode", "triples"), "mode", "must be 'singles' or 'doubles', got 'triples'"),
    (
        "naive time",
        _set("started_at", "2021-02-01T10:00:03"),
        "started_at",
        "has no UTC offset (naive date-time '2021-02-01T10:00:03')",
    ),
    (
        "not a time",
        _set("ended_at", "soon"),
        "ended_at",
        "not an ISO 8601 date-time: 'soon'",
    ),
    (
        "time not a string",
        _set("started_at", 1612144803),
        "started_at",
        "must be an ISO 8601 date-time string with a UTC offset",
    ),
    (
        "ended before started",
        _set("ended_at", "2021-02-01T10:00:02+08:00"),
        "ended_at",
        "is before started_at",
    ),
    ("bad ending", _set("ended_by", "quit"), "ended_by", "must be 'out' or 'time', got 'quit'"),
    ("seats not a list", _set("seats", {}), "seats", "must be a list of seats"),
    ("one seat", _seats(1), "seats", "a game has 2 to 10 seats, got 1"),
    ("eleven seats", _seats(11), "seats", "a game has 2 to 10 seats, got 11"),
    ("seat not an object", _set("seats[1]", "p2"), "seats[1]", "must be an object"),
    ("unknown seat field", _set("seats[1].rank", 1), "seats[1].rank", "unknown field"),
    ("missing player", _set("seats[2].player", ...), "seats[2].player", "required"),
    ("player not an object", _set("seats[2].player", "p3"), "seats[2].player", "must be an object"),
    (
        "unknown player field",
        _set("seats[2].player.level", 3),
        "seats[2].player.level",
        "unknown field",
    ),
    ("missing name", _set("seats[2].player.name", ...), "seats[2].player.name", "required"),
    ("blank name", _set("seats[2].player.name", ""), "seats[2].player.name", "must not be blank"),
    (
        "name too long",
        _set("seats[2].player.name", "名" * 65),
        "seats[2].player.name",
        "longer than 64 characters",
    ),
    (
        "unknown province",
        _set("seats[2].player.province", "火星"),
        "seats[2].player.province",
        "unknown province '火星'",
    ),
    (
        "province not a string",
        _set("seats[2].player.province", ["江苏"]),
        "seats[2].player.province",
        "unknown province ['江苏']",
    ),
    (
        "player twice",
        _set("seats[3].player.id", "p0000001"),
        "seats[3].player.id",
        "player p0000001 already sits in seats[0]",
    ),
    (
        "team in singles",
        _set("seats[1].team", 0),
        "seats[1].team",
        "must be null in a singles game",
    ),
    (
        "no team in doubles",
        _doubles(0, None, 0, 1),
        "seats[1].team",
        "must be 0 or 1 in doubles, got None",
    ),
    ("bool team", _doubles(0, True, 0, 1), "seats[1].team", "must be 0 or 1 in doubles, got True"),
    (
        "one team in doubles",
        _doubles(0, 0, 0, 0),
        "seats",
        "a doubles game needs players of both teams (0 and 1)",
    ),
    ("missing hand", _set("seats[1].hand", ...), "seats[1].hand", "required"),
    ("hand a string", _set("seats[1].hand", "R5"), "seats[1].hand", "must be a list of card codes"),
    (
        "unknown card",
        _set("seats[2].hand", ["G7", "R10"]),
        "seats[2].hand[1]",
        "unknown card 'R10'",
    ),
    ("lower-case card", _set("seats[1].hand", ["r5"]), "seats[1].hand[0]", "unknown card 'r5'"),
    ("card not a string", _set("seats[1].hand", [5]), "seats[1].hand[0]", "unknown card 5"),
    (
        "five wilds",
        _hands([], ["W", "W"], ["W", "W"], ["W"]),
        "seats[3].hand[0]",
        "card 'W' appears 5 times but the deck holds 4",
    ),
    (
        "three R0",
        _hands([], ["R0"], ["R0", "G1"], ["R0"]),
        "seats[2].hand[0]",
        "card 'R0' appears 3 times but the deck holds 1",
    ),
    (
        "bad ip",
        _set("seats[0].session.ip", "999.1.1.1"),
        "seats[0].session.ip",
        "not an IPv4 or IPv6 address: '999.1.1.1'",
    ),
    (
        "ip with zone",
        _set("seats[0].session.ip", "fe80::1%eth0"),
        "seats[0].session.ip",
        "not an IPv4 or IPv6 address: 'fe80::1%eth0'",
    ),
    (
        "ip a number",
        _set("seats[0].session.ip", 3405803783),
        "seats[0].session.ip",
        "not an IPv4 or IPv6 address: 3405803783",
    ),
    (
        "device too long",
        _set("seats[0].session.device", "d" * 65),
        "seats[0].session.device",
        "longer than 64 characters",
    ),
    (
        "client too long",
        _set("seats[0].session.client", "1" * 33),
        "seats[0].session.client",
        "longer than 32 characters",
    ),
    (
        "session unknown field",
        _set("seats[0].session.os", "ios"),
        "seats[0].session.os",
        "unknown field",
    ),
    (
        "session not an object",
        _set("seats[0].session", "x"),
        "seats[0].session",
        "must be an object",
    ),
    (
        "out with two empty hands",
        _hands([], ["R5"], [], ["WD4"]),
        "ended_by",
        "'out' has one player out, but 2 seats have an empty hand",
    ),
    (
        "lasts no time",
        _times("2021-02-01T12:00:00+08:00", "2021-02-01T12:00:00+08:00"),
        "ended_at",
        "the game lasts no time (ended_at equals started_at)",
    ),
    (
        "lasts four hours",
        _times("2021-02-01T12:00:00+08:00", "2021-02-01T16:00:00+08:00"),
        "ended_at",
        "the game lasts 14400 s, over the 180 s game limit (tolerance 30 s)",
    ),
    (
        "out without an empty hand",
        _hands(["R1"], ["R5"], ["G7"], ["WD4"]),
        "ended_by",
        "'out' but no seat has an empty hand",
    ),
    (
        "before the window",
        _times("2021-02-01T09:59:00+08:00", "2021-02-01T10:01:00+08:00"),
        "started_at",
        f"outside the window of event {EVENT_CODE} ({WINDOW})",
    ),
    (
        "after the window",
        _times("2021-02-08T10:00:00+08:00", "2021-02-08T10:02:00+08:00"),
        "started_at",
        f"outside the window of event {EVENT_CODE} ({WINDOW})",
    ),
    (
        "at night",
        _times("2021-02-03T03:00:00+08:00", "2021-02-03T03:02:00+08:00"),
        "started_at",
        f"outside the daily hours of event {EVENT_CODE} (10:00–23:59 Asia/Shanghai)",
    ),
    (
        "at night in UTC",
        _times("2021-02-03T01:59:00+00:00", "2021-02-03T02:01:00+00:00"),
        "started_at",
        f"outside the daily hours of event {EVENT_CODE} (10:00–23:59 Asia/Shanghai)",
    ),
    (
        "ends after midnight",
        _times("2021-02-01T23:59:00+08:00", "2021-02-02T00:01:00+08:00"),
        "ended_at",
        f"outside the daily hours of event {EVENT_CODE} (10:00–23:59 Asia/Shanghai)",
    ),
    (
        "spans the night",
        _times("2021-02-01T23:59:00+08:00", "2021-02-02T10:00:30+08:00"),
        "ended_at",
        f"the game runs past the daily close of event {EVENT_CODE}",
    ),
    (
        "NUL in the log",
        _set("log", {"moves": ["R5\x00"]}),
        "log",
        "holds a NUL character (\\u0000), which cannot be stored",
    ),
    (
        "NUL in a name",
        _set("seats[0].player.name", "小\x00猴"),
        "seats[0].player.name",
        "holds a NUL character",
    ),
    (
        "a player id with a slash",
        _set("seats[0].player.id", "../../etc"),
        "seats[0].player.id",
        "may hold only letters A-Z a-z, digits and - _ . (found U+002F 'SOLIDUS')",
    ),
    (
        "a player id with a zero-width space",
        _set("seats[0].player.id", "p\u200b0000001"),
        "seats[0].player.id",
        "may hold only letters A-Z a-z, digits and - _ . (found U+200B 'ZERO WIDTH SPACE')",
    ),
    (
        "a name with a right-to-left override",
        _set("seats[0].player.name", "evil\u202egnp"),
        "seats[0].player.name",
        "holds a hidden or reordering character U+202E 'RIGHT-TO-LEFT OVERRIDE'",
    ),
    (
        "lone surrogate",
        _set("seats[0].player.name", "小\ud800"),
        "record",
        "holds text that is not valid Unicode",
    ),
]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("mutate", "field", "reason"),
    [case[1:] for case in REFUSED],
    ids=[case[0] for case in REFUSED],
)
def test_a_bad_record_is_rejected_with_its_field_and_reason_and_writes_nothing(
    record: RecordBuilder,
    db_counts: Counts,
    mutate: Callable[[dict[str, Any]], None],
    field: str,
    reason: str,
) -> None:
    bad = record("g-bad")
    mutate(bad)
    before = db_counts()

    report = games_ingest(records=[bad])

    record_id = bad.get("id") if field != "id" else None
    assert report == IngestReport(rejected=[Rejection(0, record_id, field, reason)])
    assert report.errors is True
    assert db_counts() == before


@pytest.mark.django_db
def test_a_record_that_is_not_an_object_is_rejected(db_counts: Counts, event: Event) -> None:
    report = games_ingest(records=["g-1", None])

    reason = "a game record must be a JSON object"
    assert report.rejected == [
        Rejection(0, None, "record", reason),
        Rejection(1, None, "record", reason),
    ]
    assert db_counts() == dict.fromkeys(db_counts(), 0)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("status", "reason"),
    [
        (EventStatus.CANCELLED, f"event {EVENT_CODE} is cancelled"),
        (
            EventStatus.FINALISED,
            f"event {EVENT_CODE} is finalised; corrections go through their own path",
        ),
    ],
)
def test_a_game_of_a_closed_event_is_rejected(
    event: Event, record: RecordBuilder, db_counts: Counts, status: str, reason: str
) -> None:
    event.status = status
    event.save()
    before = db_counts()

    report = games_ingest(records=[record("g-1")])

    assert report.rejected == [Rejection(0, "g-1", "event", reason)]
    assert db_counts() == before


@pytest.mark.django_db
def test_a_non_entrant_of_a_closed_event_is_rejected(
    event: Event, record: RecordBuilder, db_counts: Counts
) -> None:
    event.open_entry = False
    event.save()
    entrant = Player.objects.create(external_id="p0000001", name="玩家01", province="江苏")
    Entry.objects.create(event=event, player=entrant, basis=Entry.Basis.INVITED)
    before = db_counts()

    report = games_ingest(records=[record("g-1")])

    reason = f"player p0000002 has no entry in event {EVENT_CODE} (entry is closed)"
    assert report.rejected == [Rejection(0, "g-1", "seats[1].player.id", reason)]
    assert db_counts() == before


@pytest.mark.django_db
def test_a_hand_too_long_to_store_is_rejected(
    event: Event, record: RecordBuilder, db_counts: Counts
) -> None:
    table = double_deck(CLASSIC)
    event.season.card_table = table.to_dict()
    event.season.save()
    deck = [code for code, copies in table.copies.items() for _ in range(copies)]
    before = db_counts()

    report = games_ingest(records=[record("g-1", hands=([], deck[:150], ["R5"], ["G5"]))])

    assert report.rejected == [Rejection(0, "g-1", "seats[1].hand", "longer than 400 characters")]
    assert db_counts() == before


@pytest.mark.django_db
def test_a_broken_season_card_table_rejects_the_events_games(
    event: Event, record: RecordBuilder, db_counts: Counts
) -> None:
    event.season.card_table = {"name": "broken"}
    event.season.save()
    before = db_counts()

    report = games_ingest(records=[record("g-1")])

    reason = "the card table of season 2021 is invalid: card table is missing 'copies', 'points'"
    assert report.rejected == [Rejection(0, "g-1", "event", reason)]
    assert db_counts() == before


@pytest.mark.django_db
def test_an_event_finalised_after_validation_is_checked_again_under_lock(
    event: Event, db_counts: Counts
) -> None:
    """The importer caches events across batches; the write re-reads the locked row."""
    second = make_record(
        "g-2", started_at="2021-02-01T11:00:00+08:00", ended_at="2021-02-01T11:02:00+08:00"
    )
    lines = [json.dumps(make_record("g-1")), json.dumps(second)]
    rejects: list[dict[str, Any]] = []

    def finalise_after_first_batch(summary: Any) -> None:
        Event.objects.filter(pk=event.pk).update(status=EventStatus.FINALISED)

    summary = games_import(
        lines=lines, batch_size=1, on_rejects=rejects.extend, on_batch=finalise_after_first_batch
    )

    assert (summary.ingested, summary.rejected) == (1, 1)
    reason = f"event {EVENT_CODE} is finalised; corrections go through their own path"
    assert rejects == [
        {"line": 2, "id": "g-2", "field": "event", "reason": reason, "record": second}
    ]
    assert db_counts()["Game"] == 1


# --- batches: mixed, duplicates, conflicts ---------------------------------------------


@pytest.mark.django_db
def test_the_good_records_of_a_mixed_batch_land_and_the_others_are_reported(
    record: RecordBuilder,
) -> None:
    bad_card = record("g-2", hands=([], ["R5"], ["G7", "X9"], ["WD4"]))
    report = games_ingest(
        records=[record("g-1"), bad_card, record("g-3", players=("a1", "a2", "a3", "a4"))]
    )

    assert report == IngestReport(
        ingested=2, rejected=[Rejection(1, "g-2", "seats[2].hand[1]", "unknown card 'X9'")]
    )
    assert sorted(Game.objects.values_list("record_id", flat=True)) == ["g-1", "g-3"]
    assert Seat.objects.count() == 8
    assert Standing.objects.count() == 8


@pytest.mark.django_db
def test_the_same_batch_twice_stores_it_once(record: RecordBuilder, db_counts: Counts) -> None:
    batch = [record("g-1"), record("g-2", players=("a1", "a2", "a3", "a4"))]
    games_ingest(records=batch)
    before = db_counts()
    standings = list(Standing.objects.order_by("pk").values())

    report = games_ingest(records=copy.deepcopy(batch))

    assert report == IngestReport(duplicates=["g-1", "g-2"])
    assert report.errors is False
    assert db_counts() == before
    assert list(Standing.objects.order_by("pk").values()) == standings


@pytest.mark.django_db
def test_a_different_record_under_a_stored_id_is_a_conflict_naming_the_id(
    record: RecordBuilder, db_counts: Counts
) -> None:
    original = record("g-1")
    games_ingest(records=[original])
    before = db_counts()

    changed = record("g-1", hands=([], ["R6"], ["G7", "GS"], ["WD4"]))
    report = games_ingest(records=[changed])

    reason = "id g-1 is already stored with a different record"
    assert report == IngestReport(conflicts=[Conflict(0, "g-1", reason)])
    assert report.errors is True
    assert db_counts() == before
    assert Game.objects.get().digest == canonical_digest(original)


@pytest.mark.django_db
def test_an_id_repeated_in_one_batch_is_a_duplicate_or_a_conflict(
    record: RecordBuilder,
) -> None:
    first = record("g-1")
    other = record("g-1", hands=([], ["R6"], ["G7", "GS"], ["WD4"]))

    report = games_ingest(records=[first, copy.deepcopy(first), other])

    reason = "id g-1 appears earlier in this batch (index 0) with a different record"
    assert report == IngestReport(
        ingested=1, duplicates=["g-1"], conflicts=[Conflict(2, "g-1", reason)]
    )
    assert Game.objects.count() == 1


@pytest.mark.django_db
def test_a_repeated_id_after_a_rejected_record_is_checked_on_its_own(
    record: RecordBuilder,
) -> None:
    bad = record("g-1", mode="solo")

    report = games_ingest(records=[bad, record("g-1")])

    assert report == IngestReport(
        ingested=1,
        rejected=[Rejection(0, "g-1", "mode", "must be 'singles' or 'doubles', got 'solo'")],
    )


@pytest.mark.django_db(transaction=True)
def test_the_same_batch_from_two_threads_at_once_is_stored_once(event: Event) -> None:
    batch = [
        make_record(
            f"g-{i}",
            players=[f"p{i}-{seat}" for seat in range(4)],
            started_at=f"2021-02-01T1{i}:00:00+08:00",
            ended_at=f"2021-02-01T1{i}:02:00+08:00",
        )
        for i in range(5)
    ]
    barrier = threading.Barrier(2)
    reports: list[IngestReport] = []
    failures: list[BaseException] = []

    def submit() -> None:
        try:
            barrier.wait(timeout=10)
            reports.append(games_ingest(records=copy.deepcopy(batch)))
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=submit) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert failures == []
    assert sorted(report.ingested for report in reports) == [0, 5]
    assert sorted(len(report.duplicates) for report in reports) == [0, 5]
    assert Game.objects.count() == 5
    assert Seat.objects.count() == 20
    assert Player.objects.count() == 20
    assert Standing.objects.count() == 20
    assert set(Standing.objects.values_list("games", flat=True)) == {1}


# --- standings and players --------------------------------------------------------------


def _game(record_id: str, hour: int, minute: int, players: tuple[str, ...], hands: Any) -> Any:
    return make_record(
        record_id,
        players=players,
        hands=hands,
        provinces=("江苏",),
        started_at=f"2021-02-0{hour // 24 + 1}T{10 + hour % 24:02d}:{minute:02d}:00+08:00",
        ended_at=f"2021-02-0{hour // 24 + 1}T{10 + hour % 24:02d}:{minute + 2:02d}:00+08:00",
    )


@pytest.mark.django_db
def test_standings_kept_by_ingest_equal_a_recount_over_all_seats(
    event: Event, record: RecordBuilder
) -> None:
    event.season.best_n = 3
    event.season.minimum_games = 2
    event.season.save()
    a, b, c, d, e = "pa", "pb", "pc", "pd", "pe"
    hands = [
        ([], ["R5"], ["G7", "GS"], ["WD4"]),
        (["R1"], [], ["B9"], ["Y2", "Y3"]),
        (["G4"], ["RS"], [], ["B1"]),
        (["W"], ["Y8"], ["R2"], []),
    ]
    batches = [
        [_game("g-1", 0, 0, (a, b, c, d), hands[0]), _game("g-2", 0, 10, (a, b, c, e), hands[1])],
        [_game("g-3", 2, 0, (b, c, d, e), hands[2]), _game("g-4", 3, 0, (a, c, d, e), hands[3])],
        [_game("g-5", 4, 0, (a, b, d, e), hands[1])],
        # A late game: ended before the standings' reached_at, arriving last.
        [_game("g-6", 1, 0, (a, b, c, d), hands[2]), _game("g-7", 0, 5, (e, d, c, b), hands[3])],
    ]
    for batch in batches:
        assert games_ingest(records=batch).ingested == len(batch)

    assert Standing.objects.count() == 5
    for standing in Standing.objects.all():
        scores = list(
            Seat.objects.filter(player_id=standing.player_id).values_list("score", "ended_at")
        )
        expected = standing_from_scores(standing.player_key, standing.province, scores, 3)
        assert (
            standing.games,
            tuple(standing.kept),
            standing.total,
            standing.best,
            standing.reached_at,
            standing.eligible,
        ) == (
            expected.games,
            expected.kept,
            expected.total,
            expected.best,
            expected.reached_at,
            expected.games >= 2,
        )


@pytest.mark.django_db
def test_a_changed_name_or_province_is_updated_and_logged(record: RecordBuilder) -> None:
    by = User.objects.create_user(username="server")
    games_ingest(records=[record("g-1")])

    renamed = record(
        "g-2",
        names=("小猴子", "玩家02", "玩家03", "玩家04"),
        provinces=("江苏", "上海", "广东", "北京"),
        started_at="2021-02-02T10:00:00+08:00",
        ended_at="2021-02-02T10:02:00+08:00",
    )
    report = games_ingest(records=[renamed], by=by)

    assert report.ingested == 1
    assert list(Player.objects.values_list("external_id", "name", "province")) == [
        ("p0000001", "小猴子", "江苏"),
        ("p0000002", "玩家02", "上海"),
        ("p0000003", "玩家03", "广东"),
        ("p0000004", "玩家04", "北京"),
    ]
    changes = PlayerChange.objects.order_by("player__external_id").values_list(
        "player__external_id", "field", "old", "new", "by", "reason"
    )
    assert list(changes) == [
        ("p0000001", "name", "玩家01", "小猴子", by.pk, "ingest g-2"),
        ("p0000002", "province", "浙江", "上海", by.pk, "ingest g-2"),
    ]


@pytest.mark.django_db
def test_a_late_game_with_an_old_player_block_does_not_undo_a_newer_one(
    record: RecordBuilder,
) -> None:
    games_ingest(
        records=[
            record(
                "g-2",
                names=("小猴子", "玩家02", "玩家03", "玩家04"),
                started_at="2021-02-02T10:00:00+08:00",
                ended_at="2021-02-02T10:02:00+08:00",
            )
        ]
    )
    late = record("g-1", names=("旧名字", "玩家02", "玩家03", "玩家04"))

    assert games_ingest(records=[late]).ingested == 1
    assert Player.objects.get(external_id="p0000001").name == "小猴子"
    assert PlayerChange.objects.count() == 0


@pytest.mark.django_db
def test_in_one_batch_the_players_latest_game_names_them(record: RecordBuilder) -> None:
    later = record(
        "g-2",
        names=("新名字", "玩家02", "玩家03", "玩家04"),
        started_at="2021-02-02T10:00:00+08:00",
        ended_at="2021-02-02T10:02:00+08:00",
    )

    games_ingest(records=[later, record("g-1", names=("旧名字", "玩家02", "玩家03", "玩家04"))])

    assert Player.objects.get(external_id="p0000001").name == "新名字"
    assert PlayerChange.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_the_ingest_bench_stage_runs_and_removes_its_rows() -> None:
    from bench.ingest import ingest

    out = io.StringIO()
    results = ingest(0.0001, out)

    assert [(r.stage, r.size, r.unit) for r in results] == [
        ("ingest vs bare COPY (temp tables, no index)", "100 games + 400 seats", "rows/s"),
        ("ingest vs COPY into scratch copies", "100 games + 400 seats", "rows/s"),
        ("ingest vs COPY into the real tables", "100 games + 400 seats", "rows/s"),
    ]
    assert all(r.value > 0 and r.baseline > 0 for r in results)
    assert all(r.ratio == pytest.approx(r.value / r.baseline) for r in results)
    assert "simulated 100 games of 200 players" in out.getvalue()
    assert (Game.objects.count(), Seat.objects.count(), Player.objects.count()) == (0, 0, 0)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'bench_%'")
        assert cursor.fetchone() == (0,)


@pytest.mark.django_db
def test_a_name_is_stored_in_nfc(record: RecordBuilder, event: Event) -> None:
    game = record("g-nfc")
    game["seats"][0]["player"]["name"] = "Cafe\u0301"

    report = games_ingest(records=[game])

    assert report.rejected == []
    key = game["seats"][0]["player"]["id"]
    assert Player.objects.get(external_id=key).name == "Caf\u00e9"


@pytest.mark.django_db
def test_identifiers_check_lists_what_was_stored_before_the_rules() -> None:
    Player.objects.create(external_id="../../etc", name="a\u202eb", province="江苏")
    Player.objects.create(external_id="p0000001", name="小猴子", province="江苏")
    out = io.StringIO()

    with pytest.raises(CommandError, match="2 stored values break the rules"):
        call_command("identifiers_check", stdout=out)

    assert out.getvalue().splitlines() == [
        "player '../../etc': id may hold only letters A-Z a-z, digits and - _ . "
        "(found U+002F 'SOLIDUS')",
        "player '../../etc': name holds a hidden or reordering character U+202E "
        "'RIGHT-TO-LEFT OVERRIDE'",
    ]


@pytest.mark.django_db
def test_a_game_starting_after_now_plus_the_skew_is_rejected(
    record: RecordBuilder, db_counts: Counts, event: Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = datetime.fromisoformat("2021-02-01T11:00:00+08:00")
    monkeypatch.setattr("tournaments.services.ingest_validation.timezone.now", lambda: now)
    soon, later = record("g-soon"), record("g-later")
    _times("2021-02-01T11:05:00+08:00", "2021-02-01T11:07:00+08:00")(soon)  # the 300 s skew
    _times("2021-02-01T11:05:01+08:00", "2021-02-01T11:07:00+08:00")(later)
    before = db_counts()

    report = games_ingest(records=[later])
    refused = db_counts()
    accepted = games_ingest(records=[soon])

    assert report.rejected == [
        Rejection(0, "g-later", "started_at", "is in the future (2021-02-01T11:05:01+08:00)")
    ]
    assert refused == before
    assert accepted.rejected == []
    assert db_counts()["Game"] == before["Game"] + 1
