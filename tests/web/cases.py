"""An integrity case for the reviewer's case console, built through the real services.

The monthly final 2021-02-M (feeding the quarterly 2021-Q1-F) of a fresh season 2021 has a
farm: 白雪 (``b``) and her helper 黑土 (``h``) play on one device and sit together in 15
games that 白雪 wins while 黑土 keeps 100 points in hand; 蓝天 (``a2``) wins 15 honest
games by small margins. 白雪 is the champion; without her games 蓝天 would be. 白雪 and 黑土
both hold a Master title (entered by another reviewer, approved by ``reviewer``). The
event is finalised and audited: one open case (白雪, 黑土) with co-seating, point-flow and
same-device flags. The games are those of :func:`tests.integrity.farm.farm_games`.

The reviewer's journey (tests/web/test_cases.py through the Django test client,
tests/web/test_browser.py in a browser) runs on the console's clock :data:`TODAY`: the
sanction of :func:`sanction_data` after its plan, an appeal of 白雪 (:data:`STATEMENT`)
upheld by a second reviewer (:data:`UPHELD`). Both check the tour against
:func:`state_before` and :func:`state_sanctioned`, and the players' notices against
:data:`NOTICES`.
"""

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from accounts.models import Player, User
from accounts.roles import ensure_roles
from core.clock import tour_today
from flows.finalisation import event_finalise
from flows.grants import qualification_approve
from integrity.models import Case
from integrity.services.audits import audit_event
from notices.selectors import player_notices
from notices.texts import notice_text
from tests.integrity.farm import farm_games
from tests.tournaments.factories import AFTER, local, monthly_and_quarterly
from titles.models import PlayerTitle, Qualification, QualificationRule, TitleTerm
from titles.services import qualification_enter, rules_ensure_defaults
from tournaments.models import Entry, Event, Seat, Standing

#: The console's clock in the journey: 2021-03-10 15:00 in Asia/Shanghai, after the monthly
#: final.
TODAY = local(2021, 3, 10, 15)
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
    monthly, quarterly = monthly_and_quarterly()
    players = {
        key: Player.objects.create(external_id=key, name=name, province=province)
        for key, name, province in PEOPLE
    }
    # The titles first: once a case is open its players' grants are held (and with committed
    # transactions, a live server's, finalising queues the audit that opens it).
    _master(players["b"], reviewer, "earlier-cup")
    _master(players["h"], reviewer, "other-cup")
    farm_games(monthly, players)
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


# --- the reviewer's journey --------------------------------------------------------------------

#: The reason of the journey's sanction, 白雪's appeal and the second reviewer's decision.
#: A rank-tested point-flow flag of 黑土 (``h``) feeding 白雪 (``b``), its evidence as the
#: flag row stores it (integrity.services.findings): 9 wins of 白雪 with 黑土 at the table,
#: 黑土's hands in them against 41 of his lost games without her.
RANK_FLOW = {
    "feeder": "h",
    "beneficiary": "b",
    "shared_wins": 9,
    "test": "rank",
    "baseline_games": 41,
    "heaviest": 7,
    "expected": 3.0,
    "feeder_mean": 154.2,
    "feeder_baseline": 71.5,
    "flow_to_beneficiary": 1388,
    "flow_to_feeder": 12,
    "reverse_wins": 1,
}

#: A fed-account flag of 白雪 (``b``), fed by 黑土 (``h``), its evidence as the flag row
#: stores it: 12 wins of 白雪 with 黑土 at the table against 7 games someone else won, and 3
#: wins of hers without him.
FED = {
    "account": "b",
    "group": ["h"],
    "wins": 12,
    "other_wins": 7,
    "apart_wins": 3,
    "rank_sum": 162,
    "expected": 120.0,
    "margin": 15,
    "group_in_wins": 168.5,
    "group_in_other_wins": 62.4,
    "losers_in_wins": 121.0,
    "losers_apart": 70.0,
}

#: A cards-kept flag of 黑土 (``h``, the feeder) and 白雪 (``b``), its evidence as the flag
#: row stores it: in the 17 games both lost, 黑土 kept 5.6 cards more than 白雪 where
#: their strengths say 1.3, the week before the window included; the week's players differ
#: in their own habits by 0.6 cards (τ² 0.36).
KEPT = {
    "feeder": "h",
    "partner": "b",
    "games": 17,
    "kept": 5.647,
    "expected": 1.272,
    "strengths": [-0.456, 1.028],
    "style": 0.36,
    "shared": 49,
    "weight": 1.105,
    "history_days": 7,
}

#: A boosting flag of 白雪 (``b``), its evidence as the flag row stores it: a hired player
#: from her 4th game of the week (new device and address range), after 38 games of hers the
#: week before (boosting's history).
BOOSTED = {
    "games": 108,
    "history": 38,
    "change_index": 41,
    "change_game": "g-9041",
    "change_hour": 447_200,
    "kinds": ["device", "ip_range"],
    "before_mean": -31.25,
    "after_mean": 88.5,
    "shift": 119.75,
    "splits": 2,
}

REASON = "一台设备坐两个座位，15 局让分"
STATEMENT = "是我弟弟用的手机"
UPHELD = "证据采纳"


def sanction_data(case: Case, **extra: Any) -> dict[str, Any]:
    """The sanction of the journey, as the case page's form posts it: 白雪 the beneficiary
    (her games in the monthly final voided, titles revoked), 黑土 the helper (titles
    revoked, suspended)."""
    return {
        "expected_version": case.version,
        "reason": REASON,
        "role-b": "beneficiary",
        "events-b": "2021-02-M",
        "revoke-b": "on",
        "role-h": "helper",
        "revoke-h": "on",
        "suspend-h": "on",
        **extra,
    }


def state_before(farm: Farm) -> dict[str, Any]:
    """:func:`tour_state` of the farm as built (on :data:`TODAY`), which an upheld appeal
    puts back: 白雪 the monthly final's champion and advancer, both Masters."""
    return {
        "standings": [
            ("a2", 90, 15, True, None, False),
            ("a3", -30, 30, True, None, False),
            ("a4", -30, 30, True, None, False),
            ("a5", -30, 15, True, None, False),
            ("b", 1680, 15, True, 1, True),
            ("h", -1500, 15, True, None, False),
        ],
        "entries": [("b", "advanced", "2021-02-M")],
        "champion": farm.players["b"].pk,
        "voided_seats": 0,
        "titles": [
            ("b", "master", date(2022, 2, 8), None),
            ("h", "master", date(2022, 2, 8), None),
        ],
        "terms": [
            ("b", date(2021, 2, 8), date(2022, 2, 8), "current"),
            ("h", date(2021, 2, 8), date(2022, 2, 8), "current"),
        ],
        "qualifications": [
            ("b", "event:2021-02-M:champion", "pending"),
            ("b", "manual:earlier-cup", "approved"),
            ("h", "manual:other-cup", "approved"),
        ],
    }


def state_sanctioned(farm: Farm) -> dict[str, Any]:
    """What the journey's sanction changes of :func:`tour_state`: 蓝天 champion and
    advancer, 白雪's 15 seats voided, no titles, 蓝天's champion qualification instead."""
    return {
        "champion": farm.players["a2"].pk,
        "entries": [("a2", "advanced", "2021-02-M")],
        "voided_seats": 15,
        "titles": [],
        "qualifications": [("a2", "event:2021-02-M:champion", "pending")],
    }


def changed(farm: Farm) -> dict[str, Any]:
    """:func:`tour_state`'s parts that :func:`state_sanctioned` names."""
    state = tour_state(farm)
    return {key: state[key] for key in state_sanctioned(farm)}


#: Each player's notice feed after the journey, newest first as the player's page shows it:
#: the Master title and 白雪's advancement (the farm), the sanction and the titles revoked,
#: the sanction reversed and the titles restored (the upheld appeal). Public words: no
#: reason, no evidence.
NOTICES: dict[str, list[str]] = {
    "b": [
        "申诉成功，处罚已撤销。",
        "申诉成功，全国头衔已恢复。",
        "因违规被处罚：相关赛事成绩作废、全国头衔被撤销。",
        "全国头衔因违规被撤销。",
        "从「2021-02-M · 月赛」晋级「2021-Q1-F · 季赛」。",
        "获得大师头衔，有效期至 2022-02-08。",
    ],
    "h": [
        "申诉成功，处罚已撤销。",
        "申诉成功，全国头衔已恢复。",
        "因违规被处罚：全国头衔被撤销、暂停参赛资格。",
        "全国头衔因违规被撤销。",
        "获得大师头衔，有效期至 2022-02-08。",
    ],
}


def notices_of(farm: Farm) -> dict[str, list[str]]:
    """The notice feed of each player of :data:`NOTICES`, in words (newest first)."""
    return {
        key: [notice_text(n.kind, n.params) for n in player_notices(player=farm.players[key])]
        for key in NOTICES
    }
