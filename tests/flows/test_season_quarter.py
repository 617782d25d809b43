"""A season's first quarter end to end (issue 23, SPEC §2, §4, §6, §8), on PostgreSQL.

2021 with 200 simulated players: the qualifiers W01..W13 and their weekly finals, the
monthly finals 01-M..03-M and 2021-Q1-F, every game ingested through the flow. Each event
finalises by itself, in order, by the beat job (``flows.finalisation.events_auto_finalise``)
run after each window. A star player who plays only the first week and wins 01-M is then
sanctioned in W01-Q: the plan is previewed, applied, and the organiser's replay decisions
carry it through W01-F to 01-M's champion and their Master qualification; Q1-F, already
played, keeps its result with a logged reason. Finally 01-M's field and champion are
recomputed from the raw seats in plain Python (best N sums, quotas, national ∪ provincial,
the documented tie-breaks) and agree with what is stored.
"""

from collections import defaultdict
from dataclasses import replace
from datetime import date, datetime, timedelta

import pytest
from django.conf import settings

from accounts.models import Player, User
from flows.corrections import event_field_change_resolve, player_games_void, preview
from flows.finalisation import events_auto_finalise
from flows.ingest import games_ingest
from titles import services as titles
from titles.models import Qualification
from tournaments.models import Correction, Entry, Event, EventStatus, Seat
from tournaments.services.seasons import season_create
from tournaments.simulation import SimPlayer, simulate_games, simulate_players

pytestmark = pytest.mark.django_db

QUOTAS = {
    "weekly_qualifier": {"national": 0, "per_province": 2},
    "weekly_final": {"national": 10, "per_province": 1},
    "monthly_final": {"national": 5, "per_province": 0},
    "quarterly_final": {"national": 1, "per_province": 0},
    "annual_final": {"national": 0, "per_province": 0},
}
BEST_N = MINIMUM = 5
QUARTER = [
    *(f"2021-W{w:02d}-{k}" for w in range(1, 14) for k in ("Q", "F")),
    "2021-01-M",
    "2021-02-M",
    "2021-03-M",
    "2021-Q1-F",
]
STAR_EVENTS = {"2021-W01-Q", "2021-W01-F", "2021-01-M"}


def _players() -> tuple[list[SimPlayer], SimPlayer]:
    players = simulate_players(200, seed=23)
    star = replace(players[0], skill=8.0, activity=30.0)
    return [star, *players[1:]], star


def _play(event: Event, players: list[SimPlayer], star: SimPlayer) -> None:
    """Simulate ``event``'s games among those who may play it and ingest them."""
    if not event.open_entry:
        entered = set(
            Entry.objects.filter(event=event).values_list("player__external_id", flat=True)
        )
        players = [p for p in players if p.id in entered]
    if event.code not in STAR_EVENTS:
        players = [p for p in players if p.id != star.id]
    per_player = 12 if event.open_entry else 10
    opens, closes = event.daily_opens, event.daily_closes
    hours = (opens, closes) if opens is not None and closes is not None else None
    records = list(
        simulate_games(
            players=players,
            games=len(players) * per_player // 4,
            event=event.code,
            window=(event.starts_at, event.ends_at),
            seed=23,
            daily_hours=hours,
        )
    )
    report = games_ingest(records=records)
    assert (report.ingested, report.rejected, report.conflicts) == (len(records), [], [])


def _season_played() -> tuple[list[SimPlayer], SimPlayer, list[tuple[str, datetime]]]:
    titles.rules_ensure_defaults()
    season_create(
        year=2021,
        start=date(2021, 1, 4),
        weeks=13,
        ruleset={"quotas": QUOTAS, "best_n": BEST_N, "minimum_games": MINIMUM},
    )
    players, star = _players()
    finalised: list[tuple[str, datetime]] = []
    grace = settings.TOUR_AUTO_FINALISE_GRACE
    for event in Event.objects.filter(code__in=QUARTER).order_by("ends_at", "starts_at"):
        _play(event, players, star)
        now = event.ends_at + grace + timedelta(minutes=1)
        finalised += [(code, now) for code in events_auto_finalise(now=now)]
    return players, star, finalised


# --- the independent recomputation ---------------------------------------------------------


def _board(event: Event, field: set[str] | None) -> list[tuple[str, str]]:
    """(player, province) of the eligible players of ``event`` in rank order, from its
    non-voided seats: best N sum, then more games, best game, earlier reaching time, id."""
    games: dict[str, list[tuple[int, datetime]]] = defaultdict(list)
    province: dict[str, str] = {}
    for key, prov, score, ended in Seat.objects.filter(event=event, voided=False).values_list(
        "player__external_id", "player__province", "score", "ended_at"
    ):
        if field is None or key in field:
            games[key].append((score, ended))
            province[key] = prov
    rows = []
    for key, played in games.items():
        if len(played) < MINIMUM:
            continue
        kept = sorted(played, key=lambda g: (-g[0], g[1]))[:BEST_N]
        total, best = sum(s for s, _ in kept), max(s for s, _ in played)
        rows.append(((-total, -len(played), -best, max(e for _, e in kept), key), key))
    return [(key, province[key]) for _, key in sorted(rows)]


def _advancing(board: list[tuple[str, str]], kind: str) -> list[str]:
    quota = QUOTAS[kind]
    chosen = {key for key, _ in board[: quota["national"]]}
    seen: dict[str, int] = defaultdict(int)
    for key, prov in board:
        seen[prov] += 1
        if seen[prov] <= quota["per_province"]:
            chosen.add(key)
    return sorted(chosen)


def _monthly_field_from_raw_games(month: str) -> tuple[set[str], str]:
    field: set[str] = set()
    for final in Event.objects.filter(feeds__code=month).order_by("starts_at"):
        qualifier = Event.objects.get(feeds=final)
        entrants = set(_advancing(_board(qualifier, None), "weekly_qualifier"))
        field |= set(_advancing(_board(final, entrants), "weekly_final"))
    monthly_board = _board(Event.objects.get(code=month), field)
    return field, monthly_board[0][0]


# --- the test ------------------------------------------------------------------------------


def _entered(event: Event) -> set[str]:
    return set(Entry.objects.filter(event=event).values_list("player__external_id", flat=True))


def _ran_in_order(events: dict[str, Event], finalised: list[tuple[str, datetime]]) -> None:
    """Every event of the quarter finalised by the job (no user), each after its feeders."""
    assert {code for code, _ in finalised} >= set(QUARTER)
    assert all(
        e.status == EventStatus.FINALISED and e.finalised_by is None for e in events.values()
    )
    order = [code for code, _ in finalised]
    for event in events.values():
        fed = event.feeds
        if fed is not None and fed.code in events:
            assert order.index(event.code) < order.index(fed.code)


def _sanction(player: Player, qualifier: Event, organiser: User) -> None:
    """The player's W01-Q games voided: previewed (nothing written), then applied as shown."""
    logged = Correction.objects.count()
    plan = preview(
        lambda: player_games_void(player=player, events=[qualifier], by=organiser, reason="case 7")
    )
    assert [step["diff"]["fed"] for step in plan] == [
        {"event": "2021-W01-F", "played": True, "field_changed": True}
    ]
    assert player.external_id in plan[0]["diff"]["entries"]["removed"]
    assert Correction.objects.count() == logged
    assert Seat.objects.filter(player=player, voided=True).count() == 0
    done = player_games_void(player=player, events=[qualifier], by=organiser, reason="case 7")
    assert [step.diff for step in done] == [step["diff"] for step in plan]


def test_a_quarter_runs_itself_and_a_qualifier_void_reaches_the_monthly_champion(
    organiser: User,
) -> None:
    _, star, finalised = _season_played()
    events = {e.code: e for e in Event.objects.filter(code__in=QUARTER)}
    _ran_in_order(events, finalised)
    monthly = events["2021-01-M"]
    star_player = monthly.champion
    assert star_player is not None
    assert star_player.external_id == star.id
    assert _monthly_field_from_raw_games("2021-01-M") == (_entered(monthly), star.id)

    _sanction(star_player, events["2021-W01-Q"], organiser)

    # The organiser replays W01-F: the star leaves 01-M's field; 01-M is marked.
    w01f = event_field_change_resolve(
        event=events["2021-W01-F"], decision="replay", by=organiser, reason="case 7"
    )
    assert star.id in w01f.diff["standings_removed"]
    assert star.id in w01f.diff["entries"]["removed"]
    assert w01f.diff["fed"] == {"event": "2021-01-M", "played": True, "field_changed": True}
    monthly.refresh_from_db()
    assert monthly.champion == star_player  # until the organiser decides

    # Replaying 01-M (previewed first) moves its champion and the Master qualification.
    step = preview(
        lambda: event_field_change_resolve(
            event=monthly, decision="replay", by=organiser, reason="case 7"
        )
    )[0]
    m01 = event_field_change_resolve(
        event=monthly, decision="replay", by=organiser, reason="case 7"
    )
    assert m01.diff == step["diff"]
    monthly.refresh_from_db()
    new_champion = monthly.champion
    assert new_champion is not None
    assert new_champion != star_player
    assert m01.diff["champion"] == {"before": star.id, "after": new_champion.external_id}
    assert m01.diff["qualifications"] == {
        "withdrawn": star.id,
        "recorded": new_champion.external_id,
    }
    assert dict(
        Qualification.objects.filter(source="event:2021-01-M:champion").values_list(
            "player__external_id", "status"
        )
    ) == {star.id: "voided", new_champion.external_id: "pending"}

    # Q1-F, already played, keeps its result with a logged reason.
    q1 = events["2021-Q1-F"]
    assert m01.diff["fed"] == {"event": "2021-Q1-F", "played": True, "field_changed": True}
    kept = event_field_change_resolve(event=q1, decision="keep", by=organiser, reason="played")
    assert kept.diff == {"origin": m01.pk}
    q1.refresh_from_db()
    assert q1.field_changed_at is None

    # 01-M recomputed from the raw seats agrees with the stored field and champion.
    field, champion = _monthly_field_from_raw_games("2021-01-M")
    assert star.id not in field
    assert (field, champion) == (_entered(monthly), new_champion.external_id)
