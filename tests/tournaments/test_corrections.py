"""Corrections (SPEC §4): void, restore or fix a game, void a sanctioned player's games, and
everything downstream recomputed — standings, frozen ranks, champion, advancement, entries of
the fed event, title qualifications — logged with who, when, why and the diff."""

from datetime import date

import pytest

from accounts.models import Player, User
from core.errors import ConflictError, ServiceError
from flows.corrections import (
    game_fix,
    game_restore,
    game_void,
    player_games_restore,
    player_games_void,
)
from flows.finalisation import event_finalise
from tests.tournaments.factories import (
    AFTER,
    local,
    make_event,
    make_players,
    make_season,
    monthly_and_quarterly,
    play,
)
from tests.tournaments.test_finalise import _entries, _field
from tournaments.models import Correction, Entry, Event, Game, Seat, Standing
from tournaments.selectors.leaderboard import leaderboard_rows

pytestmark = pytest.mark.django_db


def _best_game(event: Event, player: Player) -> Game:
    best = Seat.objects.filter(event=event, player=player).order_by("-score").first()
    assert best is not None
    return best.game


def _qualifications() -> dict[str, str]:
    from titles.models import Qualification

    return {q.player.external_id: q.status for q in Qualification.objects.select_related("player")}


def test_a_void_after_finalisation_moves_champion_advancement_and_title(
    organiser: User,
) -> None:
    monthly, quarterly = monthly_and_quarterly()
    players = _field(monthly)
    event_finalise(event=monthly, by=organiser, now=AFTER)
    assert _entries(quarterly) == {"a1": ("advanced", "national rank 1 ≤ 1")}
    assert _qualifications() == {"a1": "pending"}

    correction = game_void(
        game=_best_game(monthly, players["a1"]), by=organiser, reason="server desync"
    )

    monthly.refresh_from_db()
    assert monthly.champion == players["a2"]
    assert _entries(quarterly) == {"a2": ("advanced", "national rank 1 ≤ 1")}
    assert _qualifications() == {"a1": "voided", "a2": "pending"}
    a1 = Standing.objects.get(event=monthly, player=players["a1"])
    assert (a1.games, a1.eligible, a1.rank, a1.advanced) == (14, False, None, False)
    board = [(r.player, r.rank) for r in leaderboard_rows(monthly)[0:10] if r.eligible]
    assert board == [("a2", 1), ("b1", 2), ("a3", 3), ("b2", 4), ("c1", 5)]
    a2 = Standing.objects.get(event=monthly, player=players["a2"])
    assert (a2.rank, a2.province_rank, a2.advanced, a2.by_national) == (1, 1, True, True)
    assert (correction.action, correction.by, correction.reason) == (
        "void_game",
        organiser,
        "server desync",
    )
    assert correction.diff == {
        "champion": {"before": "a1", "after": "a2"},
        "advanced": {"added": ["a2"], "removed": ["a1"]},
        "entries": {"added": ["a2"], "removed": ["a1"]},
        "fed": {"event": "2021-Q1-F", "played": False, "field_changed": False},
        "qualifications": {"withdrawn": "a1", "recorded": "a2"},
        "standings": [
            {
                "player": "a1",
                "before": {
                    "total": 60,
                    "games": 15,
                    "eligible": True,
                    "rank": 1,
                    "province_rank": 1,
                    "advanced": True,
                },
                "after": {
                    "total": 14,
                    "games": 14,
                    "eligible": False,
                    "rank": None,
                    "province_rank": None,
                    "advanced": False,
                },
            }
        ],
    }


def test_restoring_the_game_puts_everything_back(organiser: User) -> None:
    monthly, quarterly = monthly_and_quarterly()
    players = _field(monthly)
    event_finalise(event=monthly, by=organiser, now=AFTER)
    game = _best_game(monthly, players["a1"])
    game_void(game=game, by=organiser, reason="suspected desync")

    correction = game_restore(game=game, by=organiser, reason="logs check out")

    monthly.refresh_from_db()
    assert monthly.champion == players["a1"]
    assert _entries(quarterly) == {"a1": ("advanced", "national rank 1 ≤ 1")}
    assert _qualifications() == {"a1": "pending", "a2": "voided"}
    assert correction.diff["champion"] == {"before": "a2", "after": "a1"}
    assert Correction.objects.count() == 2


def test_refused_corrections_write_nothing(organiser: User) -> None:
    monthly, _ = monthly_and_quarterly()
    players = _field(monthly)
    game = _best_game(monthly, players["a1"])

    with pytest.raises(ServiceError, match="reason"):
        game_void(game=game, by=organiser, reason=" ")
    with pytest.raises(ConflictError, match="is not voided"):
        game_restore(game=game, by=organiser, reason="x")
    game.refresh_from_db()
    assert game.voided is False
    assert Correction.objects.count() == 0
    game_void(game=game, by=organiser, reason="x")
    with pytest.raises(ConflictError, match="already voided"):
        game_void(game=game, by=organiser, reason="x")
    assert Correction.objects.count() == 1


def test_a_correction_of_a_live_event_recomputes_the_leaderboard() -> None:
    monthly, _ = monthly_and_quarterly()
    players = _field(monthly)

    correction = game_void(game=_best_game(monthly, players["a2"]), by=None, reason="x")

    a2 = Standing.objects.get(event=monthly, player=players["a2"])
    assert (a2.games, a2.total, a2.rank) == (14, 14, None)
    assert "champion" not in correction.diff
    assert [row["player"] for row in correction.diff["standings"]] == ["a2"]


def test_fixing_a_games_hands_rescores_it() -> None:
    event = make_event(make_season())
    a, b, c = make_players(3)
    game = play(event, [(a, []), (b, ["R5"]), (c, ["W"])], ended_at=local(2021, 2, 2, 12))
    assert [s.score for s in Seat.objects.filter(game=game).order_by("seat")] == [55, -5, -50]

    correction = game_fix(
        game=game,
        hands={a.external_id: ["R9"], b.external_id: [], c.external_id: ["W"]},
        by=None,
        reason="hands swapped by the server",
    )

    seats = Seat.objects.filter(game=game).order_by("seat")
    assert [(s.hand, s.hand_points, s.score) for s in seats] == [
        ("R9", 9, -9),
        ("", 0, 59),
        ("W", 50, -50),
    ]
    totals = dict(Standing.objects.filter(event=event).values_list("player_key", "total"))
    assert totals == {a.external_id: -9, b.external_id: 59, c.external_id: -50}
    assert correction.diff["seats"]["before"][0] == [a.external_id, "", 0, 55]


@pytest.mark.parametrize(
    ("hands", "message"),
    [
        ({"a": ["R9"], "b": ["R0", "R0"], "c": []}, "card 'R0' appears 2 times"),
        ({"a": ["X1"], "b": [], "c": []}, "unknown card 'X1'"),
        ({"a": []}, "exactly the game's players"),
        ({"a": ["R1"], "b": ["R2"], "c": ["R3"]}, "no hand is empty"),
    ],
)
def test_a_bad_fix_names_the_problem_and_writes_nothing(
    hands: dict[str, list[str]], message: str
) -> None:
    event = make_event(make_season())
    players = [Player.objects.create(external_id=k, name=k, province="江苏") for k in "abc"]
    game = play(event, list(zip(players, [[], ["R5"], ["W"]], strict=True)), ended_at=AFTER)

    with pytest.raises(ServiceError, match=message):
        game_fix(game=game, hands=hands, by=None, reason="fix")

    assert [s.hand for s in Seat.objects.filter(game=game).order_by("seat")] == ["", "R5", "W"]
    assert Correction.objects.count() == 0


def test_a_sanction_voids_the_players_games_in_each_event_and_an_appeal_restores_them(
    reviewer: User,
) -> None:
    monthly, quarterly = monthly_and_quarterly()
    players = _field(monthly)
    weekly = make_event(monthly.season, "2021-W05-F", "weekly_final", feeds=monthly)
    event_finalise(event=weekly, by=None, now=AFTER)
    event_finalise(event=monthly, by=None, now=AFTER)
    a1 = players["a1"]

    corrections = player_games_void(
        player=a1, events=[weekly, monthly], by=reviewer, reason="case 12: multi-accounting"
    )

    assert [(c.event, c.action, c.player) for c in corrections] == [(monthly, "void_player", a1)]
    assert corrections[0].diff["champion"] == {"before": "a1", "after": "a2"}
    assert Seat.objects.filter(player=a1, voided=False).count() == 0
    assert Game.objects.filter(voided=True).count() == 0
    assert player_games_void(player=a1, events=[monthly], by=reviewer, reason="again") == []

    # Restoring a game of the sanctioned player keeps their seat voided.
    game = _best_game(monthly, a1)
    game_void(game=game, by=None, reason="x")
    game_restore(game=game, by=None, reason="x")
    assert Seat.objects.get(game=game, player=a1).voided is True

    restored = player_games_restore(player=a1, events=[monthly], by=reviewer, reason="appeal")

    monthly.refresh_from_db()
    assert [c.action for c in restored] == ["restore_player"]
    assert monthly.champion == a1
    assert _entries(quarterly) == {"a1": ("advanced", "national rank 1 ≤ 1")}
    assert Seat.objects.filter(player=a1, voided=True).count() == 0


def test_an_advanced_entry_moves_to_another_feeder_when_its_source_withdraws() -> None:
    monthly, quarterly = monthly_and_quarterly()
    players = _field(monthly)
    other = make_event(
        monthly.season,
        "2021-03-M",
        "monthly_final",
        day=date(2021, 3, 1),
        feeds=quarterly,
    )
    from tests.tournaments.factories import score_games

    score_games(other, {players["a1"]: [10] * 15})
    event_finalise(event=monthly, by=None, now=AFTER)
    event_finalise(event=other, by=None, force=True, now=AFTER)
    assert Entry.objects.get(event=quarterly, player=players["a1"]).source == monthly

    correction = game_void(game=_best_game(monthly, players["a1"]), by=None, reason="x")

    entry = Entry.objects.get(event=quarterly, player=players["a1"])
    assert (entry.source, entry.reason) == (other, "national rank 1 ≤ 1")
    assert correction.diff["entries"] == {"added": ["a2"], "removed": []}


def test_the_diff_gives_a_non_advancing_players_finalised_ranks_from_the_board() -> None:
    monthly, _ = monthly_and_quarterly()
    players = _field(monthly)
    event_finalise(event=monthly, by=None, now=AFTER)
    b2 = Standing.objects.get(event=monthly, player=players["b2"])
    assert (b2.rank, b2.advanced) == (None, False)  # only advancing rows store ranks

    correction = game_void(game=_best_game(monthly, players["b2"]), by=None, reason="x")

    (row,) = correction.diff["standings"]
    assert row["player"] == "b2"
    assert (row["before"]["rank"], row["before"]["province_rank"]) == (5, 2)
    assert (row["after"]["rank"], row["after"]["province_rank"]) == (None, None)
    assert correction.diff["champion"] == {"before": "a1", "after": "a1"}
    assert correction.diff["advanced"] == {"added": [], "removed": []}
