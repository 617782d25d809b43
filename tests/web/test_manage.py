"""The organiser's console (issue 26): who may open it, uploading a results file with a bad
record and downloading its rejects, finalising, and voiding a game after its plan."""

import gzip
import json
import re
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from accounts.roles import GAME_SERVER, ORGANISER, REVIEWER
from core.models import Job
from tests.accounts.signin import client_sign_in, make_staff
from tests.tournaments.conftest import make_record
from tests.web.tour import Tour
from tournaments.models import (
    Correction,
    Entry,
    Event,
    Game,
    Season,
    Seat,
    SeatedRound,
    Standing,
    TableGame,
    Upload,
)
from tournaments.models.events import default_quotas

pytestmark = pytest.mark.django_db

OPEN = "2021-W06-Q"  # open at the tour's NOW


def signed_in(role: str | None) -> Client:
    client = Client()
    if role == "anonymous":
        return client
    user = make_staff(f"u-{role}", role=None if role == "player" else role)
    return client_sign_in(client, user)


def record(key: str, **fields: Any) -> dict[str, Any]:
    return make_record(
        key,
        event=OPEN,
        started_at="2021-02-08T14:00:00+08:00",
        ended_at="2021-02-08T14:02:00+08:00",
        **fields,
    )


def jsonl(records: list[Any], *, gz: bool = False, name: str = "results.jsonl") -> Any:
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()
    if gz:
        return SimpleUploadedFile(name + ".gz", gzip.compress(text))
    return SimpleUploadedFile(name, text)


PAGES = ["/manage/", f"/manage/events/{OPEN}/", "/manage/seasons/new/"]


@pytest.mark.parametrize("role", ["anonymous", "player", GAME_SERVER, REVIEWER])
def test_only_organisers_open_the_console_and_refused_forms_write_nothing(
    tour: Tour, role: str
) -> None:
    client = signed_in(role)
    game = Game.objects.filter(event=tour.live).first()
    assert game is not None
    kept = Upload.objects.create(
        event=tour.live,
        name="r.jsonl",
        lines=1,
        ingested=0,
        duplicates=0,
        conflicts=0,
        rejected=1,
        rejects='{"line": 1}\n',
    )
    job = Job.objects.create(task="core.ping", subject=OPEN)
    for path in [*PAGES, f"/manage/uploads/{kept.pk}/rejects.jsonl", f"/manage/jobs/{job.id}/"]:
        answer = client.get(path)
        if role == "anonymous":
            assert answer.status_code == 302
            assert answer["Location"] == f"/signin/?next={path}"
        else:
            assert answer.status_code == 403
    posts: dict[str, dict[str, Any]] = {
        f"/manage/events/{OPEN}/upload/": {"file": jsonl([record("g-refused")])},
        f"/manage/events/{OPEN}/finalise/": {"force": "on"},
        f"/manage/events/{OPEN}/change/": {"action": "cancel", "reason": "x"},
        f"/manage/events/{tour.live.code}/entries/": {"players": "p0000001", "reason": "x"},
        "/manage/seasons/new/": season_post(2022, "2022-01-03"),
        f"/manage/events/{OPEN}/rounds/": {"seed": "1", "format": "cumulative", "target": "500"},
        f"/manage/events/{OPEN}/rounds/1/tables/1/": {"place-p0000001": "1"},
        f"/manage/events/{OPEN}/rounds/1/tables/1/games/": {"game": "1", "hand-p0000001": ""},
        f"/manage/events/{OPEN}/team-schedule/": {"seed": "1", "games_per_round": "4"},
        f"/manage/events/{tour.live.code}/void/": {
            "game": game.record_id,
            "reason": "x",
            "confirm": "true",
        },
    }
    for path, data in posts.items():
        assert client.post(path, data).status_code in (302, 403)
    assert list(Upload.objects.all()) == [kept]
    assert not Game.objects.filter(record_id="g-refused").exists()
    assert Event.objects.get(code=OPEN).status == "scheduled"
    assert not Season.objects.filter(year=2022).exists()
    assert not Entry.objects.filter(event=tour.live, reason="x").exists()
    assert not Game.objects.get(pk=game.pk).voided
    assert Correction.objects.count() == 0
    assert not SeatedRound.objects.exists()
    assert not TableGame.objects.exists()


def test_the_dashboard_shows_every_event_and_what_needs_the_organiser(tour: Tour) -> None:
    html = signed_in(ORGANISER).get("/manage/?season=2021").content.decode()
    listed = re.findall(r'href="/manage/events/([^/]+)/"', html.split("赛季日程", 1)[1])
    assert listed == list(
        Event.objects.filter(season=tour.season)
        .order_by("starts_at", "code")
        .values_list("code", flat=True)
    )
    needs = html.split("待处理", 1)[1].split("赛季日程", 1)[0]
    closed = [
        e.code
        for e in Event.objects.filter(season=tour.season, status="scheduled").order_by(
            "starts_at", "code"
        )
        if e.ends_at < tour.live.starts_at
    ]
    assert re.findall(r'<span class="code muted">([^<]+)</span>', needs) == closed
    row = html.split(f'href="/manage/events/{tour.live.code}/"', 1)[1].split("</tr>", 1)[0]
    standings = Standing.objects.filter(event=tour.live)
    seats = Seat.objects.filter(game__event=tour.live, game__voided=False).count()
    assert re.findall(r'<td class="num">(\d+)</td>', row) == [str(standings.count()), str(seats)]
    assert seats > 0
    finalised = html.split(f'href="/manage/events/{tour.weekly.code}/"', 1)[1].split("</tr>", 1)[0]
    assert re.findall(r'<td class="num">(\d+)</td>', finalised) == []  # settled: not counted


@pytest.mark.parametrize("gz", [False, True])
def test_an_upload_with_a_bad_record_stores_the_good_ones_and_offers_the_reject(
    tour: Tour, gz: bool
) -> None:
    client = signed_in(ORGANISER)
    bad = record("g-bad", hands=([], [], ["R5"], ["WD4"]))  # two empty hands in an "out" game
    good = [
        record("g-good-1"),
        record("g-good-2", players=("p0000005", "p0000006", "p0000007", "p0000008")),
    ]

    answer = client.post(
        f"/manage/events/{OPEN}/upload/",
        {"file": jsonl([good[0], bad, good[1]], gz=gz)},
        follow=True,
    )

    html = answer.content.decode()
    assert "3 行，新增 2 局，重复 0，冲突 0，拒收 1。" in html
    assert set(
        Game.objects.filter(record_id__startswith="g-good").values_list("record_id", flat=True)
    ) == {"g-good-1", "g-good-2"}
    assert not Game.objects.filter(record_id="g-bad").exists()
    done = Upload.objects.get()
    assert done.by is not None
    assert (done.lines, done.ingested, done.rejected, done.by.username) == (3, 2, 1, "u-organiser")
    download = client.get(f"/manage/uploads/{done.pk}/rejects.jsonl")
    assert (
        download["Content-Disposition"] == f'attachment; filename="upload-{done.pk}.rejects.jsonl"'
    )
    rows = [json.loads(line) for line in download.content.decode().splitlines()]
    assert [(r["line"], r["id"], r["record"]) for r in rows] == [(2, "g-bad", bad)]
    assert "empty" in rows[0]["reason"]

    again = client.post(f"/manage/events/{OPEN}/upload/", {"file": jsonl([good[0]])}, follow=True)
    assert "1 行，新增 0 局，重复 1，冲突 0，拒收 0。" in again.content.decode()
    assert Game.objects.filter(record_id="g-good-1").count() == 1


def test_a_file_that_is_not_jsonl_is_refused_and_nothing_is_written(tour: Tour) -> None:
    client = signed_in(ORGANISER)
    wrong = client.post(
        f"/manage/events/{OPEN}/upload/", {"file": SimpleUploadedFile("r.csv", b"a,b")}
    )
    broken = client.post(
        f"/manage/events/{OPEN}/upload/",
        {"file": SimpleUploadedFile("r.jsonl.gz", b"\x1f\x8bnot gzip")},
    )
    assert "只接受 .jsonl 或 .jsonl.gz 文件。" in wrong.content.decode()
    assert "无法读取文件" in broken.content.decode()
    assert Upload.objects.count() == 0


def test_finalising_an_open_event_needs_force_and_then_finalises_once(
    tour: Tour, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    client = signed_in(ORGANISER)
    weekly = Event.objects.get(code=OPEN)

    refused = client.post(f"/manage/events/{OPEN}/finalise/", {}, follow=True)
    assert (
        "未能确认结果：赛事时段到 2021-02-14 23:59 才结束；"
        "如需提前确认，请勾选“赛事时段未结束也确认”。" in refused.content.decode()
    )
    fed = tour.live.feeds
    assert fed is not None
    later = client.post(f"/manage/events/{fed.code}/finalise/", {}, follow=True)
    assert f"未能确认结果：须先确认 {tour.live.code}" in later.content.decode()
    assert Event.objects.get(pk=weekly.pk).status == "scheduled"

    with django_capture_on_commit_callbacks(execute=True):
        queued = client.post(f"/manage/events/{OPEN}/finalise/", {"force": "on"})
    done = client.get(queued["Location"])
    assert "已提交确认结果任务。" in done.content.decode()
    assert Event.objects.get(pk=weekly.pk).status == "finalised"
    job = Job.objects.get(subject=OPEN)
    assert queued["Location"] == f"/manage/events/{OPEN}/?job={job.id}"
    panel = done.content.decode().split(f'id="job-{job.id}"', 1)[0].rsplit("<div", 1)[1]
    assert 'class="job job-succeeded"' in panel
    fragment = client.get(f"/manage/jobs/{job.id}/").content.decode()
    assert "已完成" in fragment
    assert "hx-get" not in fragment  # finished: the panel stops polling
    twice = client.post(f"/manage/events/{OPEN}/finalise/", {"force": "on"}, follow=True)
    assert "本赛事已定，无需再次确认。" in twice.content.decode()


def test_voiding_a_game_shows_the_plan_first_then_writes_and_logs_it(
    tour: Tour, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    client = signed_in(ORGANISER)
    game = Game.objects.filter(event=tour.live, voided=False).order_by("record_id").first()
    assert game is not None
    path = f"/manage/events/{tour.live.code}/void/"

    shown = client.post(path, {"game": game.record_id, "reason": "服务器重复上报"})

    html = shown.content.decode()
    assert f"作废 {game.record_id} 将带来以下变化（尚未写入）" in html
    assert f"<strong>{tour.live.code}</strong> · void_game" in html
    plan = html.split('class="plan"', 1)[1].split("</ol>", 1)[0]
    seated = sorted(game.seats.values_list("player__external_id", flat=True))
    changed = re.findall(r"<li>(p\d{7}): ", plan)
    assert changed == seated  # each of the game's players loses it
    assert "4 局 → " in plan
    assert not Game.objects.get(pk=game.pk).voided
    assert Correction.objects.count() == 0

    with django_capture_on_commit_callbacks(execute=True):
        done = client.post(
            path,
            {"game": game.record_id, "reason": "服务器重复上报", "confirm": "true"},
            follow=True,
        )
    assert f"已作废 {game.record_id}。" in done.content.decode()
    assert Game.objects.get(pk=game.pk).voided
    logged = Correction.objects.get()
    assert logged.by is not None
    assert (logged.action, logged.reason, logged.by.username) == (
        "void_game",
        "服务器重复上报",
        "u-organiser",
    )
    assert "服务器重复上报" in done.content.decode().split("更正记录", 1)[1]


def test_a_game_of_another_event_or_no_reason_is_refused(tour: Tour) -> None:
    client = signed_in(ORGANISER)
    other = Game.objects.exclude(event=tour.live).first()
    assert other is not None
    path = f"/manage/events/{tour.live.code}/void/"
    elsewhere = client.post(path, {"game": other.record_id, "reason": "x", "confirm": "true"})
    blank = client.post(path, {"game": other.record_id, "reason": "", "confirm": "true"})
    assert "本赛事没有这一局。" in elsewhere.content.decode()
    assert blank.status_code == 200
    assert not Game.objects.get(pk=other.pk).voided
    assert Correction.objects.count() == 0


def test_signing_in_as_an_organiser_lands_on_the_console(tour: Tour) -> None:
    html = signed_in(ORGANISER).get("/").content.decode()
    assert 'href="/manage/"' in html
    assert 'href="/review/"' not in html


def season_post(year: int, start: str, **quotas: int) -> dict[str, Any]:
    data: dict[str, Any] = {
        "year": year,
        "start": start,
        "name": "",
        "weeks": 52,
        "preset": "classic",
    }
    for kind, places in default_quotas().items():
        for scope in ("national", "per_province"):
            data[f"quota_{kind}_{scope}"] = quotas.get(f"{kind}_{scope}", places[scope])
    return data


def test_an_organiser_creates_a_season_with_its_quotas(tour: Tour) -> None:
    client = signed_in(ORGANISER)
    form = client.get("/manage/seasons/new/").content.decode()
    assert 'name="quota_weekly_final_national" value="100"' in form

    done = client.post(
        "/manage/seasons/new/",
        season_post(2022, "2022-01-03", weekly_final_national=80),
        follow=True,
    )

    season = Season.objects.get(year=2022)
    assert season.quotas["weekly_final"] == {"national": 80, "per_province": 10}
    assert season.quotas["monthly_final"] == default_quotas()["monthly_final"]
    assert f"已创建 2022 赛季：{season.events.count()} 项赛事。" in done.content.decode()
    assert season.events.filter(kind="weekly_qualifier").count() == 52
    assert done.redirect_chain[-1][0] == "/manage/?season=2022"
    assert season.play_ruleset == {"preset": "classic", "switches": {}}


def test_an_organiser_creates_a_season_with_its_rules_of_play(tour: Tour) -> None:
    client = signed_in(ORGANISER)
    form = client.get("/manage/seasons/new/").content.decode()
    assert '<option value="yiqiyounuo">一起优诺（网易手游）</option>' in form
    rules = {
        "preset": "ubisoft",
        "rule_seven_zero": "true",
        "rule_challenge": "false",
        "rule_stacking": "",
        "rule_hand_size": "8",
    }
    client.post("/manage/seasons/new/", season_post(2022, "2022-01-03") | rules)
    assert Season.objects.get(year=2022).play_ruleset == {
        "preset": "ubisoft",
        "switches": {"challenge": False, "seven_zero": True, "hand_size": 8},
    }
    bad = client.post(
        "/manage/seasons/new/",
        season_post(2023, "2023-01-02") | {"preset": "hearts", "rule_draw": "twice"},
    )
    assert set(bad.context["form"].errors) == {"preset", "rule_draw"}
    assert not Season.objects.filter(year=2023).exists()


def test_a_season_that_cannot_be_is_refused_with_its_reason_and_nothing_written(
    tour: Tour,
) -> None:
    client = signed_in(ORGANISER)
    events = Event.objects.count()
    tuesday = client.post("/manage/seasons/new/", season_post(2022, "2022-01-04"))
    again = client.post("/manage/seasons/new/", season_post(2021, "2021-01-04"))
    negative = client.post(
        "/manage/seasons/new/", season_post(2022, "2022-01-03", weekly_final_national=-1)
    )
    assert "赛季须从星期一开始：2022-01-04 是星期二。" in tuesday.content.decode()
    assert "2021" in again.content.decode().split('class="errorlist', 1)[1][:300]
    assert negative.status_code == 200
    assert not Season.objects.filter(year=2022).exists()
    assert Event.objects.count() == events


def test_moving_and_cancelling_an_event_from_its_console(tour: Tour) -> None:
    client = signed_in(ORGANISER)
    event = (
        Event.objects.filter(season=tour.season, status="scheduled").order_by("-starts_at").first()
    )
    assert event is not None
    path = f"/manage/events/{event.code}/change/"
    starts = timezone.localtime(event.starts_at) + timedelta(days=1)
    ends = timezone.localtime(event.ends_at) + timedelta(days=1)

    no_reason = client.post(path, {"action": "cancel", "reason": ""})
    no_window = client.post(path, {"action": "move", "reason": "场馆调整"})
    moved = client.post(
        path,
        {
            "action": "move",
            "starts_at": starts.strftime("%Y-%m-%dT%H:%M"),
            "ends_at": ends.strftime("%Y-%m-%dT%H:%M"),
            "reason": "场馆调整",
        },
        follow=True,
    )

    assert no_reason.status_code == 200
    assert "改期需要新的开始和结束时间。" in no_window.content.decode()
    assert "已改期。" in moved.content.decode()
    event.refresh_from_db()
    assert timezone.localtime(event.starts_at).strftime("%Y-%m-%dT%H:%M") == starts.strftime(
        "%Y-%m-%dT%H:%M"
    )
    cancelled = client.post(path, {"action": "cancel", "reason": "赞助撤出"}, follow=True)
    assert "已取消本赛事。" in cancelled.content.decode()
    event.refresh_from_db()
    assert event.status == "cancelled"
    finalised = client.post(
        f"/manage/events/{tour.weekly.code}/change/", {"action": "cancel", "reason": "x"}
    )
    assert finalised.status_code == 200
    assert Event.objects.get(pk=tour.weekly.pk).status == "finalised"


def test_a_seated_final_of_16_over_3_rounds_run_from_the_console(
    tour: Tour, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    from tests.web.tour import seated_final
    from tournaments.models import SeatedTable

    event = seated_final(tour, players=16)  # round 1 already drawn from seed 7
    client = signed_in(ORGANISER)
    console = f"/manage/events/{event.code}/"

    early = client.post(f"{console}rounds/", {"seed": ""}, follow=True)
    assert "第 1 轮还有桌次没有成绩" in early.content.decode()  # no result yet
    assert event.seated_rounds.count() == 1

    for number in (1, 2, 3):
        if number > 1:
            seated = client.post(f"{console}rounds/", {"seed": str(100 + number)}, follow=True)
            assert f"已排第 {number} 轮（抽签种子 {100 + number}）。" in seated.content.decode()
        tables = SeatedTable.objects.filter(round__event=event, round__number=number)
        assert tables.count() == 4
        for table in tables.order_by("number"):
            keys = sorted(table.seats.values_list("player__external_id", flat=True))
            places = {f"place-{key}": str(i) for i, key in enumerate(keys, start=1)}
            done = client.post(f"{console}rounds/{number}/tables/{table.number}/", places)
            assert done.status_code == 302
        assert not tables.filter(result_entered_at__isnull=True).exists()

    table = SeatedTable.objects.get(round__event=event, round__number=3, number=1)
    wrong = client.post(f"{console}rounds/3/tables/1/", {})
    assert wrong.status_code == 302
    assert SeatedTable.objects.get(pk=table.pk).result_entered_at == table.result_entered_at

    standings = Standing.objects.filter(event=event)
    assert standings.count() == 16
    assert set(standings.values_list("games", flat=True)) == {3}
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"{console}finalise/", {"force": "on"})
    event.refresh_from_db()
    assert event.status == "finalised"
    best = standings.order_by("-total", "player_key").first()
    assert best is not None
    assert event.champion is not None
    assert event.champion.external_id == best.player_key


def test_building_a_seated_final_s_field_by_invitation(tour: Tour) -> None:
    from tests.tournaments.factories import make_event

    final = make_event(
        tour.season,
        "2021-NC2",
        "championship",
        format="seated",
        open_entry=False,
        day=date(2021, 2, 9),
    )
    client = signed_in(ORGANISER)
    path = f"/manage/events/{final.code}/entries/"

    unknown = client.post(path, {"players": "p0000001 nobody-x", "reason": "全国前列"})
    no_reason = client.post(path, {"players": "p0000001", "reason": ""})
    done = client.post(
        path, {"players": "p0000001, p0000002\np0000003", "reason": "全国前列"}, follow=True
    )
    again = client.post(path, {"players": "p0000001", "reason": "全国前列"}, follow=True)

    assert "没有这些选手：nobody-x" in unknown.content.decode()
    assert no_reason.status_code == 200
    assert "已邀请 3 名选手。" in done.content.decode()
    assert "已邀请 0 名选手。" in again.content.decode()
    assert sorted(
        Entry.objects.filter(event=final).values_list("player__external_id", flat=True)
    ) == ["p0000001", "p0000002", "p0000003"]
    open_entry = client.post(
        f"/manage/events/{OPEN}/entries/", {"players": "p0000001", "reason": "x"}, follow=True
    )
    assert "本赛事对所有选手开放，无需邀请。" in open_entry.content.decode()
    assert not Entry.objects.filter(event__code=OPEN).exists()
