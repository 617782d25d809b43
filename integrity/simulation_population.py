"""The simulated population (see :mod:`integrity.simulation`): accounts with their homes,
devices and carrier gateways, the real-world sharing of honest players (households, carrier
NAT, second devices, new phones) and the injected cheaters (farms, colluding pairs,
boosters) with their labels. Deterministic in the seed (named ``random`` streams).
"""

import random
from dataclasses import dataclass, field
from typing import Any

from tournaments.simulation import SimPlayer, simulate_players


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
class Account:
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
class Group:
    """Accounts queueing together: ``members[0]`` is fed by the others."""

    members: tuple[int, ...]
    assist: float
    feed: float
    extra: tuple[int, int]
    farm: bool


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


class Population:
    """The accounts of a simulated season over ``rounds`` matchmaking rounds, their sharing
    and the injected cheaters."""

    def __init__(
        self,
        *,
        players: int,
        rounds: int,
        cheaters: float,
        seed: int,
        realism: Realism,
        cheating: Cheating,
    ) -> None:
        self.seed, self.realism, self.cheating, self.rounds = seed, realism, cheating, rounds
        rng = random.Random(f"integrity-population:{seed}")  # noqa: S311 - simulation
        base = simulate_players(players, seed=seed)
        gateways = max(1, round(players / realism.accounts_per_gateway))
        self.pools = _gateway_pools(rng, gateways, realism.nat_pool)
        self.accounts = [
            Account(
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
        self.groups: list[Group] = []
        self.solo_factor = [1.0] * players
        self.boosted_factor: dict[int, float] = {}
        self._inject(random.Random(f"integrity-cheaters:{seed}"), cheaters)  # noqa: S311

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
                Group(
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
            Group(
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
