"""The event index (``/events/``) and a seated event's tables (``/events/<code>/tables/``):
every event of the season listed and filterable, and "where do I sit" (issue 26)."""

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts.models import Player
from tests.web.test_pages import page, rows
from tests.web.tour import NOW, Tour, seated_final
from tournaments.models import Event, TableSeat
from tournaments.services.seated import seated_result_enter
from web.selectors import event_state

pytestmark = pytest.mark.django_db


def listed(html: str) -> list[str]:
    return re.findall(r'<span class="code muted">([^<]+)</span>', html)


def test_the_index_lists_the_season_with_its_weekly_qualifiers(tour: Tour) -> None:
    html = page("/events/?season=2021")
    codes = listed(html)
    everything = list(
        Event.objects.filter(season=tour.season)
        .order_by("starts_at", "code")
        .values_list("code", flat=True)
    )
    assert codes == everything[:50]
    assert "2021-W01-Q" in codes
    assert f"{len(everything)} 项赛事" in html


@pytest.mark.parametrize("state", ["upcoming", "live", "closed", "finalised", "cancelled"])
def test_the_state_filter_lists_exactly_the_events_in_that_state(tour: Tour, state: str) -> None:
    html = page(f"/events/?season=2021&state={state}")
    expected = [
        e.code
        for e in Event.objects.filter(season=tour.season).order_by("starts_at", "code")
        if event_state(e, NOW) == state
    ]
    assert listed(html) == expected[:50]
    if state in ("live", "finalised"):
        assert expected  # the tour has some: the check is not vacuous


def test_the_kind_filter_and_a_bad_filter(tour: Tour) -> None:
    html = page("/events/?season=2021&kind=monthly_final")
    assert listed(html)[:2] == ["2021-01-M", "2021-02-M"]
    assert all(code.endswith("-M") for code in listed(html))
    # A filter value that is not one of the choices is ignored, not a 500.
    assert listed(page("/events/?season=2021&kind=nope&state=nope")) == listed(
        page("/events/?season=2021")
    )
    page("/events/?season=1999", status=404)


def test_the_state_of_an_event(tour: Tour) -> None:
    assert event_state(tour.live, NOW) == "live"
    assert event_state(tour.weekly, NOW) == "finalised"
    tour.live.status = "scheduled"
    assert event_state(tour.live, tour.live.ends_at) == "live"  # its last instant
    assert event_state(tour.live, tour.live.starts_at.replace(year=2020)) == "upcoming"
    assert event_state(tour.live, tour.live.ends_at.replace(year=2022)) == "closed"


def test_the_index_runs_a_fixed_number_of_queries(tour: Tour) -> None:
    with CaptureQueriesContext(connection) as first:
        Client().get("/events/?season=2021")
    with CaptureQueriesContext(connection) as again:
        Client().get("/events/?season=2021&page=2")
    assert len(first) == len(again) <= 8


def test_the_calendar_links_the_index(tour: Tour) -> None:
    assert 'href="/events/?season=2021"' in page("/seasons/2021/")


# --- a seated event ---------------------------------------------------------------------------


def test_the_tables_page_shows_the_rounds_tables_seats_and_results(tour: Tour) -> None:
    event = seated_final(tour)
    first = event.seated_rounds.get().tables.order_by("number").first()
    assert first is not None
    seats = list(first.seats.order_by("seat").select_related("player"))
    seated_result_enter(
        table=first,
        places={s.player.external_id: i for i, s in enumerate(seats, start=1)},
        by=tour.reviewer,
    )

    html = page("/events/2021-NC/tables/")

    assert "第 1 轮" in html
    assert "抽签种子 7" in html
    tables = re.findall(r'id="r1-t(\d+)"', html)
    assert tables == [str(n) for n in range(1, event.seated_rounds.get().tables.count() + 1)]
    one = html.split('id="r1-t1"', 1)[1].split('class="seated-table"', 1)[0]
    assert re.findall(r'href="/players/([^/]+)/"', one) == [s.player.external_id for s in seats]
    assert "已录入" in one
    assert [f"第 {i} 名" in one for i in range(1, len(seats) + 1)] == [True] * len(seats)


def test_where_do_i_sit_by_id_or_by_a_part_of_the_name(tour: Tour) -> None:
    event = seated_final(tour)
    seat = TableSeat.objects.filter(table__round__event=event).select_related("player", "table")[3]
    player: Player = seat.player

    by_id = page(f"/events/2021-NC/tables/?q={player.external_id}")
    by_name = page(f"/events/2021-NC/tables/?q={player.name[1:]}")
    nobody = page("/events/2021-NC/tables/?q=nobody-here")

    where = f"第 1 轮 · {seat.table.number} 号桌 · {seat.seat} 号座"
    found = by_id.split('class="list seat-found"', 1)[1].split("</ul>", 1)[0]
    assert where in found
    assert found.count("<li>") == 1
    assert f'href="#r1-t{seat.table.number}"' in found
    assert where in by_name.split('class="list seat-found"', 1)[1].split("</ul>", 1)[0]
    assert "最新一轮没有找到选手“nobody-here”" in nobody
    assert 'class="mine"' in by_id


def test_the_tables_page_of_an_online_event_is_a_404(tour: Tour) -> None:
    page(f"/events/{tour.live.code}/tables/", status=404)
    page("/events/NOPE/tables/", status=404)


def test_a_live_seated_event_refreshes_its_tables(tour: Tour) -> None:
    seated_final(tour)
    html = page("/events/2021-NC/tables/")
    assert 'hx-get="/events/2021-NC/tables/"' in html
    fragment = Client().get("/events/2021-NC/tables/", HTTP_HX_REQUEST="true")
    assert fragment.status_code == 200
    assert "<html" not in fragment.content.decode()
    assert 'id="r1-t1"' in fragment.content.decode()


def test_a_seated_event_page_shows_its_standings_not_province_tabs(tour: Tour) -> None:
    event = seated_final(tour)
    first = event.seated_rounds.get().tables.order_by("number").first()
    assert first is not None
    seated = [s.player.external_id for s in first.seats.order_by("seat").select_related("player")]
    seated_result_enter(
        table=first, places={key: i for i, key in enumerate(seated, start=1)}, by=tour.reviewer
    )

    html = page("/events/2021-NC/")

    board = html.split('class="card board-card"', 1)[1]
    assert 'href="/events/2021-NC/tables/"' in board
    assert "?province=" not in board
    assert "桌数" in board
    assert "局数" not in board
    shown = rows(html)
    assert sorted(re.search(r"(p\d{7})", r[1])[1] for r in shown) == sorted(seated)  # type: ignore[index]
    assert [r[4] for r in shown] == ["1"] * len(seated)  # one table played each


def test_the_index_shows_each_events_state_label(tour: Tour) -> None:
    html = page("/events/?season=2021&state=closed")
    for code in listed(html):
        row = html.split(f'<span class="code muted">{code}</span>', 1)[1].split("</tr>", 1)[0]
        assert "已结束待定" in row


def test_the_pages_in_english(tour: Tour) -> None:
    seated_final(tour)
    assert "All events of the 2021 season" in page("/en/events/?season=2021&state=live")
    assert "3 events" in page("/en/events/?season=2021&state=live")  # and 2021-NC
    assert "Where do I sit?" in page("/en/events/2021-NC/tables/")
