"""The detectors measured on simulated seasons (SPEC §7: precision, recall, false discoveries
on honest-only seasons), behind ``manage.py integrity_report``.

A season from :mod:`integrity.simulation` is turned into seat rows by
:func:`integrity.simulation.record_rows` and audited in memory by
:func:`integrity.domain.audit.audit` — the same observations and detectors
``integrity.services.audits.audit_run`` uses on the database.

Definitions (``labels``: the injected farms, colluding pairs and boosters):

* **shared games** of a farm or pair: games with at least two of its accounts at the table.
  Recall counts the groups with at least :data:`MIN_SHARED` shared games.
* A group is **cased** when one proposed case holds at least two of its accounts, and
  **flagged** when one flag (of any detector) names at least two of them. A booster is
  flagged when a boosting flag names it, and cased when a case holds it.
* **Boosters**, per model (``takeover``, ``hire``, ``hire_revert``; see
  :data:`integrity.simulation_population.BOOSTER_MODELS`) and all together: how many were
  flagged by boosting and how many are in a case, over all of them and over those with at
  least :data:`MIN_BOOSTED` games played by the hired player (the games from the change
  to the owner's return or the window's end: *after the change*); and over those with
  also at least :data:`MIN_OWNER` games of the owner (the only ones a before/after test
  can see at all).
* **Precision@k**: among the ``k`` top-scored cases, ``k`` = the number of injected farms and
  pairs, the share that holds two accounts of one injected group or a booster (or only
  injected cheaters: a farm's account flagged by boosting).
* **The pairs' bound** (:mod:`integrity.oracle`), per pair model it knows (``assist``,
  ``quiet``, ``stronger``): how many of its pairs with at least
  :data:`MIN_SHARED` shared games the Neyman–Pearson test knowing every skill and the
  model finds at each of :data:`BOUND_LEVELS`, over the window's and its history's games
  (not for logged seasons, under Thurstone's winner draw or with daily form).
* **Near misses**: for each pair with at least :data:`MIN_SHARED` shared games that no case
  holds, the smallest q-value each pair test read from results gave two of its accounts
  (point flow, "better together", the fed account, the cards kept), the tests run again at
  a level that lets every tested pair through; none when the test did not test them or gave q = 1.
* **Honest cases**: cases holding no two accounts of one group and no booster; the report
  gives their number and whether every one ranks below every true case.
* **False discoveries**: a statistical flag (co-seating, point flow, boosting) is false when
  it names no two accounts of one injected group (boosting: no booster). On an honest-only
  season every flag is false, so the realised false discovery proportion of a detector is 1
  when it raised any flag and 0 otherwise; BH at ``q`` bounds its expectation by ``q``
  (under the global null, the chance of any flag at all). Each false boosting flag is
  listed with the honest models of its account (``heavy``, ``improver``, ``household``,
  ``mobile``, ``tablet``, ``new_phone``; ``plain`` for none; ``farm`` / ``pair`` for a
  cheater of another kind).

By default the seasons are the varied ones of issue 28
(:data:`~integrity.simulation_population.VARIED_REALISM`,
:data:`~integrity.simulation_population.VARIED_CHEATING`); ``models="legacy"`` gives the
first simulator's (no heavy players or improvers, the ``takeover`` booster); ``travellers``
and ``improvers`` stress boosting's null (:data:`MODELS`).
"""

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from datetime import time as day_start
from typing import Any

from core.domain.clock import TOUR_TZ
from integrity import oracle
from integrity.domain.audit import (
    AuditOutcome,
    AuditParams,
    SeatRow,
    audit,
    fed_of,
    kept_of,
    observations,
    pointflow_of,
    together_of,
    window_skills,
)
from integrity.domain.data import TableObs
from integrity.domain.softplay import Chance
from integrity.oracle import PairBound
from integrity.simulation import Labels, Season, record_rows, simulate_season
from integrity.simulation_population import (
    BOOSTER_MODELS,
    PAIR_MODELS,
    VARIED_CHEATING,
    VARIED_REALISM,
    Cheating,
    Realism,
)
from tournaments.domain.chances import chances_of
from tournaments.domain.rules import Ruleset

MIN_SHARED = 20
#: Boosters are counted apart when the hired player played at least this many games.
MIN_BOOSTED = 30
#: ... and the owner at least this many (the rest of the account's games).
MIN_OWNER = 10
#: The levels the pairs' bound is counted at: about BH's first threshold in a family of a
#: hundred pairs at q = 0.01 (1e-4), and a generous one for a family holding a few true
#: pairs (1e-3).
BOUND_LEVELS = (1e-3, 1e-4)

#: The simulator's models by name: (honest play, cheaters). Besides the varied models and
#: the first simulator's, three stress tests of the nulls: 1 % travellers (another
#: network, half of them on a borrowed device, for 1-3 days: sessions that change hands
#: without a hired player), 5 % improvers gaining 2-3 SD within the week, and 10 % students
#: on campuses (many accounts on one address range, the same evening hours, another
#: network every weekend); and ``stronger``, the varied population with every colluding
#: pair of the ``stronger`` model (the beneficiary plays 2 SD stronger at shared tables).
#: Two more stress the pair tests' null: ``thurstone``, the varied population with the
#: winner drawn by Thurstone's model (normal noise of SD 1.28, the spread of Luce's Gumbel
#: noise), where Luce's choice axiom fails; ``close_friends``, friends who queue together
#: in 30-70 % of their games instead of 5-20 %. And two stress every test that compares a
#: player with himself: ``form`` and ``strong_form``, each account's skill moving by a
#: daily form of SD 0.25 and 0.5, so the days a pair plays together, or a block of an
#: account's games, need not be in its usual form. ``mixed`` puts the stresses together, as
#: a season the detectors were not built on would: 4 % heavy players, 3 % improvers, 1 %
#: travellers, 10 % students, 5 % friends who queue together in 5-50 % of their games (a
#: light player may then play nearly all his games with a heavy friend), Thurstone's winner
#: draw and a daily form of SD 0.25, with every pair and booster model. ``styles`` stresses
#: the cards kept: the varied population where each account keeps an offset of SD 1 card
#: of its own in every lost game, whatever its skill (:attr:`Realism.style`).
MODELS: dict[str, tuple[Realism, Cheating]] = {
    "varied": (VARIED_REALISM, VARIED_CHEATING),
    "legacy": (Realism(), Cheating()),
    "travellers": (replace(VARIED_REALISM, traveller_share=0.01), VARIED_CHEATING),
    "improvers": (
        replace(VARIED_REALISM, improver_share=0.05, improver_gain=(2.0, 3.0)),
        VARIED_CHEATING,
    ),
    "campuses": (replace(VARIED_REALISM, campus_share=0.1), VARIED_CHEATING),
    "stronger": (VARIED_REALISM, replace(VARIED_CHEATING, pair_models=("stronger",))),
    "thurstone": (replace(VARIED_REALISM, winner_noise=1.28), VARIED_CHEATING),
    "close_friends": (replace(VARIED_REALISM, friend_together=(0.3, 0.7)), VARIED_CHEATING),
    "form": (replace(VARIED_REALISM, form=0.25), VARIED_CHEATING),
    "strong_form": (replace(VARIED_REALISM, form=0.5), VARIED_CHEATING),
    "styles": (replace(VARIED_REALISM, style=1.0), VARIED_CHEATING),
    "mixed": (
        replace(
            VARIED_REALISM,
            heavy_share=0.04,
            improver_share=0.03,
            traveller_share=0.01,
            campus_share=0.1,
            friend_share=0.05,
            friend_together=(0.05, 0.5),
            winner_noise=1.28,
            form=0.25,
        ),
        replace(
            VARIED_CHEATING,
            pair_models=PAIR_MODELS,
            booster_models=BOOSTER_MODELS,
        ),
    ),
}


@dataclass(frozen=True)
class SeasonRun:
    season: Season
    outcome: AuditOutcome
    tables: list[TableObs]
    seconds: dict[str, float]
    #: Per booster: (games of the owner, games of the hired player).
    boosted: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: The Neyman–Pearson bound of the pairs of the models it knows
    #: (:mod:`integrity.oracle`; none for logged seasons, whose bots draw no winner by skill,
    #: nor under Thurstone's winner draw, where the bound's Luce null does not hold, nor
    #: with daily form, where the accounts' skills are not the ones it knows).
    bounds: list[PairBound] = field(default_factory=list)
    #: The injected pairs with >= MIN_SHARED shared games and no case, by model and shared
    #: games: each with the pair tests' smallest q-values for two of its accounts (module
    #: docstring, near misses).
    near_misses: list[dict[str, Any]] = field(default_factory=list)


def _boosted_games(season: Season, starts: dict[str, list[datetime]]) -> dict[str, tuple[int, int]]:
    """Per booster, the owner's games and the hired player's (from the change to the
    owner's return or the window's end), from the start of each of its games."""
    counts = {}
    for boost in season.labels.boosts:
        hired = sum(
            1
            for at in starts.get(boost.player, [])
            if at >= boost.change_at and (boost.revert_at is None or at < boost.revert_at)
        )
        counts[boost.player] = (len(starts.get(boost.player, [])) - hired, hired)
    return counts


def run_season(
    *,
    players: int,
    weeks: int,
    cheaters: float,
    seed: int,
    params: AuditParams,
    rules: Ruleset | None = None,
    models: str = "varied",
    history_weeks: int = 0,
) -> SeasonRun:
    """Simulate a season and audit it in memory; with ``rules``, its games are played out
    with move logs and soft play is audited from their chances. With ``history_weeks``, that
    many weeks are simulated before the ``weeks`` audited, and the audit reads them as the
    window's history (as the database audit reads the days before its window): boosting's
    owner baseline, more games of the pairs the pair tests test."""
    started = time.perf_counter()
    realism, cheating = MODELS[models]
    season = simulate_season(
        players=players,
        weeks=history_weeks + weeks,
        cheaters=cheaters,
        seed=seed,
        rules=rules,
        realism=realism,
        cheating=cheating,
        history_weeks=history_weeks,
    )
    window_start = datetime.combine(
        season.start + timedelta(weeks=history_weeks), day_start(), TOUR_TZ
    )
    before: list[SeatRow] = []
    boosters = set(season.labels.boosters)
    starts: dict[str, list[datetime]] = {player: [] for player in boosters}
    chances: list[Chance] | None = None if rules is None else []
    rows: list[SeatRow] = []
    # The bound's null: Luce's draw at each account's skill.
    bounded = rules is None and not (realism.winner_noise or realism.form or realism.style)
    paired = {
        player
        for pair, model in zip(season.labels.pairs, season.labels.pair_models, strict=True)
        if bounded and model in oracle.MODELS
        for player in pair
    }
    games: list[oracle.Game] = []
    for record in season.records:
        seats = record_rows(record)
        if paired and paired.intersection(seat[2] for seat in seats):
            games.append(
                (
                    tuple(seat[2] for seat in seats),
                    oracle.out_seat(record),
                    tuple(len(seat["hand"]) for seat in record["seats"]),
                )
            )
        if history_weeks and datetime.fromisoformat(record["ended_at"]) < window_start:
            before.extend(seats)
            continue
        rows.extend(seats)
        if chances is not None and rules is not None:
            chances.extend(chances_of(record, rules))
        if boosters and len(seats) >= 2:  # a table (observations keeps games of 2+ seats)
            for seat in seats:
                if seat[2] in boosters:
                    starts[seat[2]].append(datetime.fromisoformat(record["started_at"]))
    tables, sessions = observations(rows)
    history = observations(before) if history_weeks else None
    del rows, before
    simulated = time.perf_counter() - started
    started = time.perf_counter()
    outcome = audit(tables, sessions, params, chances, history)
    seconds = {"simulate": simulated, "audit": time.perf_counter() - started}
    labels = season.labels
    shared = _shared_games(tables, labels.pairs)
    missed = sorted(
        (model, n, pair)
        for pair, model, n in zip(labels.pairs, labels.pair_models, shared, strict=True)
        if n >= MIN_SHARED
        and not any(_holds_two(case.players, pair) for case in outcome.triage.cases)
    )
    started = time.perf_counter()
    near_misses = _near_misses(tables, history[0] if history else [], outcome, params, missed)
    seconds["near_misses"] = time.perf_counter() - started
    bounds = (
        oracle.pair_bounds(
            games,
            labels.pairs,
            labels.pair_models,
            season.skills,
            shared,
        )
        if bounded
        else []
    )
    return SeasonRun(
        season=season,
        outcome=outcome,
        tables=tables,
        seconds=seconds,
        boosted=_boosted_games(season, starts),
        bounds=bounds,
        near_misses=near_misses,
    )


def _shared_games(tables: Iterable[TableObs], groups: Sequence[Sequence[str]]) -> list[int]:
    owner = {player: g for g, group in enumerate(groups) for player in group}
    counts = [0] * len(groups)
    for table in tables:
        seen: dict[int, int] = {}
        for player in table.players:
            g = owner.get(player)
            if g is not None:
                seen[g] = seen.get(g, 0) + 1
        for g, n in seen.items():
            if n >= 2:
                counts[g] += 1
    return counts


#: The level at which :func:`_near_misses` runs the pair tests again (every pair whose
#: BH q-value is below 1 comes through).
LOOSE_Q = 1 - 1e-9


def _near_misses(
    tables: Sequence[TableObs],
    history: Sequence[TableObs],
    outcome: AuditOutcome,
    params: AuditParams,
    missed: Sequence[tuple[str, int, Sequence[str]]],
) -> list[dict[str, Any]]:
    """Per ``missed`` pair (model, shared games, accounts), the smallest q-value each pair
    test gave two of its accounts (module docstring, near misses)."""
    if not missed:
        return []
    loose = replace(params, pair_q=LOOSE_Q)
    paired = [*history, *tables]
    results: dict[str, list[tuple[tuple[str, ...], float]]] = {
        "pointflow": [
            (f.players, f.q) for f in pointflow_of(tables, outcome.coseating, loose, history).flags
        ],
        "together": [
            (f.players, f.q)
            for f in together_of(paired, outcome.coseating, loose, window_skills(tables)).flags
        ],
        "fed": [(f.players, f.q) for f in fed_of(paired, outcome.coseating, loose).flags],
        "kept": [(f.players, f.q) for f in kept_of(paired, outcome.coseating, loose).flags],
    }
    near = []
    for model, shared, pair in missed:
        qs: dict[str, float] = {}
        for name, flags in results.items():
            found = [q for players, q in flags if _holds_two(players, pair)]
            if found:
                qs[name] = min(found)
        near.append({"model": model, "shared_games": shared, "q": qs})
    return near


def _holds_two(players: Iterable[str], group: Sequence[str]) -> bool:
    return len(set(players) & set(group)) >= 2


def _recall(found: list[bool], shared: list[int]) -> dict[str, Any]:
    eligible = [hit for hit, n in zip(found, shared, strict=True) if n >= MIN_SHARED]
    return {
        "injected": len(found),
        "eligible": len(eligible),
        "found": sum(eligible),
        "recall": sum(eligible) / len(eligible) if eligible else None,
    }


class _Truth:
    """Which players, cases and flags are true against a season's labels."""

    def __init__(self, labels: Labels) -> None:
        self.labels = labels
        self.groups = {"farms": labels.farms, "pairs": labels.pairs}
        self.boosters = set(labels.boosters)
        self.cheaters = self.boosters | {
            player for groups in self.groups.values() for group in groups for player in group
        }

    def models(self, player: str) -> tuple[str, ...]:
        """What an account is in the simulation: a cheater's kind or its honest models."""
        for kind, groups in (("farm", self.groups["farms"]), ("pair", self.groups["pairs"])):
            if any(player in group for group in groups):
                return (kind,)
        return self.labels.honest_models(player)

    def case(self, players: Sequence[str]) -> bool:
        """A true case holds a booster, two accounts of one group, or only cheaters (a
        farm's account flagged by boosting for the games it was fed on the farm's device)."""
        return (
            bool(self.boosters & set(players))
            or self.grouped(players)
            or set(players) <= self.cheaters
        )

    def grouped(self, players: Sequence[str]) -> bool:
        return any(
            _holds_two(players, group) for members in self.groups.values() for group in members
        )

    def flag(self, flag: Any) -> bool:
        if flag.family == "boosting":
            return flag.players[0] in self.boosters
        return self.grouped(flag.players)


def _groups(run: SeasonRun, truth: _Truth) -> dict[str, Any]:
    """Per kind of injected group (farms, pairs): the games its members shared, and how many
    of the groups sharing enough were cased and flagged."""
    cases, flags = run.outcome.triage.cases, run.outcome.flags
    figures: dict[str, Any] = {}
    for name, members in truth.groups.items():
        shared = _shared_games(run.tables, members)
        cased = [any(_holds_two(case.players, group) for case in cases) for group in members]
        flagged = [
            any(_holds_two(flag.players, group) for flag in flags.values()) for group in members
        ]
        by_model: dict[str, Any] = {}
        if name == "pairs":
            models = run.season.labels.pair_models
            for model in sorted(set(models)):
                chosen = [k for k, m in enumerate(models) if m == model]
                by_model[model] = _recall([cased[k] for k in chosen], [shared[k] for k in chosen])
        figures[name] = {
            "by_model": by_model,
            "shared_games": {"min": min(shared, default=0), "max": max(shared, default=0)},
            "not_cased_shared_games": sorted(
                n for n, hit in zip(shared, cased, strict=True) if n >= MIN_SHARED and not hit
            ),
            "cased": _recall(cased, shared),
            "flagged": _recall(flagged, shared),
        }
    figures["pairs"]["near_misses"] = run.near_misses
    return figures


def _bound(run: SeasonRun) -> dict[str, Any]:
    """Per pair model with a bound, over its pairs with >= :data:`MIN_SHARED` shared games:
    how many the Neyman–Pearson bound (:mod:`integrity.oracle`) finds at each of
    :data:`BOUND_LEVELS`."""
    figures: dict[str, Any] = {}
    for model in sorted({bound.model for bound in run.bounds}):
        chosen = [b for b in run.bounds if b.model == model and b.shared >= MIN_SHARED]
        figures[model] = {
            "eligible": len(chosen),
            "found": {f"{level:g}": sum(b.p <= level for b in chosen) for level in BOUND_LEVELS},
        }
    return figures


def _found(players: Sequence[str], flagged: set[str], cased: set[str]) -> dict[str, Any]:
    return {
        "injected": len(players),
        "flagged": sum(p in flagged for p in players),
        "cased": sum(p in cased for p in players),
        "recall_cased": sum(p in cased for p in players) / len(players) if players else None,
    }


def _boosters(run: SeasonRun, truth: _Truth) -> dict[str, Any]:
    """Per booster model and for all boosters: flagged and cased, over all boosters, those
    with >= :data:`MIN_BOOSTED` games of the hired player, and those with also >=
    :data:`MIN_OWNER` of the owner."""
    boosted = {flag.players[0] for flag in run.outcome.boosting.flags}
    in_cases = {player for case in run.outcome.triage.cases for player in case.players}
    boosts = run.season.labels.boosts
    figures: dict[str, Any] = {}
    for model in ("all", *BOOSTER_MODELS):
        chosen = [b for b in boosts if model in ("all", b.model)]
        if not chosen and model != "all":
            continue
        games = [run.boosted.get(b.player, (0, 0)) for b in chosen]
        players = [b.player for b in chosen]
        after = [p for p, (_, hired) in zip(players, games, strict=True) if hired >= MIN_BOOSTED]
        testable = [
            p
            for p, (owner, hired) in zip(players, games, strict=True)
            if hired >= MIN_BOOSTED and owner >= MIN_OWNER
        ]
        figures[model] = {
            "all": _found(players, boosted, in_cases),
            f"after_{MIN_BOOSTED}": _found(after, boosted, in_cases),
            f"after_{MIN_BOOSTED}_owner_{MIN_OWNER}": _found(testable, boosted, in_cases),
        }
    return figures


def _cases(run: SeasonRun, truth: _Truth, k: int) -> dict[str, Any]:
    """The case ranking: the true cases among the top ``k`` (as many as injected groups)."""
    cases = run.outcome.triage.cases
    hits = sum(truth.case(case.players) for case in cases[:k])
    true_scores = [case.score for case in cases if truth.case(case.players)]
    false_scores = [case.score for case in cases if not truth.case(case.players)]
    return {
        "total": len(cases),
        "true": len(true_scores),
        "false": len(false_scores),
        "false_below_true": not false_scores
        or not true_scores
        or max(false_scores) < min(true_scores),
        "lowest_true_score": round(min(true_scores), 1) if true_scores else None,
        "highest_false_score": round(max(false_scores), 1) if false_scores else None,
        "k": k,
        "hits_top_k": hits,
        "precision_at_k": hits / k if k else None,
        "review_queue": len(run.outcome.triage.review),
    }


def _detectors(outcome: AuditOutcome, truth: _Truth) -> dict[str, Any]:
    """Each statistical detector's flags, false flags and false discovery proportion."""
    detectors: dict[str, Any] = {}
    results: list[tuple[str, Any]] = [
        ("coseating", outcome.coseating),
        ("pointflow", outcome.pointflow),
        ("boosting", outcome.boosting),
        ("together", outcome.together),
        ("fed", outcome.fed),
        ("kept", outcome.kept),
    ]
    if outcome.softplay.family_size:
        results.append(("softplay", outcome.softplay))
    for name, result in results:
        found = result.flags
        false = sum(not truth.flag(flag) for flag in found)
        detectors[name] = {
            "flags": len(found),
            "false": false,
            "fdp": false / len(found) if found else 0.0,
            "family_size": result.family_size,
        }
        if name == "boosting":
            detectors[name]["day_icc"] = result.day_icc
            detectors[name]["false_models"] = [
                "+".join(truth.models(flag.players[0])) for flag in found if not truth.flag(flag)
            ]
        if name == "kept":
            detectors[name]["style"] = result.style
    detectors["sessions"] = {
        "clusters": len(outcome.sessions.clusters),
        "same_table_links": len(outcome.sessions.links),
        "dropped_ips": len(outcome.sessions.dropped_ips),
        "dropped_devices": len(outcome.sessions.dropped_devices),
    }
    return detectors


def evaluate(run: SeasonRun) -> dict[str, Any]:
    """The figures of one audited season against its labels (module docstring)."""
    labels: Labels = run.season.labels
    outcome = run.outcome
    truth = _Truth(labels)
    figures = _groups(run, truth)
    figures["pairs"]["bound"] = _bound(run)
    figures["boosters"] = _boosters(run, truth)
    figures["cases"] = _cases(run, truth, len(labels.farms) + len(labels.pairs))
    figures["detectors"] = _detectors(outcome, truth)
    figures["size"] = {
        "games": outcome.tables,
        "seats": outcome.seats,
        "players": outcome.players,
    }
    figures["seconds"] = {
        **{k: round(v, 1) for k, v in run.seconds.items()},
        **{k: round(v, 1) for k, v in outcome.seconds.items()},
    }
    return figures


def report(
    *,
    players: int,
    weeks: int,
    cheaters: float,
    seed: int,
    params: AuditParams,
    rules: Ruleset | None = None,
    models: str = "varied",
    history_weeks: int = 0,
) -> dict[str, Any]:
    """Audit an injected season and the honest-only season of the same seed (with
    ``rules``: played out with move logs, soft play audited too; ``models``: a key of
    :data:`MODELS`; ``history_weeks``: simulated before the window, the audit's history)."""
    if models not in MODELS:
        raise ValueError(f"unknown models {models!r}; known: {', '.join(MODELS)}")
    size = {"players": players, "weeks": weeks, "seed": seed, "history_weeks": history_weeks}
    injected = run_season(**size, cheaters=cheaters, params=params, rules=rules, models=models)
    figures = {"injected": evaluate(injected)}
    del injected
    honest = run_season(**size, cheaters=0.0, params=params, rules=rules, models=models)
    figures["honest"] = evaluate(honest)
    figures["params"] = {
        "players": players,
        "weeks": weeks,
        "history_weeks": history_weeks,
        "cheaters": cheaters,
        "seed": seed,
        "q": params.q,
        "pair_q": params.pair_q,
        "max_degree": params.max_degree,
        "models": models,
        **({} if rules is None else {"logs": rules.to_spec()}),
    }
    return figures
