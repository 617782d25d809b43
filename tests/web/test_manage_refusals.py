"""The organiser's console says a service's refusal in the page's language (issue 27): each
refused POST shows the refusal as a Chinese sentence naming what is wrong and where (the
service's ``ServiceError.say``, core/errors.py), never the API's English ``message``, and
writes nothing. The API keeps its English ``message`` and never sends ``say``."""

import html
import re
from datetime import date
from typing import Any

import pytest
from django.test import Client
from django.utils import translation
from django.utils.translation import gettext
from rest_framework.test import APIClient

from accounts.roles import ORGANISER
from core.errors import ServiceError, said
from flows.corrections import game_void
from tests.accounts.signin import client_sign_in, make_staff
from tests.tournaments.factories import make_event
from tests.web.test_manage import season_post
from tests.web.tour import Tour, seated_final
from tournaments.domain.matches import MatchFormat
from tournaments.models import (
    CalendarChange,
    Correction,
    Entry,
    Event,
    Game,
    Season,
    SeatedRound,
    SeatedTable,
    TableGame,
    TableGameCorrection,
    TableGameHand,
    TableSeat,
)
from tournaments.services.events import event_cancel
from tournaments.services.seated import seated_round_create
from tournaments.services.table_games import table_game_enter

pytestmark = pytest.mark.django_db

#: A refusal: a message at the top of the console, or the season form's error above it.
REFUSAL = re.compile(
    r'<ul class="errorlist nonfield"[^>]*>\s*<li>(.*?)</li>|<li class="message error">(.*?)</li>',
    re.S,
)
#: Two English words in a row: an untranslated sentence (a code like 2021-NC or X9 is not).
ENGLISH = re.compile(r"[A-Za-z]{2,}[\s,;:'-]+[A-Za-z]{2,}")
WATCHED = (
    Season,
    Event,
    Entry,
    SeatedRound,
    SeatedTable,
    TableSeat,
    TableGame,
    TableGameHand,
    TableGameCorrection,
    CalendarChange,
    Correction,
)


def organiser() -> Client:
    return client_sign_in(Client(), make_staff("refusals-organiser", role=ORGANISER))


def written() -> dict[str, Any]:
    """What a refused write must leave as it was."""
    state: dict[str, Any] = {model.__name__: model.objects.count() for model in WATCHED}
    state["statuses"] = sorted(Event.objects.values_list("code", "status", "starts_at"))
    state["voided"] = Game.objects.filter(voided=True).count()
    state["places"] = TableSeat.objects.filter(place__isnull=False).count()
    return state


def refusal(answer: Any) -> str:
    """The one refusal the page shows, as text."""
    assert answer.status_code == 200
    page: str = answer.content.decode()
    shown: list[str] = [html.unescape(a or b) for a, b in REFUSAL.findall(page)]
    assert len(shown) == 1, shown
    assert ENGLISH.search(shown[0]) is None, shown[0]
    return shown[0]


def finalised_final(tour: Tour, players: int = 8) -> Event:
    """The seated championship 2021-NC, round 1 drawn, then finalised."""
    event = seated_final(tour, players=players)
    Event.objects.filter(pk=event.pk).update(status="finalised")
    return event


def match_final(tour: Tour) -> tuple[Event, list[str]]:
    """2021-NC of four players, round 1 a cumulative match to 100; the players in seat
    order."""
    event = make_event(
        tour.season,
        "2021-NC",
        "championship",
        format="seated",
        open_entry=False,
        day=date(2021, 2, 8),
    )
    field = sorted(tour.players.values(), key=lambda p: p.external_id)[:4]
    Entry.objects.bulk_create([Entry(event=event, player=p, basis="invited") for p in field])
    seated_round_create(event=event, by=None, seed=3, match=MatchFormat("cumulative", 100))
    table = SeatedTable.objects.get(round__event=event, number=1)
    return event, list(table.seats.order_by("seat").values_list("player__external_id", flat=True))


def test_seating_a_round_of_a_finalised_final_is_refused_in_chinese(tour: Tour) -> None:
    event = finalised_final(tour)
    before = written()

    answer = organiser().post(f"/manage/events/{event.code}/rounds/", {"seed": "5"})

    assert refusal(answer) == "赛事 2021-NC 已定结果，不能再排轮次。"
    assert written() == before


def test_seating_the_next_round_before_the_last_has_its_results(tour: Tour) -> None:
    event = seated_final(tour, players=8)
    before = written()

    answer = organiser().post(f"/manage/events/{event.code}/rounds/", {"seed": ""})

    assert refusal(answer) == "第 1 轮还有桌次没有成绩：1、2 号桌；录完才能排下一轮。"
    assert written() == before


def test_entering_a_game_in_a_round_of_one_game_a_table(tour: Tour) -> None:
    event = seated_final(tour, players=8)
    keys = SeatedTable.objects.get(round__event=event, number=1).seats.values_list(
        "player__external_id", flat=True
    )
    before = written()

    answer = organiser().post(
        f"/manage/events/{event.code}/rounds/1/tables/1/games/",
        {"game": "1", **{f"hand-{key}": "R1" for key in keys}},
        follow=True,
    )

    assert refusal(answer) == (
        "未能录入：第 1 轮的赛制是单局（每桌一局，录入名次）：请录入各桌名次，而不是逐局手牌。"
    )
    assert written() == before


def test_entering_places_at_a_match_table(tour: Tour) -> None:
    event, players = match_final(tour)
    before = written()

    answer = organiser().post(
        f"/manage/events/{event.code}/rounds/1/tables/1/",
        {f"place-{key}": str(place) for place, key in enumerate(players, start=1)},
        follow=True,
    )

    assert refusal(answer) == (
        "未能录入：第 1 轮的赛制是累积法比赛（目标 100 分）：各桌成绩由每局结果得出，请逐局录入。"
    )
    assert written() == before


def test_a_match_game_with_an_unknown_card_or_out_of_turn(tour: Tour) -> None:
    event, (a, b, c, d) = match_final(tour)
    client = organiser()
    games = f"/manage/events/{event.code}/rounds/1/tables/1/games/"
    before = written()

    unknown = client.post(
        games,
        {"game": "1", f"hand-{a}": "", f"hand-{b}": "X9", f"hand-{c}": "", f"hand-{d}": "R5"},
        follow=True,
    )
    skipped = client.post(
        games,
        {"game": "3", f"hand-{a}": "", f"hand-{b}": "R1", f"hand-{c}": "", f"hand-{d}": "R5"},
        follow=True,
    )

    assert refusal(unknown) == f"未能录入：1 号桌第 1 局，{b}：本赛事的牌表没有 X9 这张牌。"
    assert refusal(skipped) == "未能录入：1 号桌下一局应是第 1 局，填的是第 3 局。"
    assert written() == before


def test_a_correction_that_would_decide_the_match_before_a_later_game(tour: Tour) -> None:
    event, (a, b, c, d) = match_final(tour)
    table = SeatedTable.objects.get(round__event=event, number=1)
    for number, hands in ((1, [["R5"], ["R1"], ["R2"]]), (2, [["R3"], ["R4"], ["R6"]])):
        left = {a: [], **dict(zip((b, c, d), hands, strict=True))}
        table_game_enter(table=table, number=number, hands=left, by=None)  # a: 8, then 21
    before = written()

    answer = organiser().post(
        f"/manage/events/{event.code}/rounds/1/tables/1/games/",
        {
            "game": "1",
            "correct": "1",
            "reason": "裁判复核",
            f"hand-{a}": "",
            f"hand-{b}": "WD4",
            f"hand-{c}": "W",
            f"hand-{d}": "R5",
        },
        follow=True,
    )

    # a would reach 105 in game 1, before game 2 was played
    assert refusal(answer) == "未能录入：1 号桌第 2 局：比赛已在第 1 局决出，之后不能再有对局。"
    assert written() == before


def test_a_season_that_exists_starts_on_a_tuesday_or_deals_30_cards(tour: Tour) -> None:
    client = organiser()
    before = written()

    again = client.post("/manage/seasons/new/", season_post(2021, "2021-01-04"))
    tuesday = client.post("/manage/seasons/new/", season_post(2022, "2022-01-04"))
    thirty = client.post(
        "/manage/seasons/new/", season_post(2022, "2022-01-03") | {"rule_hand_size": "30"}
    )

    assert refusal(again) == "2021 赛季已经存在。"
    assert refusal(tuesday) == "赛季须从星期一开始：2022-01-04 是星期二。"
    assert refusal(thirty) == "赛季规则有误：玩法规则：“起手张数”须为 1 到 20 张，填的是 30。"
    assert written() == before


def test_a_team_schedule_for_five_players_or_after_a_round(tour: Tour) -> None:
    five = make_event(
        tour.season,
        "2021-NT",
        "championship",
        format="seated",
        open_entry=False,
        day=date(2021, 2, 8),
    )
    field = sorted(tour.players.values(), key=lambda p: p.external_id)[:5]
    Entry.objects.bulk_create([Entry(event=five, player=p, basis="invited") for p in field])
    seated = seated_final(tour, players=8)
    client = organiser()
    before = written()

    odd = client.post(
        "/manage/events/2021-NT/team-schedule/", {"seed": "1", "games_per_round": "4"}
    )
    late = client.post(
        f"/manage/events/{seated.code}/team-schedule/", {"seed": "1", "games_per_round": "4"}
    )

    assert refusal(odd) == (
        "赛事 2021-NT 有 5 名参赛选手；轮换搭档赛事的人数须为 4 的倍数（4、8、12……）。"
    )
    assert refusal(late) == (
        "赛事 2021-NC 已排了 1 轮；轮换搭档赛程只能为还没有排过轮次的赛事一次排好全部轮次。"
    )
    assert written() == before


def test_cancelling_a_finalised_event_or_moving_a_cancelled_one(tour: Tour) -> None:
    dropped = (
        Event.objects.filter(season=tour.season, status="scheduled").order_by("-starts_at").first()
    )
    assert dropped is not None
    event_cancel(event=dropped, by=None, reason="赞助撤出")
    client = organiser()
    before = written()

    finalised = client.post(
        f"/manage/events/{tour.weekly.code}/change/", {"action": "cancel", "reason": "误操作"}
    )
    moved = client.post(
        f"/manage/events/{dropped.code}/change/",
        {
            "action": "move",
            "reason": "场馆调整",
            "starts_at": "2021-11-01T10:00",
            "ends_at": "2021-11-01T18:00",
        },
    )
    # Cancelling twice is no refusal: the second time changes nothing.
    twice = client.post(
        f"/manage/events/{dropped.code}/change/", {"action": "cancel", "reason": "再取消"}
    )

    assert refusal(finalised) == "赛事 2021-W01-F 已定结果，不能取消。"
    assert refusal(moved) == f"赛事 {dropped.code} 已取消，不能改期。"
    assert twice.status_code == 302
    assert written() == before


def test_an_invitation_to_a_finalised_event(tour: Tour) -> None:
    before = written()

    answer = organiser().post(
        f"/manage/events/{tour.weekly.code}/entries/", {"players": "p0000013", "reason": "外卡"}
    )

    assert refusal(answer) == "赛事 2021-W01-F 已定结果，不再接受参赛。"
    assert written() == before


def test_voiding_a_game_already_voided(tour: Tour) -> None:
    game = Game.objects.filter(event=tour.live, voided=False).order_by("record_id").first()
    assert game is not None
    game_void(game=game, by=None, reason="服务器重复上报")
    client = organiser()
    path = f"/manage/events/{tour.live.code}/void/"
    before = written()

    shown = client.post(path, {"game": game.record_id, "reason": "再作废"})
    confirmed = client.post(path, {"game": game.record_id, "reason": "再作废", "confirm": "true"})

    assert refusal(shown) == f"对局 {game.record_id} 已经作废。"
    assert refusal(confirmed) == f"对局 {game.record_id} 已经作废。"
    assert written() == before


def test_in_english_the_page_says_the_refusal_in_english_and_the_api_is_unchanged(
    tour: Tour, organiser_api: APIClient
) -> None:
    """Under /en/ the console says the refusal through the English catalogue (the msgid
    itself until the catalogue has it); the API's body keeps its English ``message`` and
    has no ``say``."""
    event = finalised_final(tour)
    before = written()

    page = organiser().post(f"/en/manage/events/{event.code}/rounds/", {"seed": "5"})
    body = organiser_api.post(f"/api/events/{event.code}/rounds/", {"seed": 5}, format="json")

    with translation.override("en"):
        english = gettext("赛事 %(code)s 已定结果，不能再排轮次。") % {"code": event.code}
    shown = [html.unescape(a or b) for a, b in REFUSAL.findall(page.content.decode())]
    assert shown == [english]
    assert body.status_code == 409
    assert body.json() == {
        "code": "conflict",
        "message": "event 2021-NC is finalised; cannot seat a round",
    }
    assert written() == before


def test_a_refusal_without_words_for_people_falls_back_to_the_api_message() -> None:
    assert said(ServiceError("event X is busy")) == "event X is busy"
    assert said(ServiceError("event X is busy", say="赛事 X 正忙。")) == "赛事 X 正忙。"
