"""The simulated population (see :mod:`integrity.simulation`): accounts with their homes,
devices and carrier gateways, the real-world sharing of honest players (households, carrier
NAT, campuses, second devices, new phones), the honest models that stress boosting's null (heavy
players, steady improvers who change phone), honest friends who queue together, and the
injected cheaters (farms, colluding pairs of five models, boosters of three) with their
labels. Deterministic in the seed (named
``random`` streams); a knob left at its default draws nothing, so the default population
is the one the earlier simulator drew.
"""

import random
from dataclasses import dataclass, field
from typing import Any, Final

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
    #: Heavy players: this share of the accounts play ``heavy_games`` games a week (uniform).
    heavy_share: float = 0.0
    heavy_games: tuple[float, float] = (100.0, 250.0)
    #: Steady improvers: this share of the accounts play ``improver_games`` games a week,
    #: their skill rising linearly by ``improver_gain`` SD over the window, and switch to a
    #: new phone at a moment uniform in ``improver_phone`` (shares of the window).
    improver_share: float = 0.0
    improver_games: tuple[float, float] = (40.0, 150.0)
    improver_gain: tuple[float, float] = (0.5, 1.5)
    improver_phone: tuple[float, float] = (0.3, 0.7)
    #: Travellers: this share of the accounts spend ``traveller_days`` days away from home,
    #: playing from another address (its own range), on a borrowed device with probability
    #: ``traveller_borrowed`` — another person's sessions, played by the owner.
    traveller_share: float = 0.0
    traveller_days: tuple[float, float] = (1.0, 3.0)
    traveller_borrowed: float = 0.5
    #: Honest friends: this share of the accounts (outside households) form groups of 2-3
    #: that queue together for ``friend_together`` of their games (a share drawn per group);
    #: ``friend_household`` of the groups also live on one address (households of friends).
    friend_share: float = 0.0
    friend_together: tuple[float, float] = (0.05, 0.2)
    friend_household: float = 0.3
    #: Campuses: this share of the accounts (outside households and the stress models) are
    #: students, on campuses of ``campus_size`` accounts. On weekdays a student plays from
    #: the campus's ``campus_pool`` public addresses (one range: the campus NAT), at weekends
    #: from home; students play in the evening.
    campus_share: float = 0.0
    campus_size: tuple[int, int] = (100, 400)
    campus_pool: int = 4
    #: Who goes out in a game that ends with a player out: at 0 by Luce's choice axiom (a
    #: seat goes out with odds ``exp(skill)``, the pair tests' null); above 0 by Thurstone's
    #: model, the highest ``skill`` plus normal noise of this SD, where the axiom fails (a
    #: strong player at the table takes wins from the weak more than from the strong).
    winner_noise: float = 0.0
    #: Daily form: each account plays a tour day at its skill plus a normal offset of this
    #: SD, the same in all its games of that day (played in
    #: :class:`~integrity.simulation_play.Simulator`), so friends who queue together on a
    #: few evenings play those games in those evenings' form, and a block of an account's
    #: games need not be in its usual form (the tests that compare a player with himself
    #: take his strength as steady over the games compared).
    form: float = 0.0
    #: Playing style: each account ends a lost game with a normal offset of this SD in the
    #: cards it keeps, the same in all its games whatever its skill (a hoarder of wilds ends
    #: heavier, a player who sheds fast lighter), so two friends may differ in their cards
    #: by more than their strengths say (the cards kept test's null must allow for it).
    style: float = 0.0


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
    #: The booster models drawn from, one per booster (uniformly): ``takeover`` (the first
    #: simulator's), ``hire``, ``hire_revert`` (see :data:`BOOSTER_MODELS`).
    booster_models: tuple[str, ...] = ("takeover",)
    #: A hire: its length in days, the hired player's games a day, the owner's games a week.
    hire_days: tuple[float, float] = (2.0, 7.0)
    hire_daily: tuple[float, float] = (8.0, 20.0)
    hire_owner_games: tuple[float, float] = (30.0, 80.0)
    #: The colluding pair models drawn from, one per pair (uniformly; see
    #: :data:`PAIR_MODELS`).
    pair_models: tuple[str, ...] = ("legacy",)


#: The booster models. ``takeover``: between 35 % and 65 % of the window someone else takes
#: over to the end — new device and address, another favourite hour, skill ``boost_jump`` SD
#: higher, 1.5 times the games. ``hire``: a heavy hired player (``hire_daily`` games a day,
#: own device, address and hours, skill ``boost_jump`` SD higher) plays the account for
#: ``hire_days`` days from a moment at least a day into the window; the owner (an engaged
#: player, ``hire_owner_games`` a week) does not come back inside the window.
#: ``hire_revert``: the same, and the owner comes back at the end of the hire with his old
#: device, address and hours (the hire then lasts at most the window less 1.5 days, and
#: leaves the owner at least half a day).
BOOSTER_MODELS: Final = ("takeover", "hire", "hire_revert")

#: The colluding pair models: how the feeder helps the beneficiary at their shared tables.
#: ``legacy`` (the first simulator's): lets the partner go out in ``pair_assist`` of the
#: games and, when the partner leads, keeps 2-5 extra high cards with probability
#: ``pair_feed``. ``dump``: only the extra high cards when the partner leads. ``last``: the
#: feeder never wins and always finishes last with the heaviest hand. ``assist``: only
#: lets the partner go out (40 % of the games), holding nothing back. ``quiet``: rarely
#: winning together (the partner goes out in 5 % of the games besides his own wins); when
#: the partner does not win, the feeder takes half of his hand (he passes colours and
#: draws for him) with probability 0.8, so the partner ends with fewer points. ``stronger``:
#: the beneficiary plays :data:`STRONGER_LIFT` SD stronger at their shared tables (the
#: feeder plays his cards for him), in who goes out and in the hands left alike.
PAIR_MODELS: Final = ("legacy", "dump", "last", "assist", "quiet", "stronger")

#: How much stronger a ``stronger`` pair's beneficiary plays at the shared tables (SD of skill).
STRONGER_LIFT: Final = 2.0

#: Per pair model: (assist, feed) — the share of games the feeder makes the partner go
#: out, and the probability of the model's feeding in a game (``legacy`` reads the
#: :class:`Cheating` knobs).
PAIR_PLAY: Final = {
    "dump": (0.0, 0.9),
    "last": (0.0, 1.0),
    "assist": (0.4, 0.0),
    "quiet": (0.05, 0.8),
    "stronger": (0.0, 0.0),
}

#: The honest stress models an account may be labelled with (besides the real-world sharing
#: ``household``, ``mobile``, ``tablet``, ``new_phone``, ``campus``).
HONEST_MODELS: Final = ("heavy", "improver", "traveller", "friends")


@dataclass(frozen=True)
class Hire:
    """Someone else plays the account from round ``start`` to round ``end`` (exclusive);
    ``revert``: the owner plays again from ``end``."""

    model: str
    start: int
    end: int
    revert: bool
    skill: float
    device: str
    ip: str
    peak: float
    daily: float


#: The population issue 28 is measured on: 2 % heavy players, 1 % steady improvers who
#: change phone, 3 % honest friends who queue together (a third of the groups on one
#: address), farms of 2-5 accounts, colluding pairs of the four models, and boosters hired
#: for 2-7 days with or without a revert.
VARIED_REALISM: Final = Realism(heavy_share=0.02, improver_share=0.01, friend_share=0.03)
VARIED_CHEATING: Final = Cheating(
    booster_models=("hire", "hire_revert"),
    pair_models=("dump", "last", "assist", "quiet"),
    farm_size=(2, 5),
)


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
    weekly: float | None = None  # games a week, instead of the median times the activity
    gain: float = 0.0  # skill gained linearly over the window (a steady improver)
    away: tuple[int, int, str, str] | None = None  # a traveller: from, to, ip, device or ""
    campus: tuple[str, ...] = ()  # a student: the campus's public addresses
    hire: Hire | None = None


@dataclass
class Boost:
    """A booster's label: the account, its model, the rounds where the hired player starts
    (``change``) and, if the owner comes back inside the window, where he does
    (``revert``); the simulator adds the moments of those rounds (aware datetimes)."""

    player: str
    model: str
    change: int
    revert: int | None
    change_at: Any = None
    revert_at: Any = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "model": self.model,
            "change": self.change_at.isoformat() if self.change_at else None,
            "revert": self.revert_at.isoformat() if self.revert_at else None,
        }


@dataclass
class Labels:
    """The injected cheaters (``as_dict``: the labels file), with each booster's model and
    change (``boosts``) and the honest accounts by model (``honest``: heavy, improver,
    household, mobile, tablet, new_phone, campus)."""

    farms: list[list[str]] = field(default_factory=list)
    pairs: list[list[str]] = field(default_factory=list)
    boosters: list[str] = field(default_factory=list)
    boosts: list[Boost] = field(default_factory=list)
    honest: dict[str, list[str]] = field(default_factory=dict)
    #: The model of each pair, in the order of ``pairs``.
    pair_models: list[str] = field(default_factory=list)
    #: The honest friend groups that queue together.
    friends: list[list[str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"farms": self.farms, "pairs": self.pairs, "boosters": self.boosters}

    def details(self) -> dict[str, Any]:
        """The labels with the boosters' and pairs' models, the boosters' changes, the
        honest models and the friend groups."""
        return {
            **self.as_dict(),
            "boosts": [boost.as_dict() for boost in self.boosts],
            "pair_models": self.pair_models,
            "honest": self.honest,
            "friends": self.friends,
        }

    def honest_models(self, player: str) -> tuple[str, ...]:
        """The honest models an account belongs to (``("plain",)``: none)."""
        found = tuple(model for model, ids in self.honest.items() if player in ids)
        return found or ("plain",)


@dataclass
class Group:
    """Accounts queueing together. ``kind``: ``farm``, ``pair`` (``members[0]`` is fed by
    the others, as ``model`` says) or ``friends`` (honest: nobody is fed)."""

    members: tuple[int, ...]
    assist: float
    feed: float
    extra: tuple[int, int]
    kind: str
    model: str = "legacy"
    #: Friends: the share of their games they queue together.
    together: float = 0.0

    @property
    def farm(self) -> bool:
        return self.kind == "farm"

    @property
    def cheating(self) -> bool:
        return self.kind != "friends"


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
        days: int,
        cheaters: float,
        seed: int,
        realism: Realism,
        cheating: Cheating,
        history_days: int = 0,
    ) -> None:
        self.seed, self.realism, self.cheating, self.rounds = seed, realism, cheating, rounds
        self.days = days
        #: The first days come before the audited window (its history): the hired players
        #: and the improvers' new phones start inside the window.
        self.history_days = history_days
        self.history_rounds = rounds * history_days // days
        rng = random.Random(f"integrity-population:{seed}")  # noqa: S311 - simulation
        base = simulate_players(players, seed=seed)
        gateways = max(1, round(players / realism.accounts_per_gateway))
        self.pools = _gateway_pools(rng, gateways, realism.nat_pool)
        self.accounts = [
            Account(
                player=p,
                skill=p.skill,
                home_ip=p.ip,
                # the player's 24-bit device id made the account's own: a real fingerprint
                # is unique, and 24 bits collide a few times among 20,000 players
                device=f"{p.device}-{p.id}",
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
        self.stressed: set[int] = set()
        if realism.heavy_share or realism.improver_share or realism.traveller_share:
            self._stress(random.Random(f"integrity-stress:{seed}"))  # noqa: S311
        if realism.campus_share:
            self._campuses(random.Random(f"integrity-campus:{seed}"))  # noqa: S311
        self.labels = Labels()
        self.groups: list[Group] = []
        self.friends: set[int] = set()
        if realism.friend_share:
            self._friends(random.Random(f"integrity-friends:{seed}"))  # noqa: S311
        self.solo_factor = [1.0] * players
        self.boosted_factor: dict[int, float] = {}
        self._inject(random.Random(f"integrity-cheaters:{seed}"), cheaters)  # noqa: S311
        self._label_honest()

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

    def _stress(self, rng: random.Random) -> None:
        """Heavy players, steady improvers and travellers (outside households; see
        :class:`Realism`)."""
        realism = self.realism
        order = [i for i in range(len(self.accounts)) if i not in self.household]
        rng.shuffle(order)
        heavy = round(realism.heavy_share * len(self.accounts))
        improvers = round(realism.improver_share * len(self.accounts))
        travellers = round(realism.traveller_share * len(self.accounts))
        for i in order[:heavy]:
            self.accounts[i].weekly = rng.uniform(*realism.heavy_games)
        for i in order[heavy : heavy + improvers]:
            account = self.accounts[i]
            account.weekly = rng.uniform(*realism.improver_games)
            account.gain = rng.uniform(*realism.improver_gain)
            moment = self._in_window(rng.uniform(*realism.improver_phone))
            account.new_phone = (moment, _device(rng))
        day = self.rounds / self.days
        for i in order[heavy + improvers : heavy + improvers + travellers]:
            days = rng.uniform(*realism.traveller_days)
            start = rng.uniform(0.0, max(0.0, self.days - days))
            borrowed = _device(rng) if rng.random() < realism.traveller_borrowed else ""
            away = (int(start * day), int((start + days) * day), _ip(rng), borrowed)
            self.accounts[i].away = away
        self.stressed = set(order[: heavy + improvers + travellers])

    def _campuses(self, rng: random.Random) -> None:
        """Students on campuses (outside households and the stress models; see
        :class:`Realism`): each campus one address range, its students' evening hours."""
        realism = self.realism
        taken = self.household | self.stressed
        order = [i for i in range(len(self.accounts)) if i not in taken]
        rng.shuffle(order)
        budget = min(len(order), round(realism.campus_share * len(self.accounts)))
        at = 0
        while at < budget:
            size = min(rng.randint(*realism.campus_size), budget - at)
            block = f"{rng.randint(36, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}"
            pool = tuple(f"{block}.{rng.randint(1, 254)}" for _ in range(realism.campus_pool))
            for i in order[at : at + size]:
                self.accounts[i].campus = pool
                self.accounts[i].mobile_only = False
                self.peak[i] = min(23.5, max(18.0, rng.gauss(21.5, 1.0)))
            at += size

    def _friends(self, rng: random.Random) -> None:
        """Honest friend groups of 2-3 that queue together (see :class:`Realism`), outside
        households and the stress models; some of them on one home address."""
        realism = self.realism
        order = [
            i
            for i in range(len(self.accounts))
            if i not in self.household and i not in self.stressed
        ]
        rng.shuffle(order)
        budget = round(realism.friend_share * len(self.accounts))
        at = 0
        while budget - at >= 2:
            size = min(rng.choice((2, 2, 3)), budget - at)
            members = tuple(order[at : at + size])
            at += size
            together = rng.uniform(*realism.friend_together)
            if rng.random() < realism.friend_household:
                head = self.accounts[members[0]]
                for m in members:
                    self.accounts[m].home_ip = head.home_ip
                    self.accounts[m].mobile_only = False
            peak = self.peak[members[0]]
            for m in members[1:]:
                self.peak[m] = min(23.5, max(10.5, peak + rng.gauss(0, 0.5)))
            self.groups.append(Group(members, 0.0, 0.0, (0, 0), "friends", together=together))
            self.labels.friends.append([self.accounts[m].player.id for m in members])
            self.friends.update(members)

    def _label_honest(self) -> None:
        """The honest accounts by model (cheaters left out)."""
        cheating = {
            *(p for farm in self.labels.farms for p in farm),
            *(p for pair in self.labels.pairs for p in pair),
            *self.labels.boosters,
        }
        models: dict[str, list[str]] = {
            "heavy": [],
            "improver": [],
            "traveller": [],
            "household": [],
            "mobile": [],
            "tablet": [],
            "new_phone": [],
            "friends": [],
            "campus": [],
        }
        for i, account in enumerate(self.accounts):
            player = account.player.id
            if player in cheating:
                continue
            if account.gain:
                models["improver"].append(player)
            elif account.weekly is not None:
                models["heavy"].append(player)
            if account.away is not None:
                models["traveller"].append(player)
            if i in self.household:
                models["household"].append(player)
            if account.mobile_only:
                models["mobile"].append(player)
            if account.tablet:
                models["tablet"].append(player)
            if account.new_phone is not None and not account.gain:
                models["new_phone"].append(player)
            if i in self.friends:
                models["friends"].append(player)
            if account.campus:
                models["campus"].append(player)
        self.labels.honest = models

    def _inject(self, rng: random.Random, cheaters: float) -> None:
        total = round(cheaters * len(self.accounts))
        if not total:
            return
        pool = [
            i
            for i in range(len(self.accounts))
            if i not in self.household and i not in self.stressed and i not in self.friends
        ]
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
        models = self.cheating.pair_models
        for model in models:
            if model not in PAIR_MODELS:
                raise ValueError(f"unknown pair model {model!r}; known: {PAIR_MODELS}")
        while end - at >= 2:
            members = tuple(chosen[at : at + 2])
            at += 2
            model = models[0] if len(models) == 1 else rng.choice(models)
            assist, feed = PAIR_PLAY.get(
                model, (self.cheating.pair_assist, self.cheating.pair_feed)
            )
            extra = self.cheating.pair_extra
            self.groups.append(Group(members, assist, feed, extra, "pair", model))
            self.labels.pairs.append([self.accounts[m].player.id for m in members])
            self.labels.pair_models.append(model)
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
                "farm",
            )
        )
        self.labels.farms.append([self.accounts[m].player.id for m in members])

    def _booster(self, rng: random.Random, m: int) -> None:
        models = self.cheating.booster_models
        model = models[0] if len(models) == 1 else rng.choice(models)
        if model not in BOOSTER_MODELS:
            raise ValueError(f"unknown booster model {model!r}; known: {BOOSTER_MODELS}")
        if model != "takeover":
            self._hire(rng, m, model)
            return
        account = self.accounts[m]
        moment = self._in_window(rng.uniform(0.35, 0.65))
        jump = rng.uniform(*self.cheating.boost_jump)
        peak = min(23.5, max(10.5, rng.gauss(20.0, 2.5)))
        account.boost = (moment, account.skill + jump, _device(rng), _ip(rng), peak)
        account.mobile_only = False
        self.boosted_factor[m] = 1.5
        self.labels.boosters.append(account.player.id)
        self.labels.boosts.append(Boost(account.player.id, model, moment, None))

    def _in_window(self, share: float) -> int:
        """The round at ``share`` of the audited window (after the history)."""
        return self.history_rounds + int((self.rounds - self.history_rounds) * share)

    def _hire(self, rng: random.Random, m: int, model: str) -> None:
        """A ``hire`` or ``hire_revert`` booster (see :data:`BOOSTER_MODELS`)."""
        cheat = self.cheating
        account = self.accounts[m]
        day = self.rounds / self.days
        revert = model == "hire_revert"
        low, high = cheat.hire_days
        window = self.days - self.history_days
        if revert:
            days = rng.uniform(min(low, window - 1.5), min(high, window - 1.5))
            start = self.history_days + rng.uniform(1.0, window - days - 0.5)
        else:
            days = rng.uniform(low, high)
            start = self.history_days + rng.uniform(1.0, window - 2.0)
        first = int(start * day)
        end = min(self.rounds, int((start + days) * day))
        account.hire = Hire(
            model=model,
            start=first,
            end=end,
            revert=revert,
            skill=account.skill + rng.uniform(*cheat.boost_jump),
            device=_device(rng),
            ip=_ip(rng),
            peak=min(23.5, max(10.5, rng.gauss(20.0, 2.5))),
            daily=rng.uniform(*cheat.hire_daily),
        )
        account.weekly = rng.uniform(*cheat.hire_owner_games)
        account.mobile_only = False
        self.labels.boosters.append(account.player.id)
        self.labels.boosts.append(
            Boost(account.player.id, model, first, end if revert and end < self.rounds else None)
        )
