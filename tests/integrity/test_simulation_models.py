"""The simulator's varied models of issue 28 (SPEC §7: detectors measured on simulated
seasons): boosters hired for 2-7 days with or without a revert, heavy players and steady
improvers who change phone, students on campuses — each in its labels, and played as
labelled."""

import random
import statistics
from collections import Counter, defaultdict
from dataclasses import replace
from datetime import date, datetime, timedelta
from typing import Any

import pytest

from core.domain.clock import TOUR_TZ
from integrity.report import MODELS
from integrity.simulation import simulate_season
from integrity.simulation_play import ROUNDS_PER_DAY, Simulator
from integrity.simulation_population import (
    BOOSTER_MODELS,
    HONEST_MODELS,
    PAIR_MODELS,
    STRONGER_LIFT,
    VARIED_CHEATING,
    VARIED_REALISM,
    Cheating,
    Group,
    Realism,
)

START = datetime(2021, 1, 4, 10, tzinfo=TOUR_TZ)
#: The friend groups of the varied week below, those that sat together, and their tables.
GROUPS_TOGETHER = (13, 11, 72)
END = datetime(2021, 1, 10, 23, 59, 59, tzinfo=TOUR_TZ)


def _seats(records: list[dict[str, Any]]) -> dict[str, list[tuple[datetime, str, str]]]:
    """Per player, (start, device, ip) of each game in play order."""
    seats: dict[str, list[tuple[datetime, str, str]]] = defaultdict(list)
    for record in records:
        started = datetime.fromisoformat(record["started_at"])
        for seat in record["seats"]:
            session = seat["session"]
            seats[seat["player"]["id"]].append((started, session["device"], session["ip"]))
    return seats


def test_the_varied_models_appear_with_their_labels() -> None:
    season = simulate_season(
        players=1000,
        weeks=1,
        cheaters=0.04,
        seed=11,
        realism=VARIED_REALISM,
        cheating=VARIED_CHEATING,
    )
    labels = season.labels
    season_records = list(season.records)
    seats = _seats(season_records)

    # 40 cheaters: 17 in farms of 2-5 accounts (18 budgeted; one left over), 7 pairs, the
    # rest boosters, each labelled with its model, the moment the hired player starts and,
    # for a revert, the moment the owner is back.
    assert [b.player for b in labels.boosts] == labels.boosters
    assert sorted(len(farm) for farm in labels.farms) == [3, 4, 5, 5]
    assert len(labels.pairs) == len(labels.pair_models) == 7
    assert set(labels.pair_models) == {"dump", "last", "quiet"}  # drawn uniformly from four
    assert len(labels.boosters) == 40 - 17 - 14
    assert {b.model for b in labels.boosts} == {"hire", "hire_revert"}
    for boost in labels.boosts:
        assert START + timedelta(days=1) <= boost.change_at <= END - timedelta(days=1)
        games = seats[boost.player]
        owner = [g for g in games if g[0] < boost.change_at]
        hired = [
            g
            for g in games
            if boost.change_at <= g[0] and (boost.revert_at is None or g[0] < boost.revert_at)
        ]
        back = [g for g in games if boost.revert_at is not None and g[0] >= boost.revert_at]
        # The hired player: one device and one address, neither ever the owner's.
        assert len({(device, ip) for _, device, ip in hired}) == 1
        assert not {g[1] for g in hired} & {g[1] for g in owner + back}
        assert not {g[2] for g in hired} & {g[2] for g in owner + back}
        if boost.model == "hire":
            assert (boost.revert, boost.revert_at, back) == (None, None, [])
        else:
            assert boost.revert_at is not None
            assert boost.change_at + timedelta(days=1) < boost.revert_at < END
        assert boost.as_dict() == {
            "player": boost.player,
            "model": boost.model,
            "change": boost.change_at.isoformat(),
            "revert": boost.revert_at.isoformat() if boost.revert_at else None,
        }
    assert sum(len(seats[b.player]) for b in labels.boosts) / len(labels.boosts) > 30

    # Honest stress models: 2 % heavy players, 1 % improvers, none of them a cheater.
    honest = labels.honest
    assert (len(honest["heavy"]), len(honest["improver"])) == (20, 10)
    cheaters = {p for group in labels.farms + labels.pairs for p in group} | set(labels.boosters)
    assert not (set(honest["heavy"]) | set(honest["improver"])) & cheaters
    median = sorted(len(games) for games in seats.values())[len(seats) // 2]
    assert min(len(seats[p]) for p in honest["heavy"]) > 3 * median
    changed = 0
    for player in set(honest["improver"]) - set(honest["tablet"]):
        devices = [device for _, device, _ in seats[player]]
        if len(set(devices)) == 1:
            continue  # no game after the change
        changed += 1
        # One new phone from a moment between 30 % and 70 % of the week (days 2.1 to 4.9 of
        # play), kept to the end.
        first_new = next(i for i, device in enumerate(devices) if device != devices[0])
        assert devices[-1] == devices[first_new] != devices[0]
        assert seats[player][first_new][0] > START + timedelta(days=2)
        assert seats[player][first_new - 1][0] < START + timedelta(days=5)
    assert changed >= 3
    assert labels.honest_models(honest["heavy"][0])[0] == "heavy"
    assert labels.details()["boosts"] == [b.as_dict() for b in labels.boosts]
    assert labels.details()["pair_models"] == labels.pair_models

    # Honest friends: 3 % of the accounts in groups of 2-3, none a cheater, queueing
    # together for 5-20 % of their games (a group of light players may not get to it).
    friends = {p for group in labels.friends for p in group}
    assert len(friends) == 30
    assert set(honest["friends"]) == friends
    assert not friends & cheaters
    assert {len(group) for group in labels.friends} <= {2, 3}
    tables = [{seat["player"]["id"] for seat in r["seats"]} for r in season_records]
    together = [sum(set(group) <= table for table in tables) for group in labels.friends]
    assert (len(together), sum(n > 0 for n in together), sum(together)) == GROUPS_TOGETHER
    assert set(labels.as_dict()) == {"farms", "pairs", "boosters"}


#: The seats and skills of the table the play tests below deal (accounts 9 and 23 a pair).
SEATED, SKILLS = [4, 9, 17, 23], [0.2, -0.5, 1.1, 0.0]


def _table_simulator(realism: Realism) -> Simulator:
    """A small honest population whose :meth:`Simulator._hands` the tests call directly."""
    return Simulator(
        players=40, weeks=1, cheaters=0.0, seed=3, start=date(2021, 1, 4),
        realism=realism, cheating=Cheating(),
    )  # fmt: skip


def test_a_stronger_pair_plays_the_beneficiary_stronger_at_their_tables() -> None:
    """``stronger``: at the pair's shared tables the beneficiary (``members[0]``) plays
    :data:`STRONGER_LIFT` SD stronger, in who goes out and in the hands left, and nobody
    is fed: the same draw as an ``assist`` pair that never assists, his skill raised by
    that much."""
    sim = _table_simulator(Realism())
    seated, skills = SEATED, SKILLS
    pair = Group((9, 23), 0.0, 0.0, (2, 5), "pair", "stronger")
    idle = Group((9, 23), 0.0, 0.0, (2, 5), "pair", "assist")
    lifted = [0.2, -0.5 + STRONGER_LIFT, 1.1, 0.0]
    for seed in range(200):
        played = sim._hands(random.Random(seed), seated, pair, skills)
        assert played == sim._hands(random.Random(seed), seated, idle, lifted)
    wins = [
        sim._hands(random.Random(seed), seated, pair, skills)[0][1] == [] for seed in range(2000)
    ]
    honest = [
        sim._hands(random.Random(seed), seated, None, skills)[0][1] == [] for seed in range(2000)
    ]
    # out with weight e^-0.5 of 5.8 in 85 % of the games: 177 expected; lifted, e^1.5 of
    # 9.7: 785
    assert (sum(wins), sum(honest)) == (799, 173)


def test_a_quiet_feeder_who_went_out_takes_no_cards() -> None:
    """``quiet``: when the partner does not win, a feeder still holding cards takes half
    the partner's hand; a feeder who went out takes nothing, so every game that ended out
    has its empty hand."""
    sim = _table_simulator(Realism())
    seated, skills = SEATED, SKILLS
    pair = Group((9, 23), 0.05, 0.8, (2, 5), "pair", "quiet")
    ended_out = feeder_out = 0
    for seed in range(2000):
        hands, out = sim._hands(random.Random(seed), seated, pair, skills)
        if out:
            ended_out += 1
            assert sum(not hand for hand in hands) == 1, seed
            feeder_out += not hands[3]
    assert (ended_out, feeder_out) == (1664, 257)


def test_daily_form_moves_an_accounts_skill_by_the_day() -> None:
    """``form``: every game of an account on one tour day is played at its skill plus the
    same offset; the next day draws another (SD 0.5 over the accounts' days). Without
    daily form the skills are played as they are."""
    sim = _table_simulator(Realism(form=0.5))
    first = sim._in_form(SEATED, 0, SKILLS)
    assert [round(skill, 4) for skill in first] == [1.0537, 0.0235, 0.4116, 0.3451]
    assert sim._in_form(SEATED, ROUNDS_PER_DAY - 1, SKILLS) == first
    second = sim._in_form(SEATED, ROUNDS_PER_DAY, SKILLS)
    assert [round(skill, 4) for skill in second] == [0.0122, -1.1238, 1.8082, 0.9578]
    offsets = [
        sim._in_form([i], day * ROUNDS_PER_DAY, [0.0])[0] for i in range(40) for day in range(7)
    ]
    assert (round(statistics.mean(offsets), 4), round(statistics.pstdev(offsets), 4)) == (
        -0.0155,
        0.4928,
    )
    assert _table_simulator(Realism())._in_form(SEATED, 0, SKILLS) == SKILLS


def test_a_style_moves_the_cards_an_account_keeps_in_every_game() -> None:
    """``style``: each account keeps a normal offset of its own (SD ``Realism.style``) in
    the cards it ends a lost game with, the same in every game; without it, none."""
    styled, plain = _table_simulator(Realism(style=2.0)), _table_simulator(Realism())
    offsets = [styled._style(i) for i in range(40)]
    assert (round(statistics.mean(offsets), 2), round(statistics.pstdev(offsets), 2)) == (
        -0.34,
        1.88,
    )
    assert {plain._style(i) for i in range(40)} == {0.0}

    def cards(sim: Simulator) -> list[float]:
        kept: list[list[int]] = [[] for _ in SEATED]
        for seed in range(3000):
            hands, _ = sim._hands(random.Random(seed), SEATED, None, SKILLS)
            for k, hand in enumerate(hands):
                if hand:  # lost
                    kept[k].append(len(hand))
        return [statistics.mean(n) for n in kept]

    # the same tables: each seat's mean cards move by its offset, less what the cards' floor
    # of 1 and ceiling hold back (3,000 games of sampling)
    shift = [a - b for a, b in zip(cards(styled), cards(plain), strict=True)]
    assert shift == pytest.approx([offsets[i] for i in SEATED], abs=0.45)


def _wins(noise: float, skills: list[float], barred: set[int]) -> list[int]:
    """How often each seat goes out in 4,000 draws of :meth:`Simulator._winner`."""
    sim = _table_simulator(Realism(winner_noise=noise))
    wins = [0] * 4
    for seed in range(4000):
        wins[sim._winner(random.Random(seed), skills, barred)] += 1
    return wins


def test_thurstones_winner_draw_breaks_luces_choice_axiom() -> None:
    """Luce's draw (the default): the weak seat (-1 SD) goes out e^-1 = 0.37 times as often
    as an average one whether or not a strong player (+2 SD) sits at the table. Thurstone's
    (``winner_noise``): the strong player takes more of the weak seat's wins, 0.32 against
    0.26 of an average seat's. A barred seat (a ``last`` feeder) never goes out."""
    plain, strong = [0.0, -1.0, 0.0, 0.0], [0.0, -1.0, 2.0, 0.0]
    assert _wins(0.0, plain, set()) == [1224, 435, 1217, 1124]
    assert _wins(0.0, strong, set()) == [429, 156, 3019, 396]
    assert _wins(1.28, plain, set()) == [1218, 388, 1178, 1216]
    assert _wins(1.28, strong, set()) == [426, 110, 3045, 419]
    assert _wins(0.0, strong, {2}) == [1733, 659, 0, 1608]
    assert _wins(1.28, strong, {2}) == [1684, 611, 0, 1705]


def test_the_first_simulators_models_are_the_default() -> None:
    season = simulate_season(players=400, weeks=1, cheaters=0.05, seed=11)
    labels = season.labels
    assert {b.model for b in labels.boosts} == {"takeover"}
    assert all(b.revert is None for b in labels.boosts)
    assert (labels.honest["heavy"], labels.honest["improver"]) == ([], [])
    assert Realism().heavy_share == Realism().improver_share == 0.0
    assert Cheating().booster_models == ("takeover",)
    assert set(BOOSTER_MODELS) == {"takeover", "hire", "hire_revert"}


def test_an_unknown_booster_model_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown booster model 'remote'"):
        simulate_season(
            players=200,
            weeks=1,
            cheaters=0.05,
            seed=1,
            cheating=Cheating(booster_models=("remote",)),
        )


def test_hired_players_and_new_phones_start_after_the_history() -> None:
    season = simulate_season(
        players=600,
        weeks=2,
        cheaters=0.05,
        seed=5,
        history_weeks=1,
        realism=replace(VARIED_REALISM, improver_share=0.05),
        cheating=VARIED_CHEATING,
    )
    second = datetime(2021, 1, 11, tzinfo=TOUR_TZ)
    boosts = season.labels.boosts
    assert len(boosts) == 7
    assert all(boost.change_at >= second for boost in boosts)
    sim = Simulator(
        players=600,
        weeks=2,
        cheaters=0.05,
        seed=5,
        start=date(2021, 1, 4),
        realism=replace(VARIED_REALISM, improver_share=0.05),
        cheating=VARIED_CHEATING,
        history_weeks=1,
    )
    phones = [a.new_phone[0] for a in sim.accounts if a.gain and a.new_phone is not None]
    assert len(phones) == 30
    assert min(phones) >= sim.history_rounds == sim.rounds // 2
    with pytest.raises(ValueError, match="need 0 <= history_weeks < weeks"):
        simulate_season(players=200, weeks=1, cheaters=0.05, seed=1, history_weeks=1)


def test_students_play_from_their_campus_on_weekdays_and_from_home_at_weekends() -> None:
    realism = replace(VARIED_REALISM, campus_share=0.1, campus_size=(40, 60))
    season = simulate_season(
        players=1000, weeks=1, cheaters=0.0, seed=11, realism=realism, cheating=VARIED_CHEATING
    )
    honest = season.labels.honest
    seats = _seats(list(season.records))
    students = set(honest["campus"])
    assert len(students) == 100
    assert not students & set(honest["household"])
    # Per campus (its address range): the students' weekday games come from its pool of
    # four addresses, their weekend games never do.
    weekday: dict[str, set[str]] = {}
    weekend: dict[str, set[str]] = {}
    for player in students:
        weekday[player] = {ip for started, _, ip in seats[player] if started.weekday() < 5}
        weekend[player] = {ip for started, _, ip in seats[player] if started.weekday() >= 5}
    campuses: dict[str, set[str]] = defaultdict(set)
    pools: dict[str, set[str]] = defaultdict(set)
    for player, ips in weekday.items():
        ranges = {ip.rsplit(".", 1)[0] for ip in ips}
        assert len(ranges) <= 1, player
        for block in ranges:
            campuses[block].add(player)
            pools[block] |= ips
    # Two campuses of 40-60 students (a light player may not play on a weekday).
    assert sorted(len(members) for members in campuses.values()) == [43, 48]
    assert sum(1 for ips in weekday.values() if ips) == 91
    assert [len(pool) for pool in pools.values()] == [realism.campus_pool] * 2
    for block, members in campuses.items():
        assert not any(weekend[player] & pools[block] for player in members)
    # They play in the evening: their games start an hour later than the others' on average.

    def mean_hour(players: set[str]) -> float:
        hours = [started.hour for p in players for started, _, _ in seats[p]]
        return sum(hours) / len(hours)

    others = set(seats) - students
    assert (round(mean_hour(students), 1), round(mean_hour(others), 1)) == (20.6, 19.4)
    assert "campus" in season.labels.honest_models(min(students))
    assert VARIED_REALISM.campus_share == 0.0


def test_the_mixed_population_holds_every_stress_at_once() -> None:
    """``mixed`` (:data:`integrity.report.MODELS`): heavy players, improvers, travellers,
    students and friends together, every booster model, and friends who queue together in
    up to half their games, so a light player may play nearly all of his with a friend."""
    realism, cheating = MODELS["mixed"]
    season = simulate_season(
        players=1000, weeks=1, cheaters=0.04, seed=11, realism=realism, cheating=cheating
    )
    labels = season.labels
    counts = {model: len(labels.honest[model]) for model in (*HONEST_MODELS, "campus")}
    assert counts == {
        "heavy": 40,
        "improver": 30,
        "traveller": 10,
        "friends": 49,
        "campus": 95,
    }
    assert {boost.model for boost in labels.boosts} == set(BOOSTER_MODELS)
    # Seven pairs, each of a model drawn from all six.
    assert Counter(labels.pair_models) == {"legacy": 5, "dump": 1, "quiet": 1}
    assert cheating.pair_models == PAIR_MODELS
    group = {player: set(g) for g in labels.friends for player in g}
    games: dict[str, int] = defaultdict(int)
    together: dict[str, int] = defaultdict(int)
    for record in season.records:
        seated = {seat["player"]["id"] for seat in record["seats"]}
        for player in seated:
            games[player] += 1
            together[player] += player in group and group[player] <= seated
    assert (together["p0000073"], games["p0000073"]) == (33, 34)
