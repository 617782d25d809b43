"""Seasons: the calendar written by season_create (SPEC §2, §9) and the ruleset as data."""

from datetime import date, time, timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from accounts.models import User
from core.domain.clock import TOUR_TZ
from core.errors import ConflictError, ServiceError
from flows.corrections import game_void
from flows.finalisation import event_finalise
from tests.accounts.signin import client_sign_in
from tests.tournaments.factories import local, make_players, score_games
from tournaments.models import CalendarChange, Entry, Event, Season
from tournaments.services.finalise import event_refreeze
from tournaments.services.seasons import ruleset_clean, season_create, season_update

pytestmark = pytest.mark.django_db


def _feeds(event: Event) -> str | None:
    """The code of the event ``event`` feeds, if any."""
    return event.feeds.code if event.feeds is not None else None


def _counts() -> tuple[int, int, int]:
    return Season.objects.count(), Event.objects.count(), CalendarChange.objects.count()


def national_quotas(*, weekly_final: int, monthly_final: int) -> dict[str, dict[str, int]]:
    """Quotas by national places only: these from weekly and monthly finals, one from a
    quarterly final."""
    places = {"weekly_final": weekly_final, "monthly_final": monthly_final, "quarterly_final": 1}
    kinds = ("weekly_qualifier", "weekly_final", "monthly_final", "quarterly_final", "annual_final")
    return {kind: {"national": places.get(kind, 0), "per_province": 0} for kind in kinds}


def test_a_season_starting_on_a_monday_has_69_stations() -> None:
    season = season_create(year=2021, start=date(2021, 1, 4))

    events = Event.objects.filter(season=season)
    kinds = {
        kind: events.filter(kind=kind).count() for kind in events.values_list("kind", flat=True)
    }
    assert kinds == {
        "weekly_qualifier": 52,
        "weekly_final": 52,
        "monthly_final": 12,
        "quarterly_final": 4,
        "annual_final": 1,
    }
    stations = list(events.filter(station__isnull=False).order_by("station"))
    assert [e.station for e in stations] == list(range(1, 70))
    assert events.filter(kind="weekly_qualifier", station__isnull=False).count() == 0
    assert [e.starts_at for e in stations] == sorted(e.starts_at for e in stations)
    assert (stations[0].code, stations[0].city) == ("2021-W01-F", "北京")
    assert (stations[-1].code, stations[-1].kind) == ("2021-12-M", "monthly_final")
    assert (stations[-4].code, stations[-4].starts_at) == ("2021-A", local(2021, 12, 26, 10, 0))
    assert season.changes.get().diff == {
        "start": "2021-01-04",
        "weeks": 52,
        "events": 121,
        "stations": 69,
        "carried_in": [],
        "carried_out": ["2021-12-M"],
    }


def test_weekly_qualifiers_are_open_and_keep_daily_hours() -> None:
    season_create(year=2021, start=date(2021, 1, 4))

    qualifier = Event.objects.get(code="2021-W05-Q")
    assert qualifier.open_entry is True
    assert qualifier.starts_at == local(2021, 2, 1, 10, 0)
    assert qualifier.ends_at.astimezone(TOUR_TZ).date() == date(2021, 2, 7)
    assert (qualifier.daily_opens, qualifier.daily_closes) == (time(10), time.max)
    assert _feeds(qualifier) == "2021-W05-F"
    final = Event.objects.get(code="2021-W05-F")
    assert (final.open_entry, final.daily_opens, _feeds(final)) == (False, None, "2021-02-M")
    assert final.starts_at == local(2021, 2, 8, 10, 0)
    assert Event.objects.filter(open_entry=True).count() == 52
    assert _feeds(Event.objects.get(code="2021-02-M")) == "2021-Q1-F"
    assert _feeds(Event.objects.get(code="2021-03-M")) == "2021-Q2-F"
    assert Event.objects.get(code="2021-12-M").feeds is None  # until the 2022 season
    assert _feeds(Event.objects.get(code="2021-Q4-F")) == "2021-A"
    assert Event.objects.get(code="2021-A").feeds is None


def test_the_thursday_rule_at_a_month_end() -> None:
    # The week of 2021-03-29 holds Thursday 1 April: it belongs to April.
    season_create(year=2021, start=date(2021, 1, 4))

    qualifier = Event.objects.get(code="2021-W13-Q")
    assert qualifier.starts_at.astimezone(TOUR_TZ).date() == date(2021, 3, 29)
    assert qualifier.month == "2021-04"
    assert _feeds(Event.objects.get(code="2021-W13-F")) == "2021-04-M"
    assert _feeds(Event.objects.get(code="2021-W12-F")) == "2021-03-M"
    march = Event.objects.get(code="2021-03-M")
    assert march.starts_at.astimezone(TOUR_TZ).date() == date(2021, 4, 1)
    assert list(march.fed_by.order_by("starts_at").values_list("code", flat=True)) == [
        "2021-W09-F",
        "2021-W10-F",
        "2021-W11-F",
        "2021-W12-F",
    ]


def test_monthly_quarterly_and_annual_champions_earn_titles() -> None:
    season_create(year=2021, start=date(2021, 1, 4))

    achievements = dict(
        Event.objects.exclude(champion_achievement="")
        .values_list("kind", "champion_achievement")
        .distinct()
    )
    assert achievements == {
        "monthly_final": "monthly_champion",
        "quarterly_final": "quarterly_champion",
        "annual_final": "annual_final_champion",
    }


def test_organiser_dates_for_quarterly_and_annual_finals() -> None:
    quarterly = [date(2021, 4, 9), date(2021, 7, 9), date(2021, 10, 8), date(2022, 1, 7)]
    season_create(
        year=2021, start=date(2021, 1, 4), quarterly_dates=quarterly, annual_date=date(2022, 1, 16)
    )

    days = [
        e.starts_at.astimezone(TOUR_TZ).date()
        for e in Event.objects.filter(kind="quarterly_final").order_by("starts_at")
    ]
    assert days == quarterly
    assert Event.objects.get(code="2021-A").starts_at == local(2022, 1, 16, 10, 0)


def test_creating_an_existing_year_is_a_conflict_and_writes_nothing() -> None:
    season_create(year=2021, start=date(2021, 1, 4))
    before = _counts()

    with pytest.raises(ConflictError, match="season 2021 already exists"):
        season_create(year=2021, start=date(2021, 1, 4))

    assert _counts() == before


def test_a_calendar_whose_codes_are_taken_is_a_conflict_naming_them() -> None:
    season_create(year=2021, start=date(2021, 1, 4))
    before = _counts()

    with pytest.raises(ConflictError, match=r"2022: \d+ event codes already exist \(2021-"):
        season_create(year=2022, start=date(2021, 1, 4) + timedelta(weeks=30))

    assert _counts() == before


def test_a_bad_calendar_is_refused_before_writing() -> None:
    with pytest.raises(ServiceError, match="2021-01-05 is a Tuesday, not a Monday"):
        season_create(year=2021, start=date(2021, 1, 5))
    with pytest.raises(ServiceError, match="annual final 2021-A on 2021-01-01 must be after"):
        season_create(year=2021, start=date(2021, 1, 4), annual_date=date(2021, 1, 1))

    assert _counts() == (0, 0, 0)


# --- the ruleset ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("best_n", 0, "must be an integer >= 1, got 0"),
        ("minimum_games", -1, "must be an integer >= 0, got -1"),
        ("tiebreak_order", ["games", "total"], 'must start with "total"'),
        ("tiebreak_order", ["total", "luck"], "unknown tie-breaks: luck"),
        ("quotas", {"weekly_qualifier": {"national": 0, "per_province": 100}}, "no quota for"),
        (
            "quotas",
            {
                "weekly_qualifier": {"national": -1, "per_province": 100},
                "weekly_final": {"national": 100, "per_province": 10},
                "monthly_final": {"national": 50, "per_province": 3},
                "quarterly_final": {"national": 10, "per_province": 1},
                "annual_final": {"national": 0, "per_province": 0},
            },
            "weekly_qualifier: quota national must be an integer >= 0, got -1",
        ),
        ("card_table", {"name": "x", "points": {"R1": 1}, "copies": {}}, "has points but no"),
        ("singles_scoring", "lottery", "unknown scoring 'lottery'"),
        ("time_zone", "Mars/Olympus", "unknown time zone 'Mars/Olympus'"),
        ("cities", [], "must be a non-empty list"),
        ("placement_points", {"4": [4, 2, 1, 0]}, "exactly [3, 4, 5]"),
        ("placement_points", {"3": [4, 2, 0], "4": [4, 2, 1], "5": [4, 2, 1, 0, 0]}, "needs 4"),
        ("placement_points", {"3": [0, 2, 4], "4": [4, 2, 1, 0], "5": [4, 2, 1, 0, 0]}, "less"),
    ],
)
def test_ruleset_errors_name_the_field(field: str, value: object, message: str) -> None:
    season = Season.objects.create(year=2021, name="2021", starts_on=date(2021, 1, 4))

    with pytest.raises(ServiceError) as caught:
        season_update(season=season, changes={field: value}, by=None, reason="edit")

    assert list(caught.value.detail) == [field]
    assert message in caught.value.detail[field]
    assert CalendarChange.objects.count() == 0


def test_ruleset_is_normalised_and_the_change_logged(organiser: User) -> None:
    season = Season.objects.create(year=2021, name="2021", starts_on=date(2021, 1, 4))

    season_update(
        season=season,
        changes={"tiebreak_order": ["total", "best"], "best_n": 10},
        by=organiser,
        reason="2021 rules",
    )

    season.refresh_from_db()
    assert season.tiebreak_order == ["total", "best", "player"]
    assert season.best_n == 10
    change = CalendarChange.objects.get()
    assert (change.action, change.by, change.reason) == ("ruleset", organiser, "2021 rules")
    assert change.diff["best_n"] == {"before": 15, "after": 10}


def test_ruleset_clean_accepts_the_defaults() -> None:
    season = Season(year=2021, starts_on=date(2021, 1, 4))
    values = {field: getattr(season, field) for field in ("quotas", "card_table", "cities")}
    clean, errors = ruleset_clean(
        values | {"placement_points": season.placement_points, "tiebreak_order": ["total"]}
    )
    assert errors == {}
    assert clean["tiebreak_order"] == ["total", "player"]


def test_the_time_zone_locks_once_an_event_is_finalised() -> None:
    season = season_create(year=2021, start=date(2021, 1, 4))
    Event.objects.filter(code="2021-W01-Q").update(status="finalised")

    with pytest.raises(ConflictError, match="time_zone can no longer change .*one time zone"):
        season_update(season=season, changes={"time_zone": "Asia/Urumqi"}, by=None, reason="late")
    season_update(season=season, changes={"cities": ["南京"]}, by=None, reason="names only")

    season.refresh_from_db()
    assert (season.time_zone, season.cities) == ("Asia/Shanghai", ["南京"])
    assert CalendarChange.objects.filter(action="ruleset").count() == 1


def test_the_tiebreak_order_changes_for_the_events_not_yet_finalised(organiser: User) -> None:
    """Issue 23 item 11: W01-F was ranked by best game after the total; the season then
    ranks by games played: W01-F keeps its order (even re-frozen by a correction), W02-F
    follows the new one, and the change is logged."""
    quotas = national_quotas(weekly_final=1, monthly_final=1)
    season = season_create(
        year=2021,
        start=date(2021, 1, 4),
        ruleset={
            "quotas": quotas,
            "best_n": 2,
            "minimum_games": 1,
            "tiebreak_order": ["total", "best"],
        },
    )
    after = local(2021, 1, 19, 12)
    for code in ("2021-W01-Q", "2021-W02-Q"):
        event_finalise(event=Event.objects.get(code=code), by=organiser, now=after)
    w01, w02 = Event.objects.get(code="2021-W01-F"), Event.objects.get(code="2021-W02-F")
    # equal totals of 40: one game of 40 (best 40) against two games of 20 (best 20)
    one, two = make_players(2, prefix="t")
    score_games(w01, {one: [40], two: [20, 20]})
    three, four = make_players(2, prefix="u")
    score_games(w02, {three: [40], four: [20, 20]})
    event_finalise(event=w01, by=organiser, now=after)

    season_update(
        season=season,
        changes={"tiebreak_order": ["total", "games"]},
        by=organiser,
        reason="more games first",
    )
    event_finalise(event=w02, by=organiser, now=after)
    w01.refresh_from_db()
    event_refreeze(event=w01)

    assert w01.ruleset["tiebreak_order"] == ["total", "best", "player"]
    assert w01.champion == one  # by best game, as it was ranked
    w02.refresh_from_db()
    assert w02.champion == four  # by games played, the season's order now
    log = CalendarChange.objects.get(action="ruleset")
    assert (log.by, log.reason) == (organiser, "more games first")
    assert log.diff["tiebreak_order"]["after"] == ["total", "games", "player"]


# --- the command ---------------------------------------------------------------------------


def test_season_create_command() -> None:
    out = StringIO()
    call_command(
        "season_create",
        "2021",
        "--start",
        "2021-01-04",
        "--quarterly",
        "2021-04-09",
        "2021-07-09",
        "2021-10-08",
        "2022-01-07",
        "--annual",
        "2022-01-16",
        stdout=out,
    )

    assert "season 2021: 121 events, 69 stations" in out.getvalue()
    assert Event.objects.get(code="2021-A").starts_at == local(2022, 1, 16, 10, 0)
    with pytest.raises(CommandError, match="season 2021 already exists"):
        call_command("season_create", "2021", "--start", "2021-01-04", stdout=StringIO())


# --- the admin -----------------------------------------------------------------------------


@pytest.fixture
def admin_client_user(client: Client) -> Client:
    user = User.objects.create_superuser("boss", password="pw-for-tests-only")
    client_sign_in(client, user)
    return client


def test_the_admin_edits_the_ruleset_with_errors_on_the_field(admin_client_user: Client) -> None:
    import json

    season = season_create(year=2021, start=date(2021, 1, 4))
    url = f"/admin/tournaments/season/{season.pk}/change/"
    form = {
        field: json.dumps(getattr(season, field), ensure_ascii=False)
        for field in (
            "quotas",
            "card_table",
            "tiebreak_order",
            "cities",
            "placement_points",
            "play_ruleset",
        )
    }
    form |= {
        "best_n": "15",
        "minimum_games": "15",
        "singles_scoring": "tour_singles",
        "time_zone": "Asia/Shanghai",
    }

    bad = admin_client_user.post(url, form | {"tiebreak_order": '["games"]', "reason": "x"})
    assert bad.status_code == 200
    errors = bad.context["adminform"].form.errors
    assert list(errors) == ["tiebreak_order"]
    assert 'must start with "total"' in errors["tiebreak_order"][0]
    good = admin_client_user.post(url, form | {"best_n": "12", "reason": "shorter weeks"})
    assert good.status_code == 302
    season.refresh_from_db()
    assert season.best_n == 12
    assert CalendarChange.objects.filter(action="ruleset", reason="shorter weeks").count() == 1


def test_quotas_change_for_the_events_not_yet_finalised(organiser: User) -> None:
    """Issue 23 item 11: W01-F finalised with 3 national places; the season's quota for
    weekly finals becomes 1: W02-F advances one, W01-F keeps its three (even re-frozen by a
    correction), and the change is logged."""
    quotas = national_quotas(weekly_final=3, monthly_final=1)
    season = season_create(
        year=2021,
        start=date(2021, 1, 4),
        ruleset={"quotas": quotas, "best_n": 1, "minimum_games": 1},
    )
    after = local(2021, 1, 19, 12)
    for code in ("2021-W01-Q", "2021-W02-Q"):
        event_finalise(event=Event.objects.get(code=code), by=organiser, now=after)
    w01, w02 = Event.objects.get(code="2021-W01-F"), Event.objects.get(code="2021-W02-F")
    first, second = make_players(5), make_players(5)
    w01_games = score_games(w01, {p: [50 - i] for i, p in enumerate(first)})
    score_games(w02, {p: [50 - i] for i, p in enumerate(second)})
    event_finalise(event=w01, by=organiser, now=after)

    changed = quotas | {"weekly_final": {"national": 1, "per_province": 0}}
    season_update(season=season, changes={"quotas": changed}, by=organiser, reason="smaller")
    event_finalise(event=w02, by=organiser, now=after)
    game_void(game=w01_games[4], by=organiser, reason="desync")

    monthly = Event.objects.get(code="2021-01-M")
    sources = sorted(
        Entry.objects.filter(event=monthly).values_list("source__code", "player__external_id")
    )
    assert sources == [("2021-W01-F", p.external_id) for p in first[:3]] + [
        ("2021-W02-F", second[0].external_id)
    ]
    log = CalendarChange.objects.filter(action="ruleset").get()
    assert (log.by, log.reason) == (organiser, "smaller")
    assert log.diff["quotas"]["before"]["weekly_final"] == {"national": 3, "per_province": 0}
    assert log.diff["quotas"]["after"]["weekly_final"] == {"national": 1, "per_province": 0}
    assert log.diff["kept_by"] == ["2021-W01-F", "2021-W01-Q", "2021-W02-Q"]


def test_a_carried_monthly_final_feeds_the_next_seasons_first_quarterly_final(
    organiser: User,
) -> None:
    """Issue 23 item 10: 2021-12-M is played on 2022-01-04, after the 2021 annual final
    (2021-12-26): it feeds nothing until the 2022 season is created, which links it to
    2022-Q1-F and writes the entries of the players it advanced."""
    quotas = national_quotas(weekly_final=3, monthly_final=2)
    ruleset = {"quotas": quotas, "best_n": 1, "minimum_games": 1}
    season_create(year=2021, start=date(2021, 1, 4), ruleset=ruleset)
    december = Event.objects.get(code="2021-12-M")
    Event.objects.filter(feeds=december).update(status="finalised")
    players = make_players(3)
    score_games(december, {p: [30 - 10 * i] for i, p in enumerate(players)})
    event_finalise(event=december, by=organiser, now=local(2022, 1, 5, 12))
    assert Entry.objects.filter(source=december).count() == 0

    second = season_create(year=2022, start=date(2022, 1, 3), ruleset=ruleset)

    december.refresh_from_db()
    assert december.feeds is not None
    assert december.feeds.code == "2022-Q1-F"
    entries = Entry.objects.filter(event__code="2022-Q1-F").order_by("player__external_id")
    assert [(e.source.code if e.source else None, e.player) for e in entries] == [
        ("2021-12-M", players[0]),
        ("2021-12-M", players[1]),
    ]
    assert second.changes.get().diff["carried_in"] == ["2021-12-M"]
    assert Event.objects.get(code="2022-12-M").feeds is None
