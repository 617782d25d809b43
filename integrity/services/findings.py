"""An audit's findings written (SPEC §7: "audits ... produce flags ... flags on related players
group into cases"), inside the audit run's write transaction
(:func:`integrity.services.audits.audit_run`).

**Flags.** One row per detector flag, except the near-conclusive same-table links, which
are grouped into one row per (pair, kind, identifier) listing the games (each game still
counts in the case score). ``score`` is the flag's strength (``-log10 q``; for links the
weight the case builder gives them). The evidence of a point-flow, "better together",
fed-account or cards-kept flag holds the run's ``history_days``: its counts include the
games of those days before the window (the reviewer's page says so).

**Cases.** A proposal's key is its sorted player ids joined by ``|`` (a SHA-256 digest of it
when longer than the column). An open case with that key is updated (score, families,
reason, flags), never duplicated; a new key opens a case and logs ``opened`` once. A case
already decided (dismissed, sanctioned, reversed) is not reopened by statistics: the new
flags are attached and ``flagged_again`` is logged once per run key.
"""

import hashlib
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict
from typing import Any, Final

from accounts.models import Player
from core.errors import ServiceError
from integrity.domain.audit import AuditOutcome, DetectorFlag
from integrity.domain.boosting import BoostFlag
from integrity.domain.cases import NEAR_CONCLUSIVE_SCORE, CaseProposal
from integrity.domain.coseating import PairFlag
from integrity.domain.fed import FedFlag
from integrity.domain.kept import KeptFlag
from integrity.domain.pointflow import FlowFlag
from integrity.domain.sessions import SameTableLink, SessionCluster
from integrity.domain.softplay import SoftPlayFlag
from integrity.domain.together import TogetherFlag
from integrity.models import AuditRun, Case, CaseEvent, CasePlayer, Flag

_KEY_LENGTH = Case._meta.get_field("key").max_length or 200


def case_key(players: Sequence[str]) -> str:
    joined = "|".join(sorted(players))
    if len(joined) <= _KEY_LENGTH:
        return joined
    return "sha256:" + hashlib.sha256(joined.encode()).hexdigest()


def versions(outcome: AuditOutcome) -> dict[str, str]:
    """Each detector's and the case builder's version in ``outcome``."""
    return {
        "coseating": outcome.coseating.version,
        "pointflow": outcome.pointflow.version,
        "sessions": outcome.sessions.version,
        "boosting": outcome.boosting.version,
        "softplay": outcome.softplay.version,
        "together": outcome.together.version,
        "fed": outcome.fed.version,
        "kept": outcome.kept.version,
        "cases": outcome.triage.version,
    }


# --- one flag row per detector flag ----------------------------------------------------------


def _finite(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None


def _coseating_row(flag: PairFlag) -> dict[str, Any]:
    a, b = flag.players
    return {
        "detector": Flag.Detector.COSEATING,
        "family": Flag.Family.BEHAVIOUR,
        "player_keys": list(flag.players),
        "statistic": flag.shared,
        "p_value": flag.p,
        "q_value": flag.q,
        "evidence": {
            "shared": flag.shared,
            "expected": flag.expected,
            "trials": flag.trials,
            "games": {a: flag.games[0], b: flag.games[1]},
            "common_hours": flag.common_hours,
        },
    }


def _pointflow_row(flag: FlowFlag) -> dict[str, Any]:
    return {
        "detector": Flag.Detector.POINTFLOW,
        "family": Flag.Family.BEHAVIOUR,
        "player_keys": list(flag.players),
        # The excess rank sum when the rank sums decided, or the sign test's count.
        "statistic": flag.rank_sum if flag.test == "rank" else flag.heaviest,
        "p_value": flag.p,
        "q_value": flag.q,
        "evidence": {
            "feeder": flag.feeder,
            "beneficiary": flag.beneficiary,
            "shared_wins": flag.shared_wins,
            "test": flag.test,
            "baseline_games": flag.baseline_games,
            "rank_sum": flag.rank_sum,
            "rank_sum_hands": flag.rank_sum_hands,
            "rank_sum_expected": flag.rank_sum_expected,
            "heaviest": flag.heaviest,
            "expected": flag.expected,
            "mean_excess": flag.mean_excess,
            "feeder_mean": flag.feeder_mean,
            "feeder_baseline": _finite(flag.feeder_baseline),
            "flow_to_beneficiary": flag.flow_to_beneficiary,
            "flow_to_feeder": flag.flow_to_feeder,
            "reverse_wins": flag.reverse_wins,
        },
    }


def _sessions_row(flag: SessionCluster) -> dict[str, Any]:
    return {
        "detector": Flag.Detector.SESSIONS,
        "family": Flag.Family.LINKS,
        "player_keys": list(flag.players),
        "statistic": len(flag.players),
        "evidence": {"devices": list(flag.devices), "ips": list(flag.ips)},
    }


def _boosting_row(flag: BoostFlag) -> dict[str, Any]:
    return {
        "detector": Flag.Detector.BOOSTING,
        "family": Flag.Family.BEHAVIOUR,
        "player_keys": [flag.player],
        "statistic": flag.z,
        "p_value": flag.p,
        "q_value": flag.q,
        "evidence": {
            "games": flag.games,
            "history": flag.history,
            "change_index": flag.change_index,
            "change_game": flag.change_game,
            "change_hour": flag.change_hour,
            "kinds": list(flag.kinds),
            "before_mean": flag.before_mean,
            "after_mean": flag.after_mean,
            "shift": flag.shift,
            "splits": flag.splits,
            "day_effect": flag.day_effect,
        },
    }


def _softplay_row(flag: SoftPlayFlag) -> dict[str, Any]:
    return {
        "detector": Flag.Detector.SOFTPLAY,
        "family": Flag.Family.BEHAVIOUR,
        "player_keys": sorted(flag.players),
        # The punishments the target got: Fisher's statistic, low when the target is spared.
        "statistic": flag.punished,
        "p_value": flag.p,
        "q_value": flag.q,
        "evidence": {
            "actor": flag.actor,
            "target": flag.target,
            "chances": flag.chances,
            "punished": flag.punished,
            "chances_others": flag.chances_others,
            "punished_others": flag.punished_others,
            "kinds": [asdict(kind) for kind in flag.kinds],
            "queued": flag.queued,
            "weight": flag.weight,
        },
    }


def _together_row(flag: TogetherFlag) -> dict[str, Any]:
    return {
        "detector": Flag.Detector.TOGETHER,
        "family": Flag.Family.BEHAVIOUR,
        "player_keys": list(flag.players),
        "statistic": None,
        "p_value": flag.p,
        "q_value": flag.q,
        "evidence": {
            "player": flag.player,
            "direction": flag.direction,
            "tests": flag.tests,
            "shared": flag.shared,
            "weight": flag.weight,
            "sides": [asdict(side) for side in flag.sides],
        },
    }


def _fed_row(flag: FedFlag) -> dict[str, Any]:
    return {
        "detector": Flag.Detector.FED,
        "family": Flag.Family.BEHAVIOUR,
        "player_keys": list(flag.players),
        "statistic": flag.rank_sum,
        "p_value": flag.p,
        "q_value": flag.q,
        "evidence": {
            "account": flag.account,
            "group": list(flag.group),
            "wins": flag.wins,
            "other_wins": flag.other_wins,
            "apart_wins": flag.apart_wins,
            "rank_sum": flag.rank_sum,
            "expected": flag.expected,
            "margin": flag.margin,
            "group_in_wins": flag.group_in_wins,
            "group_in_other_wins": flag.group_in_other_wins,
            "losers_in_wins": flag.losers_in_wins,
            "losers_apart": flag.losers_apart,
        },
    }


def _kept_row(flag: KeptFlag) -> dict[str, Any]:
    return {
        "detector": Flag.Detector.KEPT,
        "family": Flag.Family.BEHAVIOUR,
        "player_keys": list(flag.players),
        "statistic": flag.z,
        "p_value": flag.p,
        "q_value": flag.q,
        "evidence": {
            "feeder": flag.feeder,
            "partner": flag.partner,
            "games": flag.games,
            "kept": flag.kept,
            "expected": flag.expected,
            "strengths": list(flag.strengths),
            "style": flag.style,
            "shared": flag.shared,
            "weight": flag.weight,
        },
    }


#: The fields of a detector flag's row, by the flag's type.
_ROWS: dict[type, Callable[[Any], dict[str, Any]]] = {
    PairFlag: _coseating_row,
    FlowFlag: _pointflow_row,
    SessionCluster: _sessions_row,
    BoostFlag: _boosting_row,
    SoftPlayFlag: _softplay_row,
    TogetherFlag: _together_row,
    FedFlag: _fed_row,
    KeptFlag: _kept_row,
}


#: The detectors that test the window's pairs on its history too
#: (:func:`integrity.domain.audit.audit`).
_PAIR_TESTS: Final = frozenset(
    {Flag.Detector.POINTFLOW, Flag.Detector.TOGETHER, Flag.Detector.FED, Flag.Detector.KEPT}
)


def flag_row(run: AuditRun, flag: DetectorFlag, detector_versions: Mapping[str, str]) -> Flag:
    """The (unsaved) row of one detector flag other than a same-table link."""
    fields = _ROWS.get(type(flag))
    if fields is None:
        raise TypeError(f"not a flag row: {flag!r}")
    row = fields(flag)
    if row["detector"] in _PAIR_TESTS:
        # The pair tests count the games of the days the run read before its window too.
        row["evidence"]["history_days"] = run.params.get("history_days", 0)
    return Flag(run=run, version=detector_versions[row["detector"]], score=flag.strength, **row)


def _link_rows(
    run: AuditRun, links: Iterable[tuple[str, SameTableLink]], version: str
) -> tuple[list[Flag], dict[str, int]]:
    """One row per (pair, kind, identifier); returns the rows and, per link reference, the
    index of its row."""
    grouped: dict[tuple[tuple[str, str], str, str], list[tuple[str, str]]] = defaultdict(list)
    for ref, link in links:
        grouped[link.players, link.kind, link.identifier].append((ref, link.game_id))
    rows: list[Flag] = []
    index: dict[str, int] = {}
    for (players, kind, identifier), items in sorted(grouped.items()):
        games = sorted({game for _, game in items})
        for ref, _ in items:
            index[ref] = len(rows)
        rows.append(
            Flag(
                run=run,
                detector=Flag.Detector.SAME_TABLE,
                version=version,
                family=Flag.Family.LINKS,
                player_keys=list(players),
                statistic=len(games),
                near_conclusive=kind == "device",
                evidence={"kind": kind, "identifier": identifier, "games": games},
                score=NEAR_CONCLUSIVE_SCORE * len(games) if kind == "device" else 0.0,
            )
        )
    return rows, index


def _player_ids(keys: Iterable[str]) -> dict[str, int]:
    wanted = sorted(set(keys))
    found = dict(Player.objects.filter(external_id__in=wanted).values_list("external_id", "pk"))
    missing = sorted(set(wanted) - set(found))
    if missing:
        raise ServiceError(f"unknown players in the audit: {', '.join(missing[:10])}")
    return found


def flags_write(run: AuditRun, outcome: AuditOutcome) -> tuple[dict[str, Flag], int]:
    """Write the run's flag rows (module docstring); returns the row behind each flag
    reference and the number of rows."""
    detector_versions = versions(outcome)
    rows: list[Flag] = []
    by_ref: dict[str, int] = {}
    links: list[tuple[str, SameTableLink]] = []
    for ref, flag in outcome.flags.items():
        if isinstance(flag, SameTableLink):
            links.append((ref, flag))
            continue
        by_ref[ref] = len(rows)
        rows.append(flag_row(run, flag, detector_versions))
    link_rows, link_index = _link_rows(run, links, detector_versions["sessions"])
    offset = len(rows)
    rows.extend(link_rows)
    by_ref.update({ref: offset + i for ref, i in link_index.items()})
    Flag.objects.bulk_create(rows, batch_size=1000)
    ids = _player_ids(key for row in rows for key in row.player_keys)
    through = Flag.players.through
    through.objects.bulk_create(
        [through(flag_id=row.pk, player_id=ids[key]) for row in rows for key in row.player_keys],
        batch_size=5000,
    )
    return {ref: rows[i] for ref, i in by_ref.items()}, len(rows)


# --- cases -----------------------------------------------------------------------------------


def _case_open(
    run: AuditRun, key: str, proposal: CaseProposal, ids: Mapping[str, int], flags: int
) -> Case:
    case = Case.objects.create(
        key=key,
        families=list(proposal.families),
        score=proposal.score,
        reason=proposal.reason[:300],
    )
    CasePlayer.objects.bulk_create(
        [CasePlayer(case=case, player_id=ids[player]) for player in proposal.players]
    )
    CaseEvent.objects.create(
        case=case,
        action=CaseEvent.Action.OPENED,
        reason=proposal.reason[:500],
        data={"run": run.key, "flags": flags, "score": proposal.score},
    )
    return case


def _case_flagged_again(run: AuditRun, case: Case, proposal: CaseProposal, flags: int) -> None:
    logged = CaseEvent.objects.filter(
        case=case, action=CaseEvent.Action.FLAGGED_AGAIN, data__run=run.key
    ).exists()
    if not logged:
        CaseEvent.objects.create(
            case=case,
            action=CaseEvent.Action.FLAGGED_AGAIN,
            reason=proposal.reason[:500],
            data={"run": run.key, "flags": flags, "score": proposal.score},
        )


def cases_write(
    run: AuditRun, proposals: Sequence[CaseProposal], rows: Mapping[str, Flag]
) -> dict[str, int]:
    """Open or update a case per proposal (module docstring); returns the counts."""
    counts = {"opened": 0, "updated": 0, "flagged_again": 0}
    keyed = {case_key(p.players): p for p in proposals}
    existing = {
        case.key: case
        for case in Case.objects.select_for_update().filter(key__in=sorted(keyed)).order_by("pk")
    }
    ids = _player_ids(player for p in proposals for player in p.players)
    case_flags = Case.flags.through
    links: list[Any] = []
    for key, proposal in sorted(keyed.items()):
        flag_ids = sorted({rows[ref].pk for ref in proposal.flags})
        case = existing.get(key)
        if case is None:
            case = _case_open(run, key, proposal, ids, len(flag_ids))
            counts["opened"] += 1
        elif case.status == Case.Status.OPEN:
            case.families, case.score = list(proposal.families), proposal.score
            case.reason = proposal.reason[:300]
            case.save(update_fields=["families", "score", "reason"])
            counts["updated"] += 1
        else:
            _case_flagged_again(run, case, proposal, len(flag_ids))
            counts["flagged_again"] += 1
        links.extend(case_flags(case_id=case.pk, flag_id=flag_id) for flag_id in flag_ids)
    case_flags.objects.bulk_create(links, batch_size=5000, ignore_conflicts=True)
    return counts
