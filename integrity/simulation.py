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
* *Devices*: each account's phone is its own (the player's device id with the account's);
  ``second_device_share`` of the accounts also use a tablet (30 % of their sessions);
  ``new_phone_share`` switch to a new phone at a random moment.

**Honest models that stress boosting's null** (off by default; on in
:data:`~integrity.simulation_population.VARIED_REALISM`, the population issue 28 measures):

* *Heavy players* (``heavy_share``, 2 %): ``heavy_games`` (100–250) games a week on their
  usual devices and networks — long series with many session changes.
* *Steady improvers* (``improver_share``, 1 %): ``improver_games`` (40–150) games a week,
  skill rising linearly by ``improver_gain`` (0.5–1.5) SD over the window, and a new phone
  at a moment between 30 % and 70 % of it: performance drifting up while the device changes.
* *Travellers* (``traveller_share``, 0 in the varied population; a stress knob): 1–3 days
  away from home on another network, half of them on a borrowed device — another person's
  sessions, played by the owner.
* *Friends who queue together* (``friend_share``, 3 % in the varied population): groups of
  2–3 (outside households) queueing together for 5–20 % of their games, a third of the
  groups on one home address (households of friends); nobody is fed.
* *Campuses* (``campus_share``, 0 in the varied population; a stress knob): students on
  campuses of 100–400 accounts, who play on weekdays from the campus's few public addresses
  in one range (its NAT) and at weekends from home, in the evening: many accounts on one
  address, queueing at the same hours, and a change of network every weekend.

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
  the partner go out in ``pair_assist`` of their games together (the ``legacy`` model);
  ``pair_models`` draws one model per pair instead
  (:data:`~integrity.simulation_population.PAIR_MODELS`: ``dump``, ``last``, ``assist``,
  ``quiet``, ``stronger``; the first four in the varied population, whose farms have 2–5
  accounts, four of them at a table).
* *Boosters* (代练代打, ~20 %), one model per booster from ``booster_models``
  (:data:`~integrity.simulation_population.BOOSTER_MODELS`): ``takeover`` (the default): at
  a moment between 35 % and 65 % of the window someone else takes over the account to its
  end — a new device and address, the hired player's favourite hour, a skill
  ``boost_jump`` (1.5–2.5) standard deviations higher and 1.5 times the games; ``hire``: a
  heavy hired player (``hire_daily``, 8–20 games a day, own device, address and hours, skill
  ``boost_jump`` SD higher) plays the account for ``hire_days`` (2–7) days from a moment at
  least a day into the window, and the owner (an engaged player, ``hire_owner_games``,
  30–80 games a week, who does not play while hired) does not come back inside the window;
  ``hire_revert``: the same, and the owner comes back at the end of the hire with his old
  device, address and hours. :data:`~integrity.simulation_population.VARIED_CHEATING` draws
  ``hire`` or ``hire_revert`` per booster.

Labels (:class:`~integrity.simulation_population.Labels`): ``as_dict()`` is ``{"farms":
[[fed, feeder, ...]], "pairs": [[beneficiary, feeder]], "boosters": [id, ...]}`` (the labels
file of ``manage.py simulate_season``); ``boosts`` holds each booster's model, the round and
moment the hired player starts (``change``) and, when the owner comes back inside the
window, the moment he does (``revert``); ``honest`` the honest accounts by model (heavy,
improver, traveller, household, mobile, tablet, new_phone, campus); ``details()`` all of it.

The population (accounts, sharing, cheaters) is built by :mod:`integrity.simulation_population`,
the play (sessions, matchmaking, games) by :mod:`integrity.simulation_play`.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from integrity.domain.audit import SeatRow
from integrity.domain.data import hour_bucket
from integrity.simulation_play import POINTS, Simulator
from integrity.simulation_population import (
    VARIED_CHEATING,
    VARIED_REALISM,
    Boost,
    Cheating,
    Labels,
    Realism,
)
from tournaments.domain.calendar import event_code_for_week
from tournaments.domain.rules import Ruleset
from tournaments.domain.scoring import tour_singles

__all__ = [
    "VARIED_CHEATING",
    "VARIED_REALISM",
    "Boost",
    "Cheating",
    "Labels",
    "Realism",
    "Season",
    "record_rows",
    "simulate_season",
]


@dataclass
class Season:
    """A simulated season: its labels, its event codes and its records (a generator)."""

    labels: Labels
    events: list[str]
    start: date
    weeks: int
    accounts: int
    records: Iterator[dict[str, Any]]
    #: Each account's drawn skill (an improver's gain and a hired player's skill aside).
    skills: dict[str, float]


def simulate_season(
    *,
    players: int,
    weeks: int,
    cheaters: float,
    seed: int,
    start: date = date(2021, 1, 4),
    realism: Realism | None = None,
    cheating: Cheating | None = None,
    rules: Ruleset | None = None,
    history_weeks: int = 0,
) -> Season:
    """A season of weekly qualifiers from ``start`` (a Monday) with injected cheaters; with
    ``rules``, every game played out by the engine with its move log. The first
    ``history_weeks`` weeks are the audited window's history: the hired players and the
    improvers' new phones start after them."""
    sim = Simulator(
        players=players,
        weeks=weeks,
        cheaters=cheaters,
        seed=seed,
        start=start,
        realism=realism or Realism(),
        cheating=cheating or Cheating(),
        rules=rules,
        history_weeks=history_weeks,
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
        skills={account.player.id: account.skill for account in sim.accounts},
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
            len(seat["hand"]),
        )
        for seat, hand, score in zip(seats, points, scores, strict=True)
    ]
