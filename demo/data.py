"""Demo data for the embedded default, through the real services: staff with each role, a
season of the current year with its 69 stations, last week's qualifier and weekly final
played and finalised, this week's qualifier live, ratings, and a few Masters in the registry.

Deterministic (seeded) and idempotent: games are keyed by record id, finalisation and
qualifications are idempotent, so running it twice adds nothing."""

from datetime import date, datetime, time, timedelta

from django.contrib.auth.models import Group
from django.db import transaction
from django.utils import timezone

from accounts.models import Player, User
from accounts.roles import ORGANISER, REVIEWER, ensure_roles
from core.domain.clock import TOUR_TZ, tour_day
from flows.finalisation import event_finalise
from flows.grants import qualification_approve
from flows.ingest import games_ingest
from ratings.services import ratings_update
from titles.models import QualificationRule
from titles.services import achievement_record
from tournaments.models import Entry, Event, EventStatus, Season
from tournaments.services.seasons import season_create
from tournaments.simulation import SimPlayer, simulate_games, simulate_players

DEMO_PASSWORD = "demo-password"  # noqa: S105 - documented demo credential, local only
SEED = 2021


def _demo_staff() -> dict[str, User]:
    ensure_roles()
    users = {}
    for username, role, superuser in (
        ("demo", None, True),
        ("organiser", ORGANISER, False),
        ("reviewer", REVIEWER, False),
    ):
        user, created = User.objects.get_or_create(
            username=username, defaults={"is_staff": True, "is_superuser": superuser}
        )
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save()
        if role:
            user.groups.add(Group.objects.get(name=role))
        users[username] = user
    return users


def _first_monday(year: int) -> date:
    day = date(year, 1, 1)
    return day + timedelta(days=(7 - day.weekday()) % 7)


def _season(today: date, by: User) -> Season:
    season = Season.objects.filter(year=today.year).first()
    if season is None:
        season = season_create(
            year=today.year,
            start=_first_monday(today.year),
            name=f"{today.year} 中国UNO线上巡回赛",
            by=by,
        )
    return season


def _ingest(records: list[dict[str, object]], by: User) -> int:
    ingested = 0
    for start in range(0, len(records), 1000):
        ingested += games_ingest(
            records=records[start : start + 1000], by=by, source="demo"
        ).ingested
    return ingested


def _play(event: Event, players: list[SimPlayer], games: int, until: datetime, by: User) -> int:
    window = (event.starts_at, min(event.ends_at, until))
    if window[1] - window[0] < timedelta(hours=1):
        return 0
    records = list(
        simulate_games(
            players=players, games=games, event=event.code, window=window, seed=SEED, tz=TOUR_TZ
        )
    )
    return _ingest(records, by)


def _week(qualifier: Event, field: list[SimPlayer], moment: datetime, by: User) -> int:
    """Play a past weekly qualifier, finalise it, then play and finalise its weekly final as
    far as the clock allows."""
    games = _play(qualifier, field, len(field) * 5, moment, by)
    if qualifier.ends_at > moment:
        return games
    event_finalise(event=qualifier, by=by)
    final = qualifier.feeds
    if final is None or final.status == EventStatus.FINALISED:
        return games
    entrants = set(Entry.objects.filter(event=final).values_list("player__external_id", flat=True))
    seated = [p for p in field if p.id in entrants]
    if len(seated) >= 24:
        games += _play(final, seated, len(seated) * 4, moment, by)
    if final.ends_at <= moment:
        event_finalise(event=final, by=by)
    return games


def _titles(players: list[Player], reviewer: User, today: date) -> int:
    rules = {rule.key: rule for rule in QualificationRule.objects.all()}
    plan = [
        (players[0], "monthly_champion", today - timedelta(days=300)),
        (players[0], "quarterly_champion", today - timedelta(days=120)),
        (players[1], "monthly_champion", today - timedelta(days=200)),
        (players[2], "monthly_champion", today - timedelta(days=400)),  # lapsed
        (players[3], "monthly_champion", today - timedelta(days=90)),
        (players[3], "national_championship", today - timedelta(days=30)),  # Lifetime
        (players[4], "world_cup_1x", today - timedelta(days=20)),
    ]
    approved = 0
    for number, (player, key, on) in enumerate(plan):
        if key not in rules:
            continue
        qualification = achievement_record(
            achievement=key,
            player=player,
            on=on,
            source=f"demo:{key}:{number}",
            evidence={"demo": True},
            by=reviewer,
        )
        if qualification is not None and qualification.status == "pending":
            qualification_approve(
                qualification=qualification,
                by=reviewer,
                reason="demo data",
                expected_version=qualification.version,
            )
            approved += 1
    return approved


def load_demo(*, players: int = 400, now: datetime | None = None) -> dict[str, int]:
    moment = now or timezone.now()
    today = tour_day(moment)
    staff = _demo_staff()
    with transaction.atomic():
        season = _season(today, staff["organiser"])
    field = simulate_players(players, seed=SEED)
    summary = {"players": 0, "games": 0, "finalised": 0, "qualifications approved": 0}

    this_week = today - timedelta(days=today.weekday())
    qualifiers = {
        tour_day(e.starts_at): e
        for e in Event.objects.filter(season=season, kind="weekly_qualifier")
    }
    for weeks_back in (2, 1):
        qualifier = qualifiers.get(this_week - timedelta(days=7 * weeks_back))
        if qualifier is not None:
            summary["games"] += _week(qualifier, field, moment, staff["organiser"])
    current = qualifiers.get(this_week)
    if current is not None:
        opened = datetime.combine(this_week, time(10), TOUR_TZ)
        share = max(0.0, min(1.0, (moment - opened) / timedelta(days=7)))
        summary["games"] += _play(
            current, field, int(players * 4 * share), moment, staff["organiser"]
        )
    summary["finalised"] = Event.objects.filter(season=season, status=EventStatus.FINALISED).count()

    ranked = list(Player.objects.order_by("external_id")[:5])
    if len(ranked) == 5:
        summary["qualifications approved"] = _titles(ranked, staff["reviewer"], today)
    ratings_update()
    summary["players"] = Player.objects.count()
    return summary
