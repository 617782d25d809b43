"""A deterministic simulation of online play: realistic game records v1 (SPEC §9) for an event.

Used by ``manage.py simulate_week``, the ``ingest`` bench stage, demo data and the integrity
simulator (SPEC §7: matchmade tables are random, which is the baseline collusion stands out
from). The same arguments always give the same records.

The model:

* **Players** (`simulate_players`) have a skill (normal), an activity (log-normal: a few
  play a lot), a favourite hour of the day, a province (the big provinces weighted up) and
  a home session (IPv4 address, device id, client version).
* **Traffic.** The window is cut into whole hours inside the event's daily hours. A player
  is online in an hour in proportion to their activity and how close the hour is to their
  favourite one; weekends are busier. The games are spread over the hours in proportion.
* **Matchmaking.** Each hour has 19 rounds of 185 s (a game lasts at most 3 minutes, SPEC
  §3). The players online in the hour are drawn by weight; each round the matchmaker seats
  a random subset of them at 4-player tables, so nobody plays two games at once.
* **Hands** are dealt from the real deck (a sample without replacement from the season's
  card table), so deck validation passes. 85% of the games end ``out``: the winner, drawn
  by skill, holds no card and the others 1-12; the rest end on ``time`` at 180 s with 1-10
  cards each. Better players tend to hold fewer cards.
* **Sessions**: each seat carries its player's session; one in twenty comes from another
  address (mobile networks).
* **Move logs** (``rules`` given): each game is played out by the engine's bots under the
  ruleset (``tournaments.domain.engine``), so hands, ending and length are the game's and
  the record carries its move log v1; the winner is then whoever the bots make it.
"""

import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from itertools import accumulate
from typing import Any
from zoneinfo import ZoneInfo

from accounts.provinces import PROVINCES
from core.domain.clock import TOUR_TZ
from tournaments.domain.calendar import DAILY_HOURS
from tournaments.domain.cards import CLASSIC, CardTable
from tournaments.domain.engine import Bot, play_game
from tournaments.domain.rules import Ruleset

ROUNDS_PER_HOUR = 19
ROUND_SECONDS = 185
GAME_LIMIT_SECONDS = 180
TIME_SHARE = 0.15
SEATS = 4
SURNAMES = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘"
GIVEN = "伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂小猴子龙凤云飞雪晨星"
BIG_PROVINCES = frozenset({"广东", "江苏", "浙江", "山东", "河南", "四川"})
CLIENTS = ("1.4.2", "1.4.3", "1.5.0")
CLIENT_WEIGHTS = (2, 3, 5)
IP_FIRST_OCTETS = (36, 39, 42, 58, 59, 60, 61, 101, 106, 110, 111, 112, 113, 114, 115, 116,
                   117, 118, 119, 120, 121, 122, 123, 124, 125, 171, 175, 180, 182, 183, 211,
                   218, 219, 220, 221, 222, 223)  # fmt: skip


@dataclass(frozen=True, slots=True)
class SimPlayer:
    id: str
    name: str
    province: str
    skill: float
    activity: float
    peak_hour: float
    ip: str
    device: str
    client: str


def _ip(rng: random.Random) -> str:
    return (
        f"{rng.choice(IP_FIRST_OCTETS)}.{rng.randint(0, 255)}."
        f"{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    )


def simulate_players(count: int, *, seed: int = 0, id_prefix: str = "p") -> list[SimPlayer]:
    """``count`` players with ids ``{id_prefix}0000001``…, deterministic in ``seed``."""
    rng = random.Random(f"players:{seed}")  # noqa: S311 - simulation, not security
    weights = [3 if province in BIG_PROVINCES else 1 for province in PROVINCES]
    provinces = rng.choices(PROVINCES, weights, k=count)
    return [
        SimPlayer(
            id=f"{id_prefix}{number:07d}",
            name=rng.choice(SURNAMES) + rng.choice(GIVEN) + rng.choice(GIVEN),
            province=provinces[number - 1],
            skill=rng.gauss(0.0, 1.0),
            activity=rng.lognormvariate(0.0, 1.0),
            peak_hour=min(23.5, max(10.5, rng.gauss(20.0, 2.5))),
            ip=_ip(rng),
            device=f"d-{rng.getrandbits(24):06x}",
            client=rng.choices(CLIENTS, CLIENT_WEIGHTS)[0],
        )
        for number in range(1, count + 1)
    ]


def _hours(
    window: tuple[datetime, datetime], daily_hours: tuple[time, time] | None, tz: ZoneInfo
) -> list[datetime]:
    """Local starts of the whole hours inside the window and the daily hours."""
    start, end = (moment.astimezone(tz) for moment in window)
    hour = start.replace(minute=0, second=0, microsecond=0)
    if hour < start:
        hour += timedelta(hours=1)
    hours = []
    while hour + timedelta(hours=1) - timedelta(microseconds=1) <= end:
        last = (hour + timedelta(hours=1) - timedelta(microseconds=1)).time()
        if daily_hours is None or (daily_hours[0] <= hour.time() and last <= daily_hours[1]):
            hours.append(hour)
        hour = (hour + timedelta(hours=1)).astimezone(tz)
    return hours


def _spread(total: int, weights: Sequence[float]) -> list[int]:
    """Split ``total`` in proportion to ``weights`` (largest remainders, deterministic)."""
    scale = total / sum(weights)
    shares = [weight * scale for weight in weights]
    counts = [int(share) for share in shares]
    order = sorted(range(len(shares)), key=lambda i: (counts[i] - shares[i], i))
    for i in order[: total - sum(counts)]:
        counts[i] += 1
    return counts


def _online(
    rng: random.Random, players: Sequence[SimPlayer], cum: Sequence[float], needed: int
) -> list[SimPlayer]:
    """Draw ``needed`` distinct players by their weight at this hour of the day."""
    chosen: dict[int, None] = {}
    for _ in range(20):
        for i in rng.choices(range(len(players)), cum_weights=cum, k=needed):
            chosen[i] = None
        if len(chosen) >= needed:
            break
    else:  # weights too concentrated: fill up uniformly
        rest = [i for i in range(len(players)) if i not in chosen]
        chosen.update(dict.fromkeys(rng.sample(rest, needed - len(chosen))))
    return [players[i] for i in list(chosen)[:needed]]


def _deal(
    rng: random.Random, table: Sequence[SimPlayer], deck: Sequence[str], out: bool
) -> list[list[str]]:
    if out:
        winner = rng.choices(range(len(table)), [math.exp(p.skill) for p in table])[0]
        sizes = [
            0 if i == winner else min(12, max(1, round(rng.gauss(6.5 - 1.5 * p.skill, 3))))
            for i, p in enumerate(table)
        ]
    else:
        sizes = [min(10, max(1, round(rng.gauss(5.0 - 1.2 * p.skill, 2.5)))) for p in table]
    cards = rng.sample(deck, sum(sizes))
    hands, start = [], 0
    for size in sizes:
        hands.append(cards[start : start + size])
        start += size
    return hands


def simulate_games(
    *,
    players: Sequence[SimPlayer],
    games: int,
    event: str,
    window: tuple[datetime, datetime],
    seed: int = 0,
    daily_hours: tuple[time, time] | None = DAILY_HOURS,
    table: CardTable = CLASSIC,
    tz: ZoneInfo = TOUR_TZ,
    rules: Ruleset | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield ``games`` singles records of ``event`` in time order (ids ``g-{event}-0000001``…).

    Games fall in the whole hours of ``window`` inside ``daily_hours`` (local time in
    ``tz``); raises ValueError when there is no such hour or too few players to seat them.
    """
    if games < 0:
        raise ValueError(f"games must be >= 0, got {games}")
    hours = _hours(window, daily_hours, tz)
    if not hours:
        raise ValueError("the window holds no whole hour inside the daily hours")
    rng = random.Random(f"games:{seed}:{event}")  # noqa: S311 - simulation, not security
    deck = [code for code, copies in table.copies.items() for _ in range(copies)]
    cum = {
        hour: list(
            accumulate(
                p.activity * math.exp(-(((hour + 0.5 - p.peak_hour) / 2.5) ** 2) / 2)
                for p in players
            )
        )
        for hour in {moment.hour for moment in hours}
    }
    traffic = [cum[moment.hour][-1] * (1.25 if moment.weekday() >= 5 else 1.0) for moment in hours]
    number = 0
    for moment, count in zip(hours, _spread(games, traffic), strict=True):
        if not count:
            continue
        per_round = [count // ROUNDS_PER_HOUR] * ROUNDS_PER_HOUR
        for r in rng.sample(range(ROUNDS_PER_HOUR), count % ROUNDS_PER_HOUR):
            per_round[r] += 1
        tables = max(per_round)
        if SEATS * tables > len(players):
            raise ValueError(
                f"{SEATS * tables} players needed at once at {moment:%Y-%m-%d %H:00}, "
                f"only {len(players)} exist: simulate more players or fewer games"
            )
        online = _online(rng, players, cum[moment.hour], min(len(players), 6 * tables))
        for r, tables_now in enumerate(per_round):
            seated = rng.sample(online, SEATS * tables_now)
            round_start = moment + timedelta(seconds=r * ROUND_SECONDS)
            for t in range(tables_now):
                number += 1
                yield _record(
                    rng,
                    f"g-{event}-{number:07d}",
                    event,
                    round_start + timedelta(seconds=rng.randint(0, 4)),
                    seated[t * SEATS : (t + 1) * SEATS],
                    deck,
                    rules,
                )


def _record(
    rng: random.Random,
    record_id: str,
    event: str,
    started: datetime,
    table: Sequence[SimPlayer],
    deck: Sequence[str],
    rules: Ruleset | None,
) -> dict[str, Any]:
    log = None
    if rules is not None:
        hands, out, seconds, log = logged_game(rng, rules, len(table))
    else:
        out = rng.random() >= TIME_SHARE
        hands = _deal(rng, table, deck, out)
        seconds = rng.randint(60, GAME_LIMIT_SECONDS - 5) if out else GAME_LIMIT_SECONDS
    return {
        "id": record_id,
        "event": event,
        "mode": "singles",
        "started_at": started.isoformat(timespec="seconds"),
        "ended_at": (started + timedelta(seconds=seconds)).isoformat(timespec="seconds"),
        "ended_by": "out" if out else "time",
        "seats": [
            {
                "player": {"id": p.id, "name": p.name, "province": p.province},
                "team": None,
                "hand": hand,
                "session": {
                    "ip": p.ip if rng.random() >= 0.05 else _ip(rng),
                    "device": p.device,
                    "client": p.client,
                },
            }
            for p, hand in zip(table, hands, strict=True)
        ],
        "log": log,
    }


def logged_game(
    rng: random.Random, rules: Ruleset, seats: int, bots: Sequence[Bot] | None = None
) -> tuple[list[list[str]], bool, int, dict[str, Any]]:
    """One game played by the engine's ``bots`` (default: honest ones): (hands, ended out,
    whole seconds, move log v1)."""
    game = play_game(rules, random.Random(rng.getrandbits(64)), seats=seats, bots=bots)  # noqa: S311
    seconds = max(1, -(-game.duration_ms // 1000))
    return game.hands, game.ended_by == "out", seconds, game.log
