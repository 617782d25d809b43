"""A small tour for the page tests, built through the real services.

The clock stands at Monday 2021-02-08 15:00 (Asia/Shanghai), during station 6 (重庆, the
weekly final 2021-W05-F), which is live. Station 1 (北京, 2021-W01-F) and station 5 (天津,
the January monthly final 2021-01-M) are finalised; 小猴子 won the monthly final and his
Master qualification was approved. 黄丽 is a Lifetime Master, 赵强's Master lapsed,
吴杰's was revoked and 李娜 has a pending grant. Every seat carries the session ``SECRET_IP``
/ ``SECRET_DEVICE``, and an open integrity case quotes them: no public page may show them.
"""

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.contrib.auth.models import Group

from accounts.models import Player, User
from accounts.roles import REVIEWER, ensure_roles
from flows import grants
from flows.finalisation import event_finalise
from integrity.models import AuditRun, Case, CasePlayer, Flag
from ratings.services import ratings_update
from tests.tournaments.factories import local, make_event, play
from titles import services as titles
from titles.models import Qualification, QualificationRule
from tournaments.models import Entry, Event, Season, Seat
from tournaments.services.seasons import season_create
from tournaments.services.seated import seated_round_create

NOW = local(2021, 2, 8, 15)
SECRET_IP = "203.0.113.77"
SECRET_DEVICE = "d-secret42"
SECRET_CLIENT = "9.9.9-secret"
SECRET_REASON = "串谋让分 shared device"
SECRET_CASE = "case-ref-7"

QUOTAS = {
    "weekly_qualifier": {"national": 0, "per_province": 2},
    "weekly_final": {"national": 3, "per_province": 1},
    "monthly_final": {"national": 2, "per_province": 1},
    "quarterly_final": {"national": 1, "per_province": 1},
    "annual_final": {"national": 0, "per_province": 0},
}

#: (external id, name, province, skill: lower plays better)
FIELD = (
    ("p0000001", "小猴子", "江苏", 0),
    ("p0000002", "王伟", "江苏", 3),
    ("p0000003", "李娜", "浙江", 1),
    ("p0000004", "张敏", "浙江", 5),
    ("p0000005", "刘洋", "广东", 2),
    ("p0000006", "陈静", "广东", 7),
    ("p0000007", "杨磊", "江苏", 6),
    ("p0000008", "黄丽", "北京", 4),
    ("p0000009", "赵强", "北京", 9),
    ("p0000010", "吴杰", "广东", 8),
    ("p0000011", "周涛", "浙江", 10),
    ("p0000012", "徐超", "江苏", 11),
)
#: Four newcomers with one game each: too few to be ranked (minimum 3).
NEWCOMERS = (
    ("p0000013", "新手甲", "上海", 0),
    ("p0000014", "新手乙", "上海", 1),
    ("p0000015", "新手丙", "四川", 2),
    ("p0000016", "新手丁", "四川", 3),
)
#: Cards left by place at a table (points 0, 3, 9, 29) and a variant for the last place.
HANDS: tuple[list[str], ...] = ([], ["R3"], ["G7", "B2"], ["Y9", "RS"], ["WD4", "B5"])


@dataclass
class Tour:
    season: Season
    weekly: Event  # station 1, finalised
    monthly: Event  # station 5, finalised; champion 小猴子
    live: Event  # station 6, window open now
    players: dict[str, Player]
    reviewer: User
    pending: Qualification

    def reloaded(self) -> "Tour":
        """The same tour read afresh from the database."""
        return Tour(
            season=Season.objects.get(pk=self.season.pk),
            weekly=Event.objects.get(pk=self.weekly.pk),
            monthly=Event.objects.get(pk=self.monthly.pk),
            live=Event.objects.get(pk=self.live.pk),
            players={
                p.external_id: p
                for p in Player.objects.filter(pk__in=[p.pk for p in self.players.values()])
            },
            reviewer=User.objects.get(pk=self.reviewer.pk),
            pending=Qualification.objects.get(pk=self.pending.pk),
        )


def play_rounds(
    event: Event, players: list[Player], skill: dict[int, int], *, rounds: int, start: datetime
) -> None:
    """``rounds`` rounds of 4-player tables, five minutes apart, seats rotating each round;
    at each table the better players (by ``skill``, with a little luck) keep fewer cards."""
    seat = {p.pk: i for i, p in enumerate(players)}
    for r in range(rounds):
        turn = players[r % len(players) :] + players[: r % len(players)]
        for t in range(0, len(turn) - len(turn) % 4, 4):
            table = turn[t : t + 4]
            order = sorted(table, key=lambda p: skill[p.pk] + ((seat[p.pk] * 7 + r * 3) % 5) * 0.6)
            hands = {p.pk: HANDS[min(i + (i == 3 and r % 2), 4)] for i, p in enumerate(order)}
            play(
                event,
                [(p, hands[p.pk]) for p in table],
                ended_at=start + timedelta(minutes=5 * r + t),
            )


def _approve(qualification: Qualification, by: User) -> Qualification:
    return grants.qualification_approve(
        qualification=qualification,
        by=by,
        reason="核对无误",
        expected_version=qualification.version,
    )


def _manual(player: Player, rule: str, on: date, source: str, by: User) -> Qualification:
    """Entered by a second reviewer: ``by`` approves it (four eyes)."""
    entrant, created = User.objects.get_or_create(username="tour-entrant")
    if created:
        entrant.groups.add(Group.objects.get(name=REVIEWER))
    return titles.qualification_enter(
        player=player,
        rule=QualificationRule.objects.get(key=rule),
        on=on,
        source=source,
        evidence={"note": "赛事记录"},
        reason="线下赛事",
        by=entrant,
    )


def _finalise_in_order(event: Event, by: User) -> None:
    """Finalise ``event`` after the feeders not yet finalised (events finalise in order)."""
    for feeder in Event.objects.filter(feeds=event, status="scheduled").order_by("starts_at"):
        _finalise_in_order(feeder, by)
    event_finalise(event=event, by=by, now=NOW)


def build_tour() -> Tour:
    """Build the tour (the clock must already stand at ``NOW``)."""
    ensure_roles()
    titles.rules_ensure_defaults()
    reviewer = User.objects.create_user(username="tour-reviewer", password="pw-for-tests-only")
    reviewer.groups.add(Group.objects.get(name=REVIEWER))
    season = season_create(
        year=2021,
        start=date(2021, 1, 4),
        ruleset={"minimum_games": 3, "best_n": 3, "quotas": QUOTAS},
    )
    people = Player.objects.bulk_create(
        [Player(external_id=key, name=name, province=prov) for key, name, prov, _ in FIELD]
        + [Player(external_id=key, name=name, province=prov) for key, name, prov, _ in NEWCOMERS]
    )
    players = {p.external_id: p for p in people}
    skill = {players[key].pk: s for key, _, _, s in FIELD + NEWCOMERS}
    field = [players[key] for key, *_ in FIELD]
    newcomers = [players[key] for key, *_ in NEWCOMERS]

    weekly = Event.objects.get(code="2021-W01-F")
    monthly = Event.objects.get(code="2021-01-M")
    live = Event.objects.get(code="2021-W05-F")
    play_rounds(weekly, field, skill, rounds=3, start=local(2021, 1, 11, 12))
    play_rounds(monthly, field, skill, rounds=3, start=local(2021, 2, 2, 12))
    play_rounds(live, field, skill, rounds=4, start=local(2021, 2, 8, 11))
    play_rounds(live, newcomers, skill, rounds=1, start=local(2021, 2, 8, 13))
    _finalise_in_order(weekly, reviewer)
    _finalise_in_order(monthly, reviewer)
    weekly.refresh_from_db()
    monthly.refresh_from_db()
    live.refresh_from_db()

    won = Qualification.objects.get(player=monthly.champion, source__startswith="event:")
    _approve(won, reviewer)
    lifetime = players["p0000008"]
    _approve(
        _manual(lifetime, "monthly_champion", date(2020, 6, 1), "2020-06 月赛", reviewer), reviewer
    )
    _approve(
        _manual(lifetime, "national_championship", date(2020, 9, 1), "2020 全国锦标赛", reviewer),
        reviewer,
    )
    lapsed = players["p0000009"]
    _approve(
        _manual(lapsed, "monthly_champion", date(2019, 10, 1), "2019-10 月赛", reviewer), reviewer
    )
    revoked = players["p0000010"]
    _approve(
        _manual(revoked, "quarterly_champion", date(2020, 12, 1), "2020-Q4 季赛", reviewer),
        reviewer,
    )
    titles.titles_revoke(
        player=revoked,
        on=date(2021, 1, 15),
        by=reviewer,
        reason=SECRET_REASON,
        case_ref=SECRET_CASE,
    )
    titles.titles_expire()
    pending = _manual(
        players["p0000003"], "monthly_champion", date(2021, 1, 31), "2021-01 线下赛", reviewer
    )

    Seat.objects.update(ip=SECRET_IP, device=SECRET_DEVICE, client=SECRET_CLIENT)
    ratings_update()
    run = AuditRun.objects.create(
        key="event:2021-W05-F", event=live, window_start=live.starts_at, window_end=live.ends_at
    )
    flag = Flag.objects.create(
        run=run,
        detector=Flag.Detector.SESSIONS,
        version="1",
        family=Flag.Family.LINKS,
        player_keys=["p0000006", "p0000007"],
        evidence={"ip": SECRET_IP, "device": SECRET_DEVICE},
        score=3.5,
    )
    case = Case.objects.create(key="p0000006,p0000007", score=3.5, reason=SECRET_REASON)
    case.flags.add(flag)
    for key in ("p0000006", "p0000007"):
        CasePlayer.objects.create(case=case, player=players[key])
    return Tour(
        season=season,
        weekly=weekly,
        monthly=monthly,
        live=live,
        players=players,
        reviewer=reviewer,
        pending=pending,
    )


def seated_final(tour: Tour, players: int = 8) -> Event:
    """Championship 2021-NC, seated, live at ``NOW``: the first ``players`` players by id
    invited, round 1 drawn from seed 7."""
    event = make_event(
        tour.season,
        "2021-NC",
        "championship",
        format="seated",
        open_entry=False,
        day=date(2021, 2, 8),
    )
    field = sorted(tour.players.values(), key=lambda p: p.external_id)[:players]
    Entry.objects.bulk_create([Entry(event=event, player=p, basis="invited") for p in field])
    seated_round_create(event=event, by=tour.reviewer, seed=7)
    return event
