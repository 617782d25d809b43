"""Simulated seasons with injected cheaters, to measure the integrity detectors (SPEC §7:
"each detector ... is measured on simulated seasons with injected cheaters").

Deterministic in its arguments (stdlib ``random`` with named streams). The players come
from ``tournaments.simulation.simulate_players`` (skill, activity, favourite hour,
province, home address, device, client); this module adds what integrity needs: sessions,
real-world sharing of addresses and devices, and cheaters.

**Play.** Each simulated week is a weekly qualifier (周预赛, ``YYYY-Www-Q``): Monday to
Sunday, 10:00–23:59 Asia/Shanghai, 19 rounds of 185 s an hour (a game lasts at most
3 minutes, SPEC §3). An account plays ``games_per_week × activity`` games a week (activity
log-normal: a few play a lot) in *sessions* of 3–12 consecutive rounds, on days weighted
towards the weekend, starting near its favourite hour. **Matchmaking** is per round, from
the accounts queued in that round only: groups that queue together get a table each, filled
up from the solo queue; the solo queue is shuffled and cut into tables of four; up to three
accounts wait for the next round. **Hands** are dealt from the real 108-card deck; the
winner is drawn with weight ``exp(skill)``; 85 % of games end ``out`` (winner on no card),
the rest on ``time``. Records are game record v1 (SPEC §9) and pass ingest validation.

**Real-world sharing (honest).**

* *Households*: ``household_share`` of the accounts live in households of 2–3 on one home
  address, each on their own device, with favourite hours close together.
* *Carrier NAT*: ``mobile_share`` of the accounts play on mobile data only, and a
  broadband account plays ``mobile_sessions`` of its sessions on mobile; a mobile session
  comes from a random public address of its carrier gateway (``nat_pool`` addresses in two
  /24 ranges; about one gateway per 500 accounts), so one address carries many accounts.
* *Devices*: ``second_device_share`` of the accounts also use a tablet (30 % of their
  sessions); ``new_phone_share`` switch to a new phone at a random moment.

**Cheaters** (``cheaters`` × accounts; none in households):

* *Farms* (多开刷分, ~45 %): 2–4 accounts of one operator on one address, either all on one
  device (multi-open) or each on its own emulator device; 2–4 sessions a week of 6–12 games
  in which all of them queue together. The first account is fed: the feeders' play makes it
  go out in ``farm_assist`` of those games (otherwise the winner is drawn by skill as
  usual), and when it leads (wins), each feeder keeps 2–5 extra
  high cards (20 or 50 points; ``farm_extra``) with probability ``farm_feed``. The fed
  account also plays half its usual solo schedule; the feeders play only in the farm.
* *Colluding pairs* (串谋让分, ~35 %): two real people (own addresses and devices) who keep
  their solo schedules and add 2–4 sessions a week of 5–10 games queued together; the
  feeder keeps 2–5 extra high cards (``pair_extra``) when the partner leads (probability
  ``pair_feed``: 让分, giving points away, is the point of the collusion) and plays to let
  the partner go out in ``pair_assist`` of their games together.
* *Boosters* (代练代打, ~20 %): at a moment between 35 % and 65 % of the window someone else
  takes over the account: a new device and address, the hired player's favourite hour, a
  skill ``boost_jump`` standard deviations higher and 1.5 times the games.

Labels: ``{"farms": [[fed, feeder, ...]], "pairs": [[beneficiary, feeder]], "boosters":
[id, ...]}``.
"""

import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from itertools import accumulate
from typing import Any

from core.domain.clock import TOUR_TZ
from integrity.domain.audit import SeatRow
from integrity.domain.data import hour_bucket
from tournaments.domain.calendar import event_code_for_week
from tournaments.domain.cards import CLASSIC
from tournaments.domain.scoring import tour_singles
from tournaments.simulation import SimPlayer, simulate_players

ROUNDS_PER_HOUR = 19
ROUND_SECONDS = 185
GAME_LIMIT_SECONDS = 180
FIRST_HOUR = 10
HOURS_PER_DAY = 14  # 10:00 to 23:59
ROUNDS_PER_DAY = ROUNDS_PER_HOUR * HOURS_PER_DAY
SEATS = 4
TIME_SHARE = 0.15
DECK = tuple(code for code, copies in CLASSIC.copies.items() for _ in range(copies))
POINTS = dict(CLASSIC.points)
HIGH_CARDS = tuple(code for code in DECK if POINTS[code] >= 20)


@dataclass(frozen=True)
class Realism:
    """Knobs of honest play and real-world sharing (see the module docstring)."""

    games_per_week: float = 18.0
    session_games: tuple[int, int] = (3, 12)
    weekend_weight: float = 1.25
    hour_spread: float = 1.5
    household_share: float = 0.10
    mobile_share: float = 0.30
    mobile_sessions: float = 0.25
    accounts_per_gateway: int = 500
    nat_pool: int = 16
    second_device_share: float = 0.15
    new_phone_share: float = 0.06


@dataclass(frozen=True)
class Cheating:
    """Knobs of the injected cheaters (see the module docstring)."""

    farm_share: float = 0.45
    pair_share: float = 0.35
    farm_size: tuple[int, int] = (2, 4)
    farm_sessions: tuple[int, int] = (2, 4)
    farm_session_games: tuple[int, int] = (6, 12)
    farm_assist: float = 0.6
    farm_feed: float = 0.9
    farm_extra: tuple[int, int] = (2, 5)
    pair_sessions: tuple[int, int] = (2, 4)
    pair_session_games: tuple[int, int] = (5, 10)
    pair_assist: float = 0.35
    pair_feed: float = 0.9
    pair_extra: tuple[int, int] = (2, 5)
    boost_jump: tuple[float, float] = (1.5, 2.5)


@dataclass
class _Account:
    player: SimPlayer
    skill: float
    home_ip: str
    device: str
    gateway: int
    mobile_only: bool
    tablet: str = ""
    new_phone: tuple[int, str] | None = None  # (from round, device)
    boost: tuple[int, float, str, str, float] | None = None  # from round: skill, device, ip, peak
    farm_device: str = ""  # sessions in the farm use this device (multi-open)
    farm_ip: str = ""


@dataclass
class Labels:
    farms: list[list[str]] = field(default_factory=list)
    pairs: list[list[str]] = field(default_factory=list)
    boosters: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"farms": self.farms, "pairs": self.pairs, "boosters": self.boosters}


@dataclass
class _Group:
    """Accounts queueing together: ``members[0]`` is fed by the others."""

    members: tuple[int, ...]
    assist: float
    feed: float
    extra: tuple[int, int]
    farm: bool


@dataclass
class Season:
    """A simulated season: its labels, its event codes and its records (a generator)."""

    labels: Labels
    events: list[str]
    start: date
    weeks: int
    accounts: int
    records: Iterator[dict[str, Any]]


def _ip(rng: random.Random) -> str:
    return (
        f"{rng.randint(1, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    )


def _device(rng: random.Random) -> str:
    return f"d-{rng.getrandbits(32):08x}"


def _gateway_pools(rng: random.Random, gateways: int, size: int) -> list[list[str]]:
    pools = []
    for _ in range(gateways):
        ranges = [
            f"{rng.randint(36, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}" for _ in "ab"
        ]
        pools.append([f"{ranges[i % 2]}.{rng.randint(1, 254)}" for i in range(size)])
    return pools


class _Simulator:
    def __init__(
        self,
        *,
        players: int,
        weeks: int,
        cheaters: float,
        seed: int,
        start: date,
        realism: Realism,
        cheating: Cheating,
    ) -> None:
        if players < 8 or weeks < 1 or not 0 <= cheaters < 0.5:
            raise ValueError("need players >= 8, weeks >= 1 and 0 <= cheaters < 0.5")
        if start.weekday() != 0:
            raise ValueError(f"the season must start on a Monday, not {start}")
        self.weeks, self.seed, self.start = weeks, seed, start
        self.realism, self.cheating = realism, cheating
        self.rounds = weeks * 7 * ROUNDS_PER_DAY
        rng = random.Random(f"integrity-population:{seed}")  # noqa: S311 - simulation
        base = simulate_players(players, seed=seed)
        gateways = max(1, round(players / realism.accounts_per_gateway))
        self.pools = _gateway_pools(rng, gateways, realism.nat_pool)
        self.accounts = [
            _Account(
                player=p,
                skill=p.skill,
                home_ip=p.ip,
                device=p.device,
                gateway=rng.randrange(gateways),
                mobile_only=rng.random() < realism.mobile_share,
            )
            for p in base
        ]
        for account in self.accounts:
            if rng.random() < realism.second_device_share:
                account.tablet = _device(rng)
            if rng.random() < realism.new_phone_share:
                account.new_phone = (rng.randrange(self.rounds), _device(rng))
        self.peak = [p.peak_hour for p in base]
        self.household: set[int] = set()
        self._households(rng)
        self.labels = Labels()
        self.groups: list[_Group] = []
        self.solo_factor = [1.0] * players
        self.boosted_factor: dict[int, float] = {}
        self._inject(random.Random(f"integrity-cheaters:{seed}"), cheaters)  # noqa: S311

    # -- population --------------------------------------------------------------------------

    def _households(self, rng: random.Random) -> None:
        order = list(range(len(self.accounts)))
        rng.shuffle(order)
        budget = round(self.realism.household_share * len(order))
        i = 0
        while i + 2 <= budget:
            size = min(rng.randint(2, 3), budget - i)
            if size < 2:
                break
            members = order[i : i + size]
            i += size
            head = self.accounts[members[0]]
            peak = self.peak[members[0]]
            for m in members:
                account = self.accounts[m]
                account.home_ip = head.home_ip
                account.mobile_only = False
                self.peak[m] = min(23.5, max(10.5, peak + rng.gauss(0, 0.5)))
                self.household.add(m)

    def _inject(self, rng: random.Random, cheaters: float) -> None:
        total = round(cheaters * len(self.accounts))
        if not total:
            return
        pool = [i for i in range(len(self.accounts)) if i not in self.household]
        rng.shuffle(pool)
        chosen = pool[:total]
        farm_budget = round(total * self.cheating.farm_share)
        pair_budget = round(total * self.cheating.pair_share)
        at = 0
        while farm_budget - at >= 2:
            size = min(rng.randint(*self.cheating.farm_size), farm_budget - at)
            members = tuple(chosen[at : at + size])
            at += size
            self._farm(rng, members)
        end = at + pair_budget
        while end - at >= 2:
            members = tuple(chosen[at : at + 2])
            at += 2
            self.groups.append(
                _Group(
                    members,
                    self.cheating.pair_assist,
                    self.cheating.pair_feed,
                    self.cheating.pair_extra,
                    False,
                )
            )
            self.labels.pairs.append([self.accounts[m].player.id for m in members])
        for m in chosen[at:]:
            self._booster(rng, m)

    def _farm(self, rng: random.Random, members: tuple[int, ...]) -> None:
        ip = _ip(rng)
        shared_device = _device(rng) if rng.random() < 0.5 else ""
        for m in members:
            account = self.accounts[m]
            account.farm_ip = ip
            account.farm_device = shared_device or _device(rng)
            account.mobile_only = False
        self.solo_factor[members[0]] = 0.5
        for m in members[1:]:
            self.solo_factor[m] = 0.0
        self.groups.append(
            _Group(
                members,
                self.cheating.farm_assist,
                self.cheating.farm_feed,
                self.cheating.farm_extra,
                True,
            )
        )
        self.labels.farms.append([self.accounts[m].player.id for m in members])

    def _booster(self, rng: random.Random, m: int) -> None:
        account = self.accounts[m]
        moment = int(self.rounds * rng.uniform(0.35, 0.65))
        jump = rng.uniform(*self.cheating.boost_jump)
        peak = min(23.5, max(10.5, rng.gauss(20.0, 2.5)))
        account.boost = (moment, account.skill + jump, _device(rng), _ip(rng), peak)
        account.mobile_only = False
        self.boosted_factor[m] = 1.5
        self.labels.boosters.append(account.player.id)

    # -- schedules ---------------------------------------------------------------------------

    def _session_start(self, rng: random.Random, week: int, peak: float, cum: list[float]) -> int:
        day = rng.choices(range(7), cum_weights=cum)[0]
        hour = min(23.99, max(10.0, rng.gauss(peak, self.realism.hour_spread)))
        offset = int((hour - FIRST_HOUR) * ROUNDS_PER_HOUR)
        return (week * 7 + day) * ROUNDS_PER_DAY + min(offset, ROUNDS_PER_DAY - 1)

    def _sessions(
        self, rng: random.Random, week: int, games: int, peak: float, size: tuple[int, int]
    ) -> Iterator[tuple[int, int]]:
        cum = list(accumulate(self.realism.weekend_weight if d >= 5 else 1.0 for d in range(7)))
        while games > 0:
            length = min(games, rng.randint(*size))
            games -= length
            start = self._session_start(rng, week, peak, cum)
            day_end = (start // ROUNDS_PER_DAY + 1) * ROUNDS_PER_DAY
            yield start, min(start + length, day_end)

    def schedule(self) -> tuple[list[list[int]], list[list[int]]]:
        """Per round: the solo queue (account indexes) and the groups queued (group indexes)."""
        rng = random.Random(f"integrity-schedule:{self.seed}")  # noqa: S311 - simulation
        solo: list[list[int]] = [[] for _ in range(self.rounds)]
        grouped: list[list[int]] = [[] for _ in range(self.rounds)]
        median = self.realism.games_per_week
        for i, account in enumerate(self.accounts):
            weekly = median * account.player.activity * self.solo_factor[i]
            for week in range(self.weeks):
                games = round(weekly)
                boost = account.boost
                if boost is not None and boost[0] < (week + 1) * 7 * ROUNDS_PER_DAY:
                    games = round(weekly * self.boosted_factor[i])
                for start, end in self._sessions(
                    rng, week, games, self._peak_at(i, week), self.realism.session_games
                ):
                    for t in range(start, end):
                        solo[t].append(i)
        for g, group in enumerate(self.groups):
            cheat = self.cheating
            sessions = cheat.farm_sessions if group.farm else cheat.pair_sessions
            size = cheat.farm_session_games if group.farm else cheat.pair_session_games
            peak = self.peak[group.members[0]]
            for week in range(self.weeks):
                for _ in range(rng.randint(*sessions)):
                    games = rng.randint(*size)
                    for start, end in self._sessions(rng, week, games, peak, (games, games)):
                        for t in range(start, end):
                            grouped[t].append(g)
        return solo, grouped

    def _peak_at(self, i: int, week: int) -> float:
        account = self.accounts[i]
        if account.boost is not None and account.boost[0] < week * 7 * ROUNDS_PER_DAY:
            return account.boost[4]  # the hired player's hours
        return self.peak[i]

    # -- games -------------------------------------------------------------------------------

    def _seat_session(
        self, rng: random.Random, i: int, t: int, in_farm: bool
    ) -> tuple[str, str, float]:
        """(ip, device, skill) of account ``i`` playing at round ``t``."""
        account = self.accounts[i]
        if account.boost is not None and t >= account.boost[0]:
            _, skill, device, ip, _ = account.boost
            return ip, device, skill
        if in_farm:
            return account.farm_ip, account.farm_device, account.skill
        device = account.device
        if account.new_phone is not None and t >= account.new_phone[0]:
            device = account.new_phone[1]
        if account.tablet and rng.random() < 0.3:
            device = account.tablet
        if account.mobile_only or rng.random() < self.realism.mobile_sessions:
            ip = rng.choice(self.pools[account.gateway])
        else:
            ip = account.home_ip
        return ip, device, account.skill

    def records(self) -> Iterator[dict[str, Any]]:
        solo, grouped = self.schedule()
        rng = random.Random(f"integrity-games:{self.seed}")  # noqa: S311 - simulation
        session_rng = random.Random(f"integrity-sessions:{self.seed}")  # noqa: S311
        number = 0
        events = [
            event_code_for_week(self.start + timedelta(weeks=w), "weekly_qualifier")
            for w in range(self.weeks)
        ]
        for t in range(self.rounds):
            groups = [self.groups[g] for g in dict.fromkeys(grouped[t])]
            busy = {m for group in groups for m in group.members}
            queue = [i for i in dict.fromkeys(solo[t]) if i not in busy]
            rng.shuffle(queue)
            tables: list[tuple[list[int], _Group | None]] = []
            for group in groups:
                free = SEATS - len(group.members)
                if len(queue) < free:
                    continue
                seated = list(group.members) + queue[len(queue) - free :]
                del queue[len(queue) - free :]
                tables.append((seated, group))
            for k in range(len(queue) // SEATS):
                tables.append((queue[k * SEATS : (k + 1) * SEATS], None))
            if not tables:
                continue
            day, in_day = divmod(t, ROUNDS_PER_DAY)
            hour, r = divmod(in_day, ROUNDS_PER_HOUR)
            moment = datetime.combine(
                self.start + timedelta(days=day), time(FIRST_HOUR + hour), TOUR_TZ
            ) + timedelta(seconds=r * ROUND_SECONDS)
            event = events[day // 7]
            for seated, queued in tables:
                rng.shuffle(seated)
                number += 1
                yield self._game(
                    rng, session_rng, f"s{self.seed}-{number:08d}", event, moment, t, seated, queued
                )

    def _game(
        self,
        rng: random.Random,
        session_rng: random.Random,
        record_id: str,
        event: str,
        moment: datetime,
        t: int,
        seated: Sequence[int],
        group: _Group | None,
    ) -> dict[str, Any]:
        farm = group.members if group is not None and group.farm else ()
        sessions = [self._seat_session(session_rng, i, t, i in farm) for i in seated]
        skills = [s for _, _, s in sessions]
        out = rng.random() >= TIME_SHARE
        if out:
            if group is not None and rng.random() < group.assist:
                winner = seated.index(group.members[0])
            else:
                winner = rng.choices(range(SEATS), [math.exp(s) for s in skills])[0]
            sizes = [
                0 if k == winner else min(12, max(1, round(rng.gauss(6.5 - 1.5 * s, 3))))
                for k, s in enumerate(skills)
            ]
        else:
            sizes = [min(10, max(1, round(rng.gauss(5.0 - 1.2 * s, 2.5)))) for s in skills]
        cards = rng.sample(DECK, sum(sizes))
        hands, at = [], 0
        for size in sizes:
            hands.append(cards[at : at + size])
            at += size
        if group is not None:
            self._feed(rng, group, seated, hands, cards)
        start = moment + timedelta(seconds=rng.randint(0, 4))
        seconds = rng.randint(60, GAME_LIMIT_SECONDS - 5) if out else GAME_LIMIT_SECONDS
        return {
            "id": record_id,
            "event": event,
            "mode": "singles",
            "started_at": start.isoformat(timespec="seconds"),
            "ended_at": (start + timedelta(seconds=seconds)).isoformat(timespec="seconds"),
            "ended_by": "out" if out else "time",
            "seats": [
                {
                    "player": {
                        "id": self.accounts[i].player.id,
                        "name": self.accounts[i].player.name,
                        "province": self.accounts[i].player.province,
                    },
                    "team": None,
                    "hand": hand,
                    "session": {
                        "ip": ip,
                        "device": device,
                        "client": self.accounts[i].player.client,
                    },
                }
                for i, hand, (ip, device, _) in zip(seated, hands, sessions, strict=True)
            ],
            "log": None,
        }

    def _feed(
        self,
        rng: random.Random,
        group: _Group,
        seated: Sequence[int],
        hands: list[list[str]],
        dealt: list[str],
    ) -> None:
        """When the fed account leads (lowest hand), feeders keep extra high cards."""
        points = [sum(POINTS[c] for c in hand) for hand in hands]
        fed = seated.index(group.members[0])
        if points[fed] != min(points):
            return
        left: dict[str, int] = {}
        for code in HIGH_CARDS:
            left[code] = left.get(code, 0) + 1
        for code in dealt:
            if code in left:
                left[code] -= 1
        spare = [code for code, n in left.items() for _ in range(n)]
        for k, i in enumerate(seated):
            if i in group.members[1:] and rng.random() < group.feed and spare:
                extra = rng.sample(spare, min(len(spare), rng.randint(*group.extra)))
                for code in extra:
                    spare.remove(code)
                hands[k].extend(extra)


def simulate_season(
    *,
    players: int,
    weeks: int,
    cheaters: float,
    seed: int,
    start: date = date(2021, 1, 4),
    realism: Realism | None = None,
    cheating: Cheating | None = None,
) -> Season:
    """A season of weekly qualifiers from ``start`` (a Monday) with injected cheaters."""
    sim = _Simulator(
        players=players,
        weeks=weeks,
        cheaters=cheaters,
        seed=seed,
        start=start,
        realism=realism or Realism(),
        cheating=cheating or Cheating(),
    )
    return Season(
        labels=sim.labels,
        events=[
            event_code_for_week(start + timedelta(weeks=w), "weekly_qualifier")
            for w in range(weeks)
        ],
        start=start,
        weeks=weeks,
        accounts=players,
        records=sim.records(),
    )


def record_rows(record: dict[str, Any]) -> list[SeatRow]:
    """The seat rows of one singles record (classic deck, tour singles scoring) — the rows
    the audit reads from the database for the same game after ingest."""
    hour = hour_bucket(datetime.fromisoformat(record["ended_at"]))
    seats = record["seats"]
    points = [sum(POINTS[c] for c in seat["hand"]) for seat in seats]
    scores = tour_singles(points)
    return [
        (
            record["id"],
            hour,
            seat["player"]["id"],
            hand,
            score,
            seat["session"]["ip"],
            seat["session"]["device"],
        )
        for seat, hand, score in zip(seats, points, scores, strict=True)
    ]
