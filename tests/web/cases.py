"""An integrity case for the reviewer's case console, built through the real services.

The monthly final 2021-02-M (feeding the quarterly 2021-Q1-F) of a fresh season 2021 has a
farm: 白雪 (``b``) and her helper 黑土 (``h``) play on one device and sit together in 15
games that 白雪 wins while 黑土 keeps 100 points in hand; 蓝天 (``a2``) wins 15 honest
games by small margins. 白雪 is the champion; without her games 蓝天 would be. 白雪 and 黑土
both hold a Master title (entered by another reviewer, approved by ``reviewer``). The
event is finalised and audited: one open case (白雪, 黑土) with co-seating, point-flow and
same-device flags. (The scenario is the one of tests/integrity/test_workflow.py.)

Every game is built by ``tests.integrity.conftest.play``, with the sessions the audit reads.
"""

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from accounts.models import Player, User
from accounts.roles import ensure_roles
from core.clock import tour_today
from flows.finalisation import event_finalise
from flows.grants import qualification_approve
from integrity.models import Case
from integrity.services.audits import audit_event
from tests.integrity.conftest import play
from tests.tournaments.factories import local, make_event, make_season
from titles.models import PlayerTitle, Qualification, QualificationRule, TitleTerm
from titles.services import qualification_enter, rules_ensure_defaults
from tournaments.models import Entry, Event, Seat, Standing

QUOTAS = {
    "weekly_qualifier": {"national": 0, "per_province": 2},
    "weekly_final": {"national": 3, "per_province": 1},
    "monthly_final": {"national": 1, "per_province": 0},
    "quarterly_final": {"national": 1, "per_province": 1},
    "annual_final": {"national": 0, "per_province": 0},
}
AFTER = local(2021, 3, 1, 12)
#: (external id, name, province)
PEOPLE = (
    ("b", "白雪", "江苏"),
    ("h", "黑土", "江苏"),
    ("a2", "蓝天", "浙江"),
    ("a3", "青山", "广东"),
    ("a4", "绿水", "北京"),
    ("a5", "紫云", "上海"),
)


@dataclass
class Farm:
    case: Case
    monthly: Event
    quarterly: Event
    players: dict[str, Player]


def _games(monthly: Event, p: dict[str, Player]) -> None:
    moment = local(2021, 2, 16, 10, 5)
    small = (["R1"], ["R2"], ["R3"])
    for i in range(15):
        moment += timedelta(minutes=4)
        play(
            monthly,
            [
                (p["b"], [], "198.51.100.7", "d-farm"),
                (p["h"], ["WD4", "W"], "198.51.100.8", "d-farm"),
                (p["a3"], ["R5"], "203.0.113.3", "d-a3"),
                (p["a4"], ["G7"], "203.0.113.4", "d-a4"),
            ],
            ended_at=moment,
        )
        play(
            monthly,
            [
                (p["a2"], [], "203.0.113.2", "d-a2"),
                (p["a5"], small[i % 3], "203.0.113.5", "d-a5"),
                (p["a3"], small[(i + 1) % 3], "203.0.113.3", "d-a3"),
                (p["a4"], small[(i + 2) % 3], "203.0.113.4", "d-a4"),
            ],
            ended_at=moment + timedelta(seconds=30),
        )


def _master(player: Player, reviewer: User, source: str) -> Qualification:
    """A Master qualification 30 days old, entered by another reviewer (four eyes)."""
    entrant, _ = User.objects.get_or_create(username="farm-entrant")
    qualification = qualification_enter(
        player=player,
        rule=QualificationRule.objects.get(key="monthly_champion"),
        on=tour_today() - timedelta(days=30),
        source=source,
        evidence={},
        reason="entered for the test",
        by=entrant,
    )
    return qualification_approve(
        qualification=qualification,
        by=reviewer,
        reason="ok",
        expected_version=qualification.version,
    )


def build_farm(reviewer: User) -> Farm:
    """Build the season, the farm, finalise and audit it (module docstring)."""
    ensure_roles()
    rules_ensure_defaults()
    season = make_season(quotas=QUOTAS)
    quarterly = make_event(
        season,
        "2021-Q1-F",
        "quarterly_final",
        starts_at=local(2021, 3, 5, 10),
        ends_at=local(2021, 3, 5, 23),
    )
    monthly = make_event(
        season,
        "2021-02-M",
        "monthly_final",
        starts_at=local(2021, 2, 16, 10),
        ends_at=local(2021, 2, 16, 23),
        feeds=quarterly,
        champion_achievement="monthly_champion",
    )
    players = {
        key: Player.objects.create(external_id=key, name=name, province=province)
        for key, name, province in PEOPLE
    }
    # The titles first: once a case is open its players' grants are held (and with committed
    # transactions, a live server's, finalising queues the audit that opens it).
    _master(players["b"], reviewer, "earlier-cup")
    _master(players["h"], reviewer, "other-cup")
    _games(monthly, players)
    event_finalise(event=monthly, by=None, now=AFTER)
    audit_event(event=monthly)
    monthly.refresh_from_db()
    return Farm(Case.objects.get(key="b|h"), monthly, quarterly, players)


def tour_state(farm: Farm) -> dict[str, Any]:
    """Everything a sanction touches and a reversal must put back: the monthly final's
    standings, the quarterly's entries, the champion, voided seats, titles, terms and
    qualifications."""
    return {
        "standings": sorted(
            Standing.objects.filter(event=farm.monthly).values_list(
                "player_key", "total", "games", "eligible", "rank", "advanced"
            )
        ),
        "entries": sorted(
            Entry.objects.filter(event=farm.quarterly).values_list(
                "player__external_id", "basis", "source__code"
            )
        ),
        "champion": Event.objects.get(pk=farm.monthly.pk).champion_id,
        "voided_seats": Seat.objects.filter(voided=True).count(),
        "titles": sorted(
            PlayerTitle.objects.exclude(status="none", terms=[]).values_list(
                "player__external_id", "status", "valid_until", "lifetime_since"
            )
        ),
        "terms": sorted(
            TitleTerm.objects.values_list("player__external_id", "start", "valid_until", "state")
        ),
        "qualifications": sorted(
            Qualification.objects.exclude(status="voided").values_list(
                "player__external_id", "source", "status"
            )
        ),
    }
