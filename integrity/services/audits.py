"""Audits (SPEC §7: "audits after each event closes and periodically over the season produce
flags ... flags on related players group into cases").

:func:`audit_run` audits one window under a ``key``:

1. the run row is created or reset (``attempts`` + 1, status ``running``) in its own short
   transaction, so a failure is recorded even though the work is rolled back;
2. the window is never loaded whole: PostgreSQL counts what it can (:mod:`integrity.sql`)
   and the pure detectors of :mod:`integrity.domain` run on the rest. Two connections share
   the work, each in one audit transaction
   (:func:`~integrity.sql.window.audit_transaction`): the audit's own connection, and a
   second one in a thread (outside a caller's transaction only: inside one, whose
   uncommitted rows another connection would not see, everything runs on the caller's
   connection, in the same order).

   On the audit's own connection:

   * the window's players are summarised in one grouped query
     (:func:`~integrity.sql.summary.window_players`): the skills, the players boosting can
     test (a few percent of them), and the eligible players active per hour, which
     co-seating's family size needs;
   * the seats of the players boosting can test are read, each with its table's players
     (:func:`~integrity.sql.window.seats_of`), then the seats of the ``history_days``
     before the window of those whose history it reads
     (:func:`~integrity.sql.window.history_seats_of`: the owner's baseline), the
     residuals computed with the window's skills
     (:func:`~integrity.domain.audit.seat_residuals`), and boosting runs on them;
   * soft play's counts per (actor, target) pair and kind are summed in SQL from the
     chances stored at ingest (:func:`~integrity.sql.softplay.softplay_counts`: only the
     pairs it tests come to Python);
   * shared sessions are grouped in SQL (:func:`~integrity.sql.sessions.sessions_sql`: only
     identifiers on two or more accounts come to Python);
   * once the other connection is done, the pure soft-play test runs on those counts with
     co-seating's discoveries as the pairs who queue together
     (:func:`~integrity.domain.softplay.softplay_from_counts`).

   On the second connection meanwhile:

   * co-seating is counted in SQL (:func:`~integrity.sql.coseating.coseating_count`: only
     the candidate pairs come to Python, with the window's table count and the players of
     the pairs sharing ``>= min_shared_wins`` tables);
   * the tables of the players point flow can test, which co-seating's count names, are
     loaded (:func:`~integrity.sql.window.tables_of`), in the window and in the
     ``history_days`` before it;
   * point flow runs on them, then "better together" (with the window's skills), the
     fed-account test and the cards kept on the co-seating discoveries among them (their
     players' games are all in those tables). These pure tests run in Python while the
     audit's own connection is still at work in PostgreSQL, so the two cores are both
     busy; the balance is measured in docs/performance.md.

   Each detector's result equals the pure detector's over the whole window (tested);
3. one transaction writes everything (:mod:`integrity.services.findings`): the run is
   locked, **its old flags are deleted** and the new ones written (so re-running a key
   replaces its flags and never duplicates them), cases opened or updated, and the run
   marked ``completed`` with its statistics.
"""

import logging
import time
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing
from dataclasses import asdict, dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from accounts.models import Player
from core import collector
from core.domain.clock import TOUR_TZ
from core.errors import ServiceError
from core.jobs import job_progress
from integrity.conf import audit_params
from integrity.domain.audit import (
    AuditOutcome,
    AuditParams,
    Found,
    boosting_of,
    fed_of,
    kept_of,
    observations,
    outcome,
    pointflow_of,
    seat_residuals,
    tables_from,
    together_of,
    with_history,
)
from integrity.domain.coseating import CoseatingResult
from integrity.domain.data import TableObs
from integrity.domain.fed import FedResult
from integrity.domain.kept import KeptResult
from integrity.domain.pointflow import PointflowResult
from integrity.domain.softplay import softplay_from_counts
from integrity.domain.together import TogetherResult
from integrity.models import AuditRun, Case, Flag
from integrity.services.findings import cases_write, flags_write, versions
from integrity.sql import (
    HourActivity,
    audit_rows,
    audit_transaction,
    coseating_count,
    history_seats_of,
    seats_of,
    sessions_sql,
    softplay_counts,
    tables_of,
    window_players,
)
from integrity.sql.window import finished
from tournaments.models import Event

logger = logging.getLogger(__name__)

_RUN_KEY_LENGTH = AuditRun._meta.get_field("key").max_length or 80
#: The longest audit window: 48,000 hour buckets (a season is 8,784 at most).
LONGEST_WINDOW = timedelta(days=2000)


def event_key(event: Event) -> str:
    return f"event:{event.code}"


def window_key(first: date, last: date) -> str:
    return f"window:{first.isoformat()}:{last.isoformat()}"


def day_window(first: date, last: date) -> tuple[datetime, datetime]:
    """Tour days ``first``..``last`` (inclusive, Asia/Shanghai) as an inclusive window."""
    start = datetime.combine(first, datetime.min.time(), TOUR_TZ)
    end = datetime.combine(last + timedelta(days=1), datetime.min.time(), TOUR_TZ)
    return start, end - timedelta(microseconds=1)


# --- the run row -----------------------------------------------------------------------------


def _check(key: str, window_start: datetime, window_end: datetime) -> None:
    if not key.strip() or len(key) > _RUN_KEY_LENGTH:
        raise ServiceError("an audit key is 1 to 80 characters", detail={"key": key})
    if timezone.is_naive(window_start) or timezone.is_naive(window_end):
        raise ServiceError("the audit window needs aware datetimes")
    if window_end < window_start:
        raise ServiceError("the audit window ends before it starts")
    if window_end - window_start > LONGEST_WINDOW:
        raise ServiceError(
            f"an audit window spans at most {LONGEST_WINDOW.days} days",
            detail={"days": (window_end - window_start).days},
        )


def _start(
    *,
    key: str,
    window_start: datetime,
    window_end: datetime,
    event: Event | None,
    params: dict[str, Any],
) -> AuditRun:
    with transaction.atomic():
        run, created = AuditRun.objects.select_for_update().get_or_create(
            key=key,
            defaults={
                "event": event,
                "window_start": window_start,
                "window_end": window_end,
                "params": params,
                "attempts": 1,
            },
        )
        if not created:
            run.event, run.window_start, run.window_end = event, window_start, window_end
            run.params, run.status, run.error = params, AuditRun.Status.RUNNING, ""
            run.attempts += 1
            run.started_at, run.finished_at = timezone.now(), None
            run.save()
        return run


def _stats(found: AuditOutcome, seconds: dict[str, float]) -> dict[str, Any]:
    return {
        "tables": found.tables,
        "seats": found.seats,
        "players": found.players,
        "pairs_tested": found.coseating.tested,
        "family_size": found.coseating.family_size,
        "family_size_exact": found.coseating.family_size_exact,
        "pointflow_family": found.pointflow.family_size,
        "boosting_family": found.boosting.family_size,
        "boosting_day_icc": found.boosting.day_icc,
        "softplay_family": found.softplay.family_size,
        "together_family": found.together.family_size,
        "fed_family": found.fed.family_size,
        "kept_family": found.kept.family_size,
        "kept_style": found.kept.style,
        "flags": {
            "coseating": len(found.coseating.flags),
            "pointflow": len(found.pointflow.flags),
            "sessions": len(found.sessions.clusters),
            "same_table": len(found.sessions.links),
            "boosting": len(found.boosting.flags),
            "softplay": len(found.softplay.flags),
            "together": len(found.together.flags),
            "fed": len(found.fed.flags),
            "kept": len(found.kept.flags),
        },
        "cases_proposed": len(found.triage.cases),
        "review": len(found.triage.review),
        "versions": versions(found),
        "seconds": {name: round(value, 3) for name, value in seconds.items()},
    }


def _record(
    run: AuditRun, found: AuditOutcome, seconds: dict[str, float], started: float
) -> AuditRun:
    """Step 3 of the module docstring, in one transaction; returns the completed run."""
    writing = time.perf_counter()
    with transaction.atomic():
        run = AuditRun.objects.select_for_update().get(pk=run.pk)
        Flag.objects.filter(run=run).delete()
        rows, written = flags_write(run, found)
        counts = cases_write(run, found.triage.cases, rows)
        seconds["write"] = time.perf_counter() - writing
        seconds["total"] = time.perf_counter() - started
        run.stats = {**_stats(found, seconds), "cases": counts, "flag_rows": written}
        run.status, run.finished_at = AuditRun.Status.COMPLETED, timezone.now()
        run.save(update_fields=["stats", "status", "finished_at"])
    return run


# --- the audit ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Paired:
    """What the second connection finds: co-seating, the window's table count, the pair
    tests on the tables of co-seating's pairs, and the seconds each step took."""

    coseating: CoseatingResult
    tables: int
    pointflow: PointflowResult
    together: TogetherResult
    fed: FedResult
    kept: KeptResult
    seconds: dict[str, float]


def _pairs(
    window: Mapping[str, Any],
    params: AuditParams,
    activity: Future[HourActivity],
    skills: Future[Mapping[str, float]],
) -> _Paired:
    """Co-seating (:func:`~integrity.sql.coseating.coseating_count`), with the hour activity
    from ``activity``; then the tables the pair tests read, in the window and in its
    ``history_days`` before; then the pair tests on them, "better together" with the window's
    ``skills``.

    Point flow tests the ordered pairs with ``>= min_shared_wins`` shared wins, so only the
    pairs sharing as many tables (listed by the co-seating count when that is ``>= 2``, the
    least its pair table holds) and the tables of their players matter to it; the other
    pair tests read co-seating's discoveries among them."""
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    sharing = params.min_shared_wins
    count = coseating_count(**window, params=params, activity=activity, sharing=max(2, sharing))
    feeders = count.sharing if sharing >= 2 else None
    seconds["coseating"] = time.perf_counter() - started
    started = time.perf_counter()
    window_tables = _tables_of_feeders(feeders, window)
    history_tables = (
        _tables_of_feeders(feeders, _before(window, params.history_days))
        if params.history_days
        else []
    )
    seconds["tables"] = time.perf_counter() - started
    started = time.perf_counter()
    pointflow = pointflow_of(window_tables, count.coseating, params, history_tables)
    seconds["pointflow"] = time.perf_counter() - started
    paired = [*history_tables, *window_tables]
    del window_tables, history_tables
    started = time.perf_counter()
    together = together_of(paired, count.coseating, params, skills.result())
    seconds["together"] = time.perf_counter() - started
    started = time.perf_counter()
    fed = fed_of(paired, count.coseating, params)
    seconds["fed"] = time.perf_counter() - started
    started = time.perf_counter()
    kept = kept_of(paired, count.coseating, params)
    seconds["kept"] = time.perf_counter() - started
    return _Paired(count.coseating, count.tables, pointflow, together, fed, kept, seconds)


def _pairs_alongside(
    window: Mapping[str, Any],
    params: AuditParams,
    activity: Future[HourActivity],
    skills: Future[Mapping[str, float]],
) -> _Paired:
    """:func:`_pairs` on this thread's own connection, closed at the end: run by
    :func:`audit_run` while the rest of the audit runs on its own connection."""
    try:
        return _pairs(window, params, activity, skills)
    finally:
        connection.close()


#: The steps an audit reports to its job's panel: players, load, boosting, soft play,
#: shared sessions, the pairs (co-seating and the pair tests).
AUDIT_STEPS = 6


def _tables_of_feeders(feeders: list[int] | None, window: Mapping[str, Any]) -> list[TableObs]:
    """The tables the pair tests read in ``window``: the games of the players point flow can
    test (``None``: every game)."""
    if feeders is None:
        with closing(audit_rows(**window)) as rows:
            return observations(rows)[0]
    with closing(tables_of(feeders, **window)) as rows:
        return tables_from(rows)


def _before(window: Mapping[str, Any], days: int) -> dict[str, Any]:
    """The ``days`` before the window, every event's games: the window's history."""
    start = window["window_start"]
    return {
        "window_start": start - timedelta(days=days),
        "window_end": start - timedelta(microseconds=1),
    }


def _audit_in_sql(
    window: Mapping[str, Any], params: AuditParams, alongside: ThreadPoolExecutor | None
) -> AuditOutcome:
    """The audit (module docstring, step 2): co-seating and the pair tests on a second
    connection by ``alongside`` (with ``None``, on this connection once the window's summary
    is read), the rest on this one. The outcome equals the in-memory audit's over the whole
    window (tested)."""
    seconds: dict[str, float] = {}
    activity: Future[HourActivity] = Future()
    skills: Future[Mapping[str, float]] = Future()
    pairing = None
    if alongside is not None:
        pairing = alongside.submit(_pairs_alongside, window, params, activity, skills)
    with audit_transaction():
        started = time.perf_counter()
        try:
            players = window_players(**window, params=params)
        except BaseException as exc:
            for future in (activity, skills):  # the pairs alongside stop waiting for them
                future.set_exception(exc)
            raise
        activity.set_result(players.activity)
        skills.set_result(players.skill_by_external_id)
        seconds["players"] = time.perf_counter() - started
        job_progress(1, AUDIT_STEPS, "players")
        if pairing is None:
            pairing = finished(_pairs(window, params, activity, skills))

        started = time.perf_counter()
        with closing(seats_of(players.boosting, players.lone, **window)) as rows:
            residuals, sessions = seat_residuals(rows, players.skill)
        history: dict[str, int] = {}
        if params.history_days and players.history:
            earlier = history_seats_of(
                players.history, window_start=window["window_start"], days=params.history_days
            )
            with closing(earlier) as rows:
                before, before_sessions = seat_residuals(rows, players.skill)
            residuals, history = with_history(before, residuals)
            sessions = [*before_sessions, *sessions]
        seconds["load"] = time.perf_counter() - started
        job_progress(2, AUDIT_STEPS, "load")
        started = time.perf_counter()
        boosting = boosting_of(residuals, sessions, params, history)
        seconds["boosting"] = time.perf_counter() - started
        del residuals, sessions
        job_progress(3, AUDIT_STEPS, "boosting")
        started = time.perf_counter()
        pairs = softplay_counts(**window, min_chances=params.min_chances)
        seconds["softplay"] = time.perf_counter() - started
        job_progress(4, AUDIT_STEPS, "softplay")
        started = time.perf_counter()
        shared = sessions_sql(**window, params=params)
        seconds["sessions"] = time.perf_counter() - started
        job_progress(5, AUDIT_STEPS, "sessions")

        paired = pairing.result()
        job_progress(6, AUDIT_STEPS, "pairs")
        seconds.update(paired.seconds)
        started = time.perf_counter()
        softplay = softplay_from_counts(
            pairs,
            q=params.q,
            min_chances=params.min_chances,
            queued=[flag.players for flag in paired.coseating.flags],
        )
        seconds["softplay"] += time.perf_counter() - started

        found = Found(
            paired.coseating,
            paired.pointflow,
            shared,
            boosting,
            paired.together,
            paired.fed,
            paired.kept,
            softplay,
        )
        return outcome(
            found,
            tables=paired.tables,
            seats=players.seats,
            players=players.players,
            seconds=seconds,
        )


def audit_run(
    *,
    key: str,
    window_start: datetime,
    window_end: datetime,
    event: Event | None = None,
    params: Mapping[str, Any] | None = None,
) -> AuditRun:
    """Audit the window (module docstring); idempotent per ``key``. Returns the run."""
    _check(key, window_start, window_end)
    detector_params = audit_params(params)
    run = _start(
        key=key,
        window_start=window_start,
        window_end=window_end,
        event=event,
        params=asdict(detector_params),
    )
    started = time.perf_counter()
    window = {"window_start": window_start, "window_end": window_end, "event": event}
    try:
        with collector.paused(), ThreadPoolExecutor(max_workers=1) as pool:
            # Another connection would not see a caller's uncommitted rows: inside a
            # transaction everything runs on this connection.
            alongside = None if connection.in_atomic_block else pool
            found = _audit_in_sql(window, detector_params, alongside)
        run = _record(run, found, dict(found.seconds), started)
    except Exception as exc:
        AuditRun.objects.filter(pk=run.pk).update(
            status=AuditRun.Status.FAILED, error=repr(exc)[:2000], finished_at=timezone.now()
        )
        logger.exception("audit %s failed", key)
        raise
    logger.info("audit %s: %s", key, run.stats.get("flags"))
    return run


def audit_event(*, event: Event, params: Mapping[str, Any] | None = None) -> AuditRun:
    """The audit of one event over its window (key ``event:<code>``)."""
    return audit_run(
        key=event_key(event),
        window_start=event.starts_at,
        window_end=event.ends_at,
        event=event,
        params=params,
    )


def audit_runs_lost(*, now: datetime | None = None) -> list[AuditRun]:
    """Mark failed every run left ``running`` longer than any attempt can live — the hard job
    time limit plus the broker's visibility timeout, after which a redelivered attempt would
    have restarted it — so its worker died and its message is gone. Returns them, for their
    audits to be sent again."""
    now = now or timezone.now()
    lifetime = settings.CELERY_TASK_TIME_LIMIT + int(
        settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    )
    lost = []
    with transaction.atomic():
        for run in AuditRun.objects.select_for_update(skip_locked=True).filter(
            status=AuditRun.Status.RUNNING, started_at__lt=now - timedelta(seconds=lifetime)
        ):
            run.status, run.finished_at = AuditRun.Status.FAILED, now
            run.error = (
                f"worker lost: running since {run.started_at.astimezone(TOUR_TZ):%Y-%m-%d %H:%M}"
                f" (Asia/Shanghai), longer than a job can live ({lifetime} s); sent again"
            )
            run.save(update_fields=["status", "finished_at", "error"])
            lost.append(run)
    for run in lost:
        logger.warning("audit run %s lost its worker; marked failed and sent again", run.key)
    return lost


def event_audit_is_clean(event: Event, *, player: Player | None = None) -> bool:
    """Whether the event's audit has completed and (for ``player``) no open case holds the
    player — what a title grant from this event needs (SPEC §6 "Grants go through review")."""
    audited = AuditRun.objects.filter(
        key=event_key(event), status=AuditRun.Status.COMPLETED
    ).exists()
    if not audited:
        return False
    if player is None:
        return True
    return not Case.objects.filter(Q(status=Case.Status.OPEN) & Q(players=player)).exists()
