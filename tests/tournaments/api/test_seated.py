"""The seated endpoints for matches and team events (SPEC §4): a final played as a match to
500 and a rotating-partners event of 8 players run through the API, organiser-only writes,
and errors in the ``{code, message, fields}`` shape that say what is wrong and where
(tournaments/api/seated.py)."""

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.tournaments.factories import make_seated_event
from tests.tournaments.services.test_table_games import FINAL_TO_500
from tests.tournaments.services.test_teams import EIGHT_TOTALS, partners_hands
from tournaments.models import SeatedRound, Standing, TableGame, TableGameCorrection

pytestmark = pytest.mark.django_db

EVENT = "/api/events/2021-NC"


def _hands(keys: list[str], hands: list[list[str]]) -> dict[str, list[str]]:
    return dict(zip(keys, hands, strict=True))


def test_a_final_played_as_a_match_to_500(
    api: APIClient, organiser_api: APIClient, reviewer_api: APIClient
) -> None:
    make_seated_event(4)
    body = {"seed": 7, "match": {"scoring": "cumulative", "target": 500}}
    assert api.post(f"{EVENT}/rounds/", body, format="json").status_code == 401
    assert reviewer_api.post(f"{EVENT}/rounds/", body, format="json").status_code == 403
    assert SeatedRound.objects.count() == 0

    seated = organiser_api.post(f"{EVENT}/rounds/", body, format="json")

    assert seated.status_code == 201
    answer = seated.json()
    assert (answer["format"], answer["target"], answer["games"]) == ("cumulative", 500, None)
    keys = [seat["player"] for seat in answer["tables"][0]["seats"]]
    games = f"{EVENT}/rounds/1/tables/1/games/"
    first = {"number": 1, "hands": _hands(keys, FINAL_TO_500[0])}
    assert api.post(games, first, format="json").status_code == 401
    assert TableGame.objects.count() == 0

    for number, hands in enumerate(FINAL_TO_500, start=1):
        entered = organiser_api.post(
            games, {"number": number, "hands": _hands(keys, hands)}, format="json"
        )
        assert entered.status_code == 201
    table = api.get(games).json()

    assert [(s["player"], s["total"], s["place"], s["points"]) for s in table["seats"]] == [
        (keys[0], 520, 1, 4),
        (keys[1], 221, 2, 2),
        (keys[2], 123, 3, 1),
        (keys[3], 0, 4, 0),
    ]
    assert (table["finished"], table["decided_in"], len(table["games"])) == (True, 5, 5)
    assert table["games"][1]["hands"][2] == {
        "player": keys[2],
        "hand": ["W", "W", "W"],
        "hand_points": 150,
        "score": 0,
    }
    again = organiser_api.post(
        games, {"number": 5, "hands": _hands(keys, FINAL_TO_500[4])}, format="json"
    )
    assert (again.status_code, again.json()) == (200, table)
    late = organiser_api.post(
        games, {"number": 6, "hands": _hands(keys, [[], [], [], []])}, format="json"
    )
    assert late.status_code == 409
    assert late.json() == {
        "code": "conflict",
        "message": "table 1: the match was decided in game 5; game 6 cannot be entered",
        "fields": {"number": 6},
    }
    board = api.get(f"{EVENT}/leaderboard/").json()["results"]
    assert [(row["player"], row["total"]) for row in board] == [
        (keys[0], 4),
        (keys[1], 2),
        (keys[2], 1),
        (keys[3], 0),
    ]

    # A correction takes the decision back (seat 4 held GS alone: 283 + 137 = 420) ...
    fixed = organiser_api.post(
        f"{games}5/correction/",
        {
            "hands": _hands(keys, [[], ["WD4", "W", "R9"], ["Y8"], ["GS"]]),
            "reason": "seat 4's wilds were game 6's",
        },
        format="json",
    )
    assert fixed.status_code == 200
    corrected = fixed.json()
    assert corrected["before"][keys[3]] == ["W", "WD4", "GS"]
    assert corrected["after"][keys[3]] == ["GS"]
    assert [s["total"] for s in corrected["table"]["seats"]] == [420, 221, 123, 0]
    assert [s["points"] for s in corrected["table"]["seats"]] == [None] * 4
    assert corrected["table"]["finished"] is False
    log = TableGameCorrection.objects.get()
    assert log.by is not None
    assert (log.by.username, log.reason) == ("org", "seat 4's wilds were game 6's")
    assert Standing.objects.filter(total__gt=0).count() == 0

    # ... and game 6 decides it: 420 + 109 + 8 + 50 + 20 = 607.
    six = organiser_api.post(
        games,
        {"number": 6, "hands": _hands(keys, [[], ["WD4", "W", "R9"], ["Y8"], ["W", "GS"]])},
        format="json",
    )
    assert six.status_code == 201
    assert [(s["total"], s["place"], s["points"]) for s in six.json()["seats"]] == [
        (607, 1, 4),
        (221, 2, 2),
        (123, 3, 1),
        (0, 4, 0),
    ]
    assert (six.json()["decided_in"], six.json()["games"][4]["corrections"]) == (6, 1)


def test_match_errors_say_what_is_wrong_and_where(organiser_api: APIClient) -> None:
    make_seated_event(4)
    body = {"seed": 7, "match": {"scoring": "elimination", "target": 100}}
    keys = [
        seat["player"]
        for seat in organiser_api.post(f"{EVENT}/rounds/", body, format="json").json()["tables"][0][
            "seats"
        ]
    ]
    games = f"{EVENT}/rounds/1/tables/1/games/"

    unknown = organiser_api.post(
        games, {"number": 1, "hands": _hands(keys, [[], ["Q7"], [], []])}, format="json"
    )
    assert (unknown.status_code, unknown.json()) == (
        400,
        {
            "code": "invalid",
            "message": f"table 1, game 1, {keys[1]}: unknown card 'Q7'",
            "fields": {"hands": {keys[1]: "unknown card 'Q7'"}, "card": "Q7"},
        },
    )
    bad = organiser_api.post(games, {"number": "first", "hands": {}}, format="json")
    assert bad.status_code == 400
    assert bad.json()["code"] == "invalid"
    assert set(bad.json()["fields"]) == {"number", "hands"}
    wrong = organiser_api.post(
        f"{EVENT}/rounds/",
        {"match": {"scoring": "penalty", "target": 0}},
        format="json",
    )
    assert wrong.status_code == 400
    assert set(wrong.json()["fields"]["match"]) == {"scoring", "target"}
    missing = organiser_api.post(
        f"{EVENT}/rounds/1/tables/1/games/3/correction/",
        {"hands": {keys[0]: []}, "reason": "x"},
        format="json",
    )
    assert (missing.status_code, missing.json()["message"]) == (
        404,
        "table 1 of round 1 of 2021-NC has no game 3",
    )
    no_table = organiser_api.get(f"{EVENT}/rounds/1/tables/9/games/")
    assert (no_table.status_code, no_table.json()["message"]) == (
        404,
        "round 1 of 2021-NC has no table 9",
    )
    assert TableGame.objects.count() == 0


def _play_partners_over_the_api(organiser_api: APIClient, schedule: dict[str, Any]) -> int:
    entered = 0
    for seated in schedule["rounds"]:
        for table in seated["tables"]:
            keys = [seat["player"] for seat in table["seats"]]
            path = f"{EVENT}/rounds/{seated['number']}/tables/{table['number']}/games/"
            for game in range(1, schedule["games_per_round"] + 1):
                hands = _hands(keys, partners_hands(seated["number"], game))
                answer = organiser_api.post(path, {"number": game, "hands": hands}, format="json")
                assert answer.status_code == 201, answer.json()
                entered += 1
    return entered


def test_a_rotating_partners_event_of_eight_players(
    api: APIClient, organiser_api: APIClient
) -> None:
    _, players = make_seated_event(8)
    keys = sorted(p.external_id for p in players)
    assert api.post(f"{EVENT}/team-schedule/", {"seed": 2021}, format="json").status_code == 401
    assert api.get(f"{EVENT}/team-schedule/").status_code == 404

    created = organiser_api.post(f"{EVENT}/team-schedule/", {"seed": 2021}, format="json")

    assert created.status_code == 201
    schedule = created.json()
    assert (schedule["seed"], schedule["games_per_round"], schedule["games_per_player"]) == (
        2021,
        4,
        28,
    )
    assert [(r["number"], r["format"], r["games"]) for r in schedule["rounds"]] == [
        (n, "partners", 4) for n in range(1, 8)
    ]
    assert [[s["player"] for s in t["seats"]] for t in schedule["rounds"][0]["tables"]] == [
        [keys[1], keys[0], keys[7], keys[5]],
        [keys[3], keys[6], keys[4], keys[2]],
    ]
    assert api.get(f"{EVENT}/team-schedule/").json() == schedule
    assert api.get(f"{EVENT}/rounds/4/replay/").json()["reproduced"] is True

    assert _play_partners_over_the_api(organiser_api, schedule) == 56

    standings = api.get(f"{EVENT}/team-standings/").json()
    assert standings["games_per_player"] == 28
    assert [(r["rank"], r["player"], r["total"], r["games"]) for r in standings["standings"]] == [
        (1, keys[2], 153, 28),
        (2, keys[6], 129, 28),
        (3, keys[5], 81, 28),
        (4, keys[1], 33, 28),
        (5, keys[0], 27, 28),
        (6, keys[4], -33, 28),
        (7, keys[3], -75, 28),
        (8, keys[7], -315, 28),
    ]
    totals = {row["player"]: row["total"] for row in standings["standings"]}
    assert [totals[key] for key in keys] == EIGHT_TOTALS
    table = api.get(f"{EVENT}/rounds/7/tables/2/games/").json()
    # Round 7: team 0 nets 3 x 7 - 57 = -36.
    assert [s["total"] for s in table["seats"]] == [-36, 36, -36, 36]
    assert (table["format"], table["games_per_table"], table["finished"]) == ("partners", 4, True)

    again = organiser_api.post(f"{EVENT}/team-schedule/", {"seed": 1}, format="json")
    assert (again.status_code, again.json()["message"]) == (
        409,
        "event 2021-NC already has 7 rounds seated; a team schedule seats all the rounds of an "
        "event with none",
    )


def test_a_team_schedule_needs_a_multiple_of_four(organiser_api: APIClient) -> None:
    make_seated_event(6)

    refused = organiser_api.post(
        f"{EVENT}/team-schedule/", {"seed": 1, "games_per_round": 4}, format="json"
    )

    assert (refused.status_code, refused.json()) == (
        400,
        {
            "code": "invalid",
            "message": "event 2021-NC has 6 entrants: a rotating-partners event needs a "
            "multiple of 4 players (4, 8, 12, …), got 6",
            "fields": {"entrants": 6},
        },
    )
    assert SeatedRound.objects.count() == 0
    zero = organiser_api.post(f"{EVENT}/team-schedule/", {"games_per_round": 0}, format="json")
    assert (zero.status_code, list(zero.json()["fields"])) == (400, ["games_per_round"])
    assert organiser_api.get(f"{EVENT}/team-standings/").status_code == 404
