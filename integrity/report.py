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
* **Precision@k**: among the ``k`` top-scored cases, ``k`` = the number of injected farms and
  pairs, the share that holds two accounts of one injected group or a booster.
* **False discoveries**: a statistical flag (co-seating, point flow, boosting) is false when
  it names no two accounts of one injected group (boosting: no booster). On an honest-only
  season every flag is false, so the realised false discovery proportion of a detector is 1
  when it raised any flag and 0 otherwise; BH at ``q`` bounds its expectation by ``q``
  (under the global null, the chance of any flag at all).
"""

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from integrity.domain.audit import AuditOutcome, AuditParams, SeatRow, audit, observations
from integrity.domain.data import TableObs
from integrity.domain.softplay import Chance
from integrity.simulation import Labels, Season, record_rows, simulate_season
from tournaments.domain.chances import chances_of
from tournaments.domain.rules import Ruleset

MIN_SHARED = 20
STATISTICAL = ("coseating", "pointflow", "boosting")


@dataclass(frozen=True)
class SeasonRun:
    season: Season
    outcome: AuditOutcome
    tables: list[TableObs]
    seconds: dict[str, float]


def run_season(
    *,
    players: int,
    weeks: int,
    cheaters: float,
    seed: int,
    params: AuditParams,
    rules: Ruleset | None = None,
) -> SeasonRun:
    """Simulate a season and audit it in memory; with ``rules``, its games are played out
    with move logs and soft play is audited from their chances to punish."""
    started = time.perf_counter()
    season = simulate_season(
        players=players, weeks=weeks, cheaters=cheaters, seed=seed, rules=rules
    )
    chances: list[Chance] | None = None if rules is None else []
    rows: list[SeatRow] = []
    for record in season.records:
        rows.extend(record_rows(record))
        if chances is not None and rules is not None:
            chances.extend(chances_of(record, rules))
    tables, sessions = observations(rows)
    del rows
    simulated = time.perf_counter() - started
    started = time.perf_counter()
    outcome = audit(tables, sessions, params, chances)
    return SeasonRun(
        season=season,
        outcome=outcome,
        tables=tables,
        seconds={"simulate": simulated, "audit": time.perf_counter() - started},
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
        self.groups = {"farms": labels.farms, "pairs": labels.pairs}
        self.boosters = set(labels.boosters)

    def case(self, players: Sequence[str]) -> bool:
        return bool(self.boosters & set(players)) or self.grouped(players)

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
        figures[name] = {
            "shared_games": {"min": min(shared, default=0), "max": max(shared, default=0)},
            "not_cased_shared_games": sorted(
                n for n, hit in zip(shared, cased, strict=True) if n >= MIN_SHARED and not hit
            ),
            "cased": _recall(cased, shared),
            "flagged": _recall(flagged, shared),
        }
    return figures


def _boosters(run: SeasonRun, truth: _Truth) -> dict[str, Any]:
    boosters = truth.boosters
    boosted = {flag.players[0] for flag in run.outcome.boosting.flags}
    in_cases = {player for case in run.outcome.triage.cases for player in case.players}
    return {
        "injected": len(boosters),
        "flagged": len(boosters & boosted),
        "recall_flagged": len(boosters & boosted) / len(boosters) if boosters else None,
        "cased": len(boosters & in_cases),
    }


def _cases(run: SeasonRun, truth: _Truth, k: int) -> dict[str, Any]:
    """The case ranking: the true cases among the top ``k`` (as many as injected groups)."""
    cases = run.outcome.triage.cases
    hits = sum(truth.case(case.players) for case in cases[:k])
    true_scores = [case.score for case in cases if truth.case(case.players)]
    false_scores = [case.score for case in cases if not truth.case(case.players)]
    return {
        "total": len(cases),
        "true": len(true_scores),
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
) -> dict[str, Any]:
    """Audit an injected season and the honest-only season of the same seed (with
    ``rules``: played out with move logs, soft play audited too)."""
    injected = run_season(
        players=players, weeks=weeks, cheaters=cheaters, seed=seed, params=params, rules=rules
    )
    figures = {"injected": evaluate(injected)}
    del injected
    honest = run_season(
        players=players, weeks=weeks, cheaters=0.0, seed=seed, params=params, rules=rules
    )
    figures["honest"] = evaluate(honest)
    figures["params"] = {
        "players": players,
        "weeks": weeks,
        "cheaters": cheaters,
        "seed": seed,
        "q": params.q,
        "max_degree": params.max_degree,
        **({} if rules is None else {"logs": rules.to_spec()}),
    }
    return figures
