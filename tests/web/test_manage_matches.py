"""Live finals played as matches and rotating-partners team events, run from the organiser's
console (issues 25 and 26): seating a match round, entering each game's hands, correcting
one with a reason, and a team event's whole schedule."""

from datetime import date

import pytest
from django.test import Client

from accounts.roles import ORGANISER
from tests.accounts.signin import client_sign_in, make_staff
from tests.tournaments.factories import make_event
from tests.web.tour import Tour
from tournaments.models import (
    Entry,
    Event,
    SeatedTable,
    Standing,
    TableGame,
    TableGameCorrection,
    TableSeat,
)

pytestmark = pytest.mark.django_db


def final(tour: Tour, players: int, code: str = "2021-NC") -> tuple[Event, list[str]]:
    """A championship (2021-NC), seated and live, the first ``players`` players by id
    invited."""
    event = make_event(
        tour.season,
        code,
        "championship",
        format="seated",
        open_entry=False,
        day=date(2021, 2, 8),
    )
    field = sorted(tour.players.values(), key=lambda p: p.external_id)[:players]
    Entry.objects.bulk_create([Entry(event=event, player=p, basis="invited") for p in field])
    return event, [p.external_id for p in field]


def organiser() -> Client:
    return client_sign_in(Client(), make_staff("match-organiser", role=ORGANISER))


def hands(**by_player: str) -> dict[str, str]:
    return {f"hand-{key}": cards for key, cards in by_player.items()}


def test_a_final_played_as_a_cumulative_match_from_the_console(tour: Tour) -> None:
    event, (a, b, c, d) = final(tour, 4)
    client = organiser()
    console = f"/manage/events/{event.code}/"
    seated = client.post(
        f"{console}rounds/", {"seed": "3", "format": "cumulative", "target": "100"}, follow=True
    )
    assert "已排第 1 轮（抽签种子 3）。" in seated.content.decode()
    assert "累积法 · 目标 100 分" in seated.content.decode()
    games = f"{console}rounds/1/tables/1/games/"

    first = client.post(
        games, {"game": "1", **hands(**{a: "", b: "WD4", c: "GS G7", d: "R5"})}, follow=True
    )
    assert "已录入第 1 轮 1 号桌第 1 局。" in first.content.decode()
    bad = client.post(games, {"game": "2", **hands(**{a: "", b: "X9", c: "", d: ""})}, follow=True)
    assert "未能录入：" in bad.content.decode()
    assert TableGame.objects.count() == 1
    client.post(games, {"game": "2", **hands(**{a: "", b: "W", c: "R1", d: "B2"})})

    table = SeatedTable.objects.get(round__event=event, number=1)
    seats = {
        s.player.external_id: (s.place, s.points) for s in TableSeat.objects.filter(table=table)
    }
    # a: 82 + 53 = 135 >= 100 after game 2; the others 0, by fewer hand points: d 7, c 28, b 100
    assert seats == {a: (1, 4), d: (2, 2), c: (3, 1), b: (4, 0)}
    page = client.get(console).content.decode()
    assert "第 2 局决出" in page
    assert "录入本局" not in page  # the match is decided: no third game

    no_reason = client.post(
        games,
        {
            "game": "1",
            "correct": "1",
            "reason": "",
            **hands(**{a: "", b: "R9", c: "GS G7", d: "R5"}),
        },
        follow=True,
    )
    assert "未能录入：" in no_reason.content.decode()
    assert TableGameCorrection.objects.count() == 0
    fixed = client.post(
        games,
        {
            "game": "1",
            "correct": "1",
            "reason": "裁判复核",
            **hands(**{a: "", b: "R9", c: "GS G7", d: "R5"}),
        },
        follow=True,
    )
    assert "已更正第 1 轮 1 号桌第 1 局。" in fixed.content.decode()
    correction = TableGameCorrection.objects.get()
    assert correction.by is not None
    assert (correction.reason, correction.by.username) == ("裁判复核", "match-organiser")
    # a: 41 + 53 = 94 < 100: the match is open again, its result taken back
    assert TableSeat.objects.filter(table=table, place__isnull=False).count() == 0
    assert "录入本局" in client.get(console).content.decode()


def test_a_team_event_of_four_run_from_the_console(tour: Tour) -> None:
    event, players = final(tour, 4)
    client = organiser()
    console = f"/manage/events/{event.code}/"
    odd = client.post(f"{console}team-schedule/", {"seed": "1", "games_per_round": "0"})
    assert odd.status_code == 200
    assert not event.seated_rounds.exists()
    made = client.post(
        f"{console}team-schedule/", {"seed": "1", "games_per_round": "1"}, follow=True
    )
    assert "已排轮换搭档赛程：3 轮（抽签种子 1）。" in made.content.decode()

    expected = dict.fromkeys(players, 0)
    for number in (1, 2, 3):
        table = SeatedTable.objects.get(round__event=event, round__number=number)
        order = list(table.seats.order_by("seat").values_list("player__external_id", flat=True))
        # seat 1 goes out; seats 2 and 4 hold 5 + 9: the team of seats 1 and 3 wins 14 each
        cards = dict(zip(order, ["", "R5", "R1", "G9"], strict=True))
        done = client.post(
            f"{console}rounds/{number}/tables/1/games/", {"game": "1", **hands(**cards)}
        )
        assert done.status_code == 302
        for i, key in enumerate(order):
            expected[key] += 14 if i % 2 == 0 else -14

    totals = dict(Standing.objects.filter(event=event).values_list("player_key", "total"))
    assert totals == expected
    assert sum(totals.values()) == 0
    page = client.get(console).content.decode()
    assert page.count("本轮已完成") == 3
    assert "排下一轮" not in page  # a team event's rounds are its schedule
