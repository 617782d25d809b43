"""Simulated play (see :mod:`integrity.simulation`): each account's sessions over the weeks,
matchmaking per round from the accounts queued in it (groups first, then the shuffled solo
queue in tables of four), hands dealt from the real deck, the winner drawn by skill, and the
cheaters' feeding; every game a record v1 (SPEC §9). Deterministic in the seed.

With ``rules`` every game is played out by the engine's bots instead
(``tournaments.simulation.logged_game``) and carries its move log v1; hands, winner and
length are then the game's, and the groups' feeding (which edits the hands) is off: a
group's bots soft-play instead: a colluding pair's members, and a farm's accounts (one
person's), never punish each other.
"""

import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from itertools import accumulate
from typing import Any

from core.domain.clock import TOUR_TZ
from integrity.simulation_population import (
    STRONGER_LIFT,
    Cheating,
    Group,
    Hire,
    Population,
    Realism,
)
from tournaments.domain.calendar import event_code_for_week
from tournaments.domain.cards import CLASSIC
from tournaments.domain.engine import Bot
from tournaments.domain.rules import Ruleset
from tournaments.simulation import logged_game

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


@dataclass(frozen=True, slots=True)
class HandLaw:
    """How many cards a loser keeps: ``round(N(mean - slope·skill, sd))`` held to
    ``1..most`` (a stronger player ends with fewer)."""

    mean: float
    slope: float
    sd: float
    most: int

    def draw(self, rng: random.Random, skill: float, style: float = 0.0) -> int:
        """A loser's cards at ``skill``, his ``style`` added to the mean."""
        mean = self.mean + style - self.slope * skill
        return min(self.most, max(1, round(rng.gauss(mean, self.sd))))


#: The losers' cards left in a game that ended with a player out, and in one ended by time.
OUT_HAND = HandLaw(6.5, 1.5, 3.0, 12)
TIME_HAND = HandLaw(5.0, 1.2, 2.5, 10)


class Simulator(Population):
    """A season's population and its play, from ``start`` (a Monday) for ``weeks`` weeks,
    the first ``history_weeks`` of them before the audited window."""

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
        rules: Ruleset | None = None,
        history_weeks: int = 0,
    ) -> None:
        if players < 8 or weeks < 1 or not 0 <= cheaters < 0.5:
            raise ValueError("need players >= 8, weeks >= 1 and 0 <= cheaters < 0.5")
        if not 0 <= history_weeks < weeks:
            raise ValueError("need 0 <= history_weeks < weeks")
        if start.weekday() != 0:
            raise ValueError(f"the season must start on a Monday, not {start}")
        self.weeks, self.seed, self.start, self.rules = weeks, seed, start, rules
        super().__init__(
            players=players,
            rounds=weeks * 7 * ROUNDS_PER_DAY,
            days=weeks * 7,
            cheaters=cheaters,
            seed=seed,
            realism=realism,
            cheating=cheating,
            history_days=history_weeks * 7,
        )
        self._forms: dict[tuple[int, int], float] = {}
        self._styles: dict[int, float] = {}
        for boost in self.labels.boosts:
            boost.change_at = self.moment(boost.change)
            boost.revert_at = None if boost.revert is None else self.moment(boost.revert)

    def moment(self, t: int) -> datetime:
        """The start of round ``t`` (Asia/Shanghai)."""
        day, in_day = divmod(t, ROUNDS_PER_DAY)
        hour, r = divmod(in_day, ROUNDS_PER_HOUR)
        return datetime.combine(
            self.start + timedelta(days=day), time(FIRST_HOUR + hour), TOUR_TZ
        ) + timedelta(seconds=r * ROUND_SECONDS)

    def _session_start(self, rng: random.Random, week: int, peak: float, cum: list[float]) -> int:
        day = rng.choices(range(7), cum_weights=cum)[0]
        return self._start_on(rng, week * 7 + day, peak)

    def _start_on(self, rng: random.Random, day: int, peak: float) -> int:
        hour = min(23.99, max(10.0, rng.gauss(peak, self.realism.hour_spread)))
        offset = int((hour - FIRST_HOUR) * ROUNDS_PER_HOUR)
        return day * ROUNDS_PER_DAY + min(offset, ROUNDS_PER_DAY - 1)

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
            if account.weekly is None:
                weekly = median * account.player.activity * self.solo_factor[i]
            else:
                weekly = account.weekly
            hire = account.hire
            for week in range(self.weeks):
                games = round(weekly)
                boost = account.boost
                if boost is not None and boost[0] < (week + 1) * 7 * ROUNDS_PER_DAY:
                    games = round(weekly * self.boosted_factor[i])
                for start, end in self._sessions(
                    rng, week, games, self._peak_at(i, week), self.realism.session_games
                ):
                    for t in range(start, end):
                        if hire is None or not hire.start <= t < (
                            hire.end if hire.revert else self.rounds
                        ):
                            solo[t].append(i)
            if hire is not None:
                for start, end in self._hire_sessions(rng, hire):
                    for t in range(start, end):
                        solo[t].append(i)
        for g, group in enumerate(self.groups):
            peak = self.peak[group.members[0]]
            for week in range(self.weeks):
                for start, end in self._group_sessions(rng, week, group, peak):
                    for t in range(start, end):
                        grouped[t].append(g)
        return solo, grouped

    def _group_sessions(
        self, rng: random.Random, week: int, group: Group, peak: float
    ) -> Iterator[tuple[int, int]]:
        """A group's sessions queued together in ``week``: friends for their share of the
        first member's games, in sessions of the usual length; cheaters as
        :class:`Cheating` says."""
        if not group.cheating:
            first = self.accounts[group.members[0]]
            weekly = self.realism.games_per_week * first.player.activity
            games = round(group.together * weekly)
            yield from self._sessions(rng, week, games, peak, self.realism.session_games)
            return
        cheat = self.cheating
        sessions = cheat.farm_sessions if group.farm else cheat.pair_sessions
        size = cheat.farm_session_games if group.farm else cheat.pair_session_games
        for _ in range(rng.randint(*sessions)):
            games = rng.randint(*size)
            yield from self._sessions(rng, week, games, peak, (games, games))

    def _hire_sessions(self, rng: random.Random, hire: Hire) -> Iterator[tuple[int, int]]:
        """The hired player's sessions: each day of the hire, ``daily`` games (in proportion
        to the part of the day hired) in sessions near his favourite hour, inside the hire."""
        first, last = hire.start // ROUNDS_PER_DAY, (hire.end - 1) // ROUNDS_PER_DAY
        for day in range(first, last + 1):
            lo = max(hire.start, day * ROUNDS_PER_DAY)
            hi = min(hire.end, (day + 1) * ROUNDS_PER_DAY)
            games = round(hire.daily * (hi - lo) / ROUNDS_PER_DAY)
            while games > 0:
                length = min(games, rng.randint(*self.realism.session_games))
                games -= length
                start = min(max(self._start_on(rng, day, hire.peak), lo), hi - 1)
                yield start, min(start + length, hi)

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
        hire = account.hire
        if hire is not None and hire.start <= t < hire.end:
            return hire.ip, hire.device, hire.skill
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
        if account.campus and t // ROUNDS_PER_DAY % 7 < 5:  # a student on a weekday
            ip = rng.choice(account.campus)
        away = account.away
        if away is not None and away[0] <= t < away[1]:
            ip, device = away[2], away[3] or device
        if account.gain:
            return ip, device, account.skill + account.gain * t / self.rounds
        return ip, device, account.skill

    def _in_form(self, seated: Sequence[int], t: int, skills: list[float]) -> list[float]:
        """The skills the ``seated`` accounts play at round ``t``: each moved by its form that
        day (:attr:`Realism.form`), drawn from a stream of its own so that every other draw
        of the seed stays what it is without daily form."""
        if not self.realism.form:
            return skills
        day = t // ROUNDS_PER_DAY
        moved = []
        for i, skill in zip(seated, skills, strict=True):
            offset = self._forms.get((i, day))
            if offset is None:
                stream = random.Random(f"integrity-form:{self.seed}:{i}:{day}")  # noqa: S311
                offset = self._forms[(i, day)] = stream.gauss(0.0, self.realism.form)
            moved.append(skill + offset)
        return moved

    def _style(self, i: int) -> float:
        """Account ``i``'s offset in the cards it keeps (:attr:`Realism.style`), drawn once
        from a stream of its own: who plays whom, and when, stays what it is without."""
        if not self.realism.style:
            return 0.0
        offset = self._styles.get(i)
        if offset is None:
            stream = random.Random(f"integrity-style:{self.seed}:{i}")  # noqa: S311
            offset = self._styles[i] = stream.gauss(0.0, self.realism.style)
        return offset

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
            tables: list[tuple[list[int], Group | None]] = []
            for group in groups:
                members = list(group.members)
                if len(members) > SEATS:  # a large farm: the fed account and three others
                    members = [members[0], *rng.sample(members[1:], SEATS - 1)]
                free = SEATS - len(members)
                if len(queue) < free:
                    continue
                seated = members + queue[len(queue) - free :]
                del queue[len(queue) - free :]
                tables.append((seated, group))
            for k in range(len(queue) // SEATS):
                tables.append((queue[k * SEATS : (k + 1) * SEATS], None))
            if not tables:
                continue
            moment = self.moment(t)
            event = events[t // ROUNDS_PER_DAY // 7]
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
        group: Group | None,
    ) -> dict[str, Any]:
        farm = group.members if group is not None and group.farm else ()
        sessions = [self._seat_session(session_rng, i, t, i in farm) for i in seated]
        skills = self._in_form(seated, t, [s for _, _, s in sessions])
        log = None
        if self.rules is not None:
            hands, out, seconds, log = logged_game(
                rng, self.rules, len(seated), _bots(seated, group)
            )
            start = moment + timedelta(seconds=rng.randint(0, 4))
        else:
            hands, out = self._hands(rng, seated, group, skills)
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
            "log": log,
        }

    def _hands(
        self,
        rng: random.Random,
        seated: Sequence[int],
        group: Group | None,
        skills: Sequence[float],
    ) -> tuple[list[list[str]], bool]:
        """Hands dealt from the deck, the winner by skill (or the group's assist), the
        feeding; with whether it ended out."""
        out = rng.random() >= TIME_SHARE
        styles = [self._style(i) for i in seated]
        cheats = group if group is not None and group.cheating else None
        if cheats is not None and cheats.model == "stronger":
            fed = seated.index(cheats.members[0])
            skills = [s + STRONGER_LIFT if k == fed else s for k, s in enumerate(skills)]
        if out:
            barred: set[int] = set()
            if cheats is not None and cheats.model == "last":  # the feeders never win
                barred = {k for k, i in enumerate(seated) if i in cheats.members[1:]}
            if cheats is not None and rng.random() < cheats.assist:
                winner = seated.index(cheats.members[0])
            else:
                winner = self._winner(rng, skills, barred)
            sizes = [
                0 if k == winner else OUT_HAND.draw(rng, s, style)
                for k, (s, style) in enumerate(zip(skills, styles, strict=True))
            ]
        else:
            sizes = [TIME_HAND.draw(rng, s, style) for s, style in zip(skills, styles, strict=True)]
        cards = rng.sample(DECK, sum(sizes))
        hands, at = [], 0
        for size in sizes:
            hands.append(cards[at : at + size])
            at += size
        if cheats is not None and cheats.model not in ("assist", "stronger"):
            self._feed(rng, cheats, seated, hands, cards)
        return hands, out

    def _winner(self, rng: random.Random, skills: Sequence[float], barred: set[int]) -> int:
        """The seat that goes out, by skill (:attr:`Realism.winner_noise`); never a
        ``barred`` seat."""
        noise = self.realism.winner_noise
        if not noise:
            weights = [0.0 if k in barred else math.exp(s) for k, s in enumerate(skills)]
            return rng.choices(range(SEATS), weights)[0]
        performance = [s + rng.gauss(0.0, noise) for s in skills]
        return max((k for k in range(SEATS) if k not in barred), key=performance.__getitem__)

    def _feed(
        self,
        rng: random.Random,
        group: Group,
        seated: Sequence[int],
        hands: list[list[str]],
        dealt: list[str],
    ) -> None:
        """The feeders' play, by the group's model (:data:`PAIR_MODELS`; farms feed as
        ``legacy``): when the fed account leads (lowest hand), feeders keep extra high
        cards (``legacy``, ``dump``); feeders finish last, with more points than anyone
        (``last``); when the fed account does not lead, a feeder still holding cards
        takes half its hand (``quiet``)."""
        points = [sum(POINTS[c] for c in hand) for hand in hands]
        fed = seated.index(group.members[0])
        feeders = [k for k, i in enumerate(seated) if i in group.members[1:]]
        if group.model == "quiet":
            if points[fed] != min(points) and len(hands[fed]) > 1:
                for k in feeders:
                    # A feeder who went out takes nothing (the draw is made all the same).
                    if rng.random() < group.feed and hands[k]:
                        half = len(hands[fed]) // 2
                        hands[k].extend(hands[fed][:half])
                        del hands[fed][:half]
            return
        left: dict[str, int] = {}
        for code in HIGH_CARDS:
            left[code] = left.get(code, 0) + 1
        for code in dealt:
            if code in left:
                left[code] -= 1
        spare = [code for code, n in left.items() for _ in range(n)]
        if group.model == "last":
            rng.shuffle(spare)
            for k in feeders:
                top = max(p for j, p in enumerate(points) if j not in feeders)
                while points[k] <= top and spare:
                    code = spare.pop()
                    hands[k].append(code)
                    points[k] += POINTS[code]
            return
        if points[fed] != min(points):
            return
        for k in feeders:
            if rng.random() < group.feed and spare:
                extra = rng.sample(spare, min(len(spare), rng.randint(*group.extra)))
                for code in extra:
                    spare.remove(code)
                hands[k].extend(extra)


def _bots(seated: Sequence[int], group: Group | None) -> list[Bot]:
    """The bots of a logged game. A pair's accounts spare each other; a farm's feeders spare
    the fed account (``members[0]``), which plays its feeders as it plays anyone: a farm
    exists for one account's points."""
    members = () if group is None or not group.cheating else group.members
    partners = frozenset(k for k, i in enumerate(seated) if i in members)
    spared = partners
    if group is not None and group.farm:
        spared = frozenset(k for k in partners if seated[k] == group.members[0])
    return [Bot(soft_on=spared - {k}) if k in partners else Bot() for k in range(len(seated))]
