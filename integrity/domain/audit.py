"""One audit over one window: seat rows (and, where logged, the chances of the move logs) ->
observations -> the detectors -> case proposals (SPEC §7: audits produce flags, flags on
related players group into cases).

The same detectors serve the database audit (``integrity.services.audits.audit_run``, with
the SQL of :mod:`integrity.sql`) and the in-memory measurement on simulated seasons
(``manage.py integrity_report`` feeds :func:`audit` simulated records), so what is measured
is what runs.

* :func:`observations` turns **seat rows** — ``(game id, hour bucket, player, hand points,
  score, ip, device, cards kept)`` in game order and, within a game, in seat order (the
  hour bucket of the game's end, :func:`~integrity.domain.data.hour_bucket`) — into one
  :class:`~integrity.domain.data.TableObs` per game and one
  :class:`~integrity.domain.data.SessionObs` per seat; :func:`tables_from` turns **table
  rows** (the same without ip and device) into the tables alone. A game's winners are the
  seats with the highest game score (ties included; every scoring of SPEC §3 is "higher is
  better").
* :func:`skill_expectation` is the simple skill model the boosting residuals need: a
  player's skill is their mean game score in the window (0, the mean of a zero-sum score,
  for a player with no game in it), and the score expected at a table is the player's skill
  minus the mean skill of the others at it (tour scores are close to zero-sum, so beating
  stronger opponents is worth more than beating weaker ones). :func:`boosting_series`
  gives the residuals of the window's games preceded by those of the window's *history*
  (the games before it, the owner's baseline; :mod:`integrity.domain.boosting`), with the
  window's skills.
  :func:`seat_residuals` gives the same residuals from the seats of some players only,
  with the window's skills: the database audit reads only the seats of the players
  boosting can test.
* :func:`audit` runs co-seating, point flow (:func:`pointflow_of`, co-seating's
  discoveries no strangers to each other), "better together" (:func:`together_of`, on
  co-seating's discoveries), the fed accounts (:func:`fed_of`, the groups co-seating found
  queueing together), the cards kept (:func:`kept_of`, on co-seating's discoveries), shared
  sessions (clusters and same-table links) and boosting
  over a whole window with the parameters of :class:`AuditParams`, and soft play when the
  window's chances are given (co-seating's discoveries weigh more in its family). Given the
  window's history, boosting reads it as the owner's baseline, and point flow, "better
  together", the fed accounts and the cards kept as more games of the pairs the window puts in their
  families: who queues or wins together is the window's finding, and the week before holds
  the same pairs' games together and apart (a pair that colludes this week has likely done
  so before, and a new one loses nothing; honest friends meet the tests' nulls in both
  weeks);
  :func:`outcome` gathers the detectors' results, however they were computed (the database
  audit counts co-seating, shared sessions and soft play's pairs in SQL), and proposes cases
  (:func:`~integrity.domain.cases.propose_cases`) over all their flags.

Flag references (the keys of :attr:`AuditOutcome.flags`) are stable across runs of the
same data: ``coseating:a|b``, ``pointflow:feeder>beneficiary``, ``sessions:a|b|…``,
``same_table:game:a|b:kind:identifier``, ``boosting:player``, ``softplay:actor>target``,
``together:a|b``, ``fed:account``, ``kept:a|b``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from integrity.domain.boosting import (
    DAY_FAMILY,
    BoostFlag,
    BoostingResult,
    detect_boosting,
    residual_series,
)
from integrity.domain.cases import Flag, Triage, propose_cases
from integrity.domain.coseating import CoseatingResult, PairFlag, detect_coseating
from integrity.domain.data import SessionObs, TableObs, trusted_table
from integrity.domain.fed import FedFlag, FedResult, detect_fed
from integrity.domain.kept import KeptFlag, KeptResult, detect_kept
from integrity.domain.pointflow import FlowFlag, PointflowResult, detect_pointflow
from integrity.domain.sessions import (
    DEFAULT_MAX_DEGREE,
    SameTableLink,
    SessionCluster,
    SessionsResult,
    detect_sessions,
)
from integrity.domain.softplay import Chance, SoftPlayFlag, SoftPlayResult, detect_softplay
from integrity.domain.strengths import luce_strengths
from integrity.domain.together import TogetherFlag, TogetherResult, detect_together

__all__ = [
    "AuditOutcome",
    "AuditParams",
    "DetectorFlag",
    "Found",
    "PlayerSeat",
    "SeatRow",
    "TableRow",
    "audit",
    "boosting_of",
    "boosting_series",
    "fed_of",
    "flag_ref",
    "kept_of",
    "observations",
    "outcome",
    "pointflow_of",
    "seat_residuals",
    "skill_expectation",
    "tables_from",
    "together_of",
    "window_skills",
    "with_history",
]

#: A seat row: game id, hour bucket of the game's end, player, hand points, game score,
#: ip, device, the number of cards kept.
SeatRow = tuple[str, int, str, int, int, str | None, str | None, int]
#: A table row: a seat row without the session (ip, device).
TableRow = tuple[str, int, str, int, int, int]

DetectorFlag = (
    PairFlag
    | FlowFlag
    | SessionCluster
    | SameTableLink
    | BoostFlag
    | SoftPlayFlag
    | TogetherFlag
    | FedFlag
    | KeptFlag
)

#: No soft-play result: an in-memory audit given no chances (a window without move logs).
NO_SOFTPLAY = SoftPlayResult(flags=(), family_size=0)


@dataclass(frozen=True, slots=True)
class AuditParams:
    """The detectors' parameters; the defaults are the detectors' own."""

    #: The Benjamini-Hochberg level of co-seating, boosting and soft play.
    q: float = 0.01
    #: The level of the pair tests read from results (point flow, "better together", the
    #: fed account, the cards kept): under the global null BH holds each family's chance of
    #: any flag on an honest week to it.
    pair_q: float = 0.01
    max_degree: int = DEFAULT_MAX_DEGREE
    min_games: int = 10
    min_common_hours: int = 2
    min_shared_wins: int = 5
    min_segment: int = 10
    window: int = 10
    min_hour_shift: float = 6.0
    #: Boosting estimates its day ICC from at least this many other players of its family.
    day_family: int = DAY_FAMILY
    min_chances: int = 5
    #: The days before the window the database audit reads as its history: boosting's
    #: owner baseline and more games of the pairs the window's pair tests test (the
    #: in-memory audit is given its history's observations).
    history_days: int = 7


@dataclass(frozen=True, slots=True)
class AuditOutcome:
    """Everything one audit found, with the sizes and timings of its work."""

    coseating: CoseatingResult
    pointflow: PointflowResult
    sessions: SessionsResult
    boosting: BoostingResult
    flags: dict[str, DetectorFlag]
    softplay: SoftPlayResult
    together: TogetherResult
    fed: FedResult
    kept: KeptResult
    triage: Triage
    tables: int
    seats: int
    players: int
    seconds: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Found:
    """The detectors' results over one window (soft play only where logs were read)."""

    coseating: CoseatingResult
    pointflow: PointflowResult
    sessions: SessionsResult
    boosting: BoostingResult
    together: TogetherResult
    fed: FedResult
    kept: KeptResult
    softplay: SoftPlayResult = NO_SOFTPLAY


#: A :class:`SessionObs` from its five fields, without the named tuple's argument handling.
_session = partial(tuple.__new__, SessionObs)


def tables_from(rows: Iterable[TableRow]) -> list[TableObs]:
    """Group table rows (game order, seat order within a game) into tables: the games of
    two or more seats, as the SQL count has them (a game with one seat left in the window,
    the others voided, has nothing to share, feed or expect). The rows hold one seat per
    player and game (the database's constraint, and the simulator's), so the tables are
    built without :class:`TableObs`'s checks."""
    tables: list[TableObs] = []
    game: str | None = None
    hour = 0
    players: list[str] = []
    hands: list[int] = []
    scores: list[int] = []
    cards: list[int] = []

    # One object per distinct player, hour, score, and tuple of winners or of cards: the
    # rows bring new ones per seat, and the pair tests keep every table of their players
    # (441 bytes a table with this, 667 without, measured with tracemalloc).
    known: dict[Any, Any] = {}
    keep = known.setdefault

    def close() -> None:
        if game is None or len(players) < 2:
            return
        best = max(scores)
        winners = tuple(i for i, score in enumerate(scores) if score == best)
        tables.append(
            trusted_table(
                (
                    game,
                    hour,
                    tuple(players),
                    tuple(hands),
                    tuple(scores),
                    keep(winners, winners),
                    keep((kept := tuple(cards)), kept),
                )
            )
        )

    for game_id, hour_of, player, hand, score, count in rows:
        if game_id != game:
            close()
            game, hour = game_id, keep(hour_of, hour_of)
            players, hands, scores, cards = [], [], [], []
        players.append(keep(player, player))
        hands.append(hand)
        scores.append(keep(score, score))
        cards.append(count)
    close()
    return tables


def observations(rows: Iterable[SeatRow]) -> tuple[list[TableObs], list[SessionObs]]:
    """Group seat rows (game order, seat order within a game) into tables
    (:func:`tables_from`) and sessions (every seat)."""
    sessions: list[SessionObs] = []
    # One object per distinct player, address and device, as in the tables.
    known: dict[str | None, str] = {}
    keep = known.setdefault

    def seats() -> Iterator[TableRow]:
        game = ""  # one object per game: its first row's id
        for game_id, hour, player, hand, score, ip, device, kept in rows:
            if game_id != game:
                game = game_id
            seat = (game, keep(player, player), keep(ip, ip or ""), keep(device, device or ""))
            sessions.append(_session((*seat, hour)))
            yield game, hour, seat[1], hand, score, kept

    return tables_from(seats()), sessions


def _expected(skills: Sequence[float], seat: int) -> float:
    """The expected score of ``seat``: its player's skill minus the mean of the other
    players' skills at the table (see the module docstring)."""
    return skills[seat] - sum([*skills[:seat], *skills[seat + 1 :]]) / (len(skills) - 1)


def window_skills(tables: Iterable[TableObs]) -> dict[str, float]:
    """Each player's skill: the mean game score at these tables."""
    totals: dict[str, int] = {}
    counts: dict[str, int] = {}
    for table in tables:
        for player, score in zip(table.players, table.scores, strict=True):
            if player in totals:
                totals[player] += score
                counts[player] += 1
            else:
                totals[player], counts[player] = score, 1
    return {player: totals[player] / counts[player] for player in totals}


def skill_expectation(tables: Iterable[TableObs]) -> Callable[[TableObs], list[float]]:
    """The expected score of each seat of a table, with the skills of these tables
    (:func:`window_skills`; 0 for a player not at them)."""
    skill = window_skills(tables)

    def expected(table: TableObs) -> list[float]:
        skills = [skill.get(p, 0.0) for p in table.players]
        return [_expected(skills, seat) for seat in range(len(skills))]

    return expected


#: A seat of a player boosting tests, as the database audit reads it: game id, hour bucket,
#: player, game score, ip, device, and the table's players in seat order as keys of the
#: window's skills, with the player's own key.
PlayerSeat = tuple[str, int, str, int, str | None, str | None, Sequence[int], int]


def seat_residuals(
    seats: Iterable[PlayerSeat], skill: Mapping[int, float]
) -> tuple[dict[str, list[tuple[str, float]]], list[SessionObs]]:
    """Per player, ``(game id, score - expected)`` in the order of ``seats`` (give each
    player's seats in play order), and the seats' sessions: what
    :func:`~integrity.domain.boosting.residual_series` and :func:`observations` give for
    those players from their whole tables, with ``skill`` the window's skills (0 for a
    player without one)."""
    residuals: dict[str, list[tuple[str, float]]] = {}
    sessions: list[SessionObs] = []
    series: list[tuple[str, float]] = []
    current: str | None = None
    for game_id, hour, player, score, ip, device, table, key in seats:
        if player != current:
            current = player
            series = residuals.setdefault(player, [])
        skills = [skill.get(k, 0.0) for k in table]
        series.append((game_id, score - _expected(skills, table.index(key))))
        sessions.append(_session((game_id, player, ip or "", device or "", hour)))
    return residuals, sessions


def boosting_series(
    tables: Sequence[TableObs], history: Sequence[TableObs] = ()
) -> tuple[dict[str, list[tuple[str, float]]], dict[str, int]]:
    """Per player of ``tables``, the residuals of the ``history`` tables (before the window)
    followed by those of the window's, all with the window's skills; and how many of each
    player's come from the history (players without any left out)."""
    expected = skill_expectation(tables)
    residuals = residual_series(tables, expected)
    if not history:
        return residuals, {}
    return with_history(residual_series(history, expected), residuals)


def with_history(
    before: Mapping[str, list[tuple[str, float]]], residuals: dict[str, list[tuple[str, float]]]
) -> tuple[dict[str, list[tuple[str, float]]], dict[str, int]]:
    """Each series of ``residuals`` preceded, in place, by the player's series ``before``
    the window; returned with the lengths of those (players without any left out)."""
    counts = {player: len(before[player]) for player in residuals if before.get(player)}
    for player in counts:
        residuals[player] = [*before[player], *residuals[player]]
    return residuals, counts


def boosting_of(
    residuals: Mapping[str, Sequence[tuple[str, float]]],
    sessions: Iterable[SessionObs],
    params: AuditParams,
    history: Mapping[str, int] | None = None,
) -> BoostingResult:
    """Boosting over these residual series (``history[player]`` of a series' games before
    the window) and sessions with the audit's parameters."""
    return detect_boosting(
        residuals,
        sessions,
        history=history,
        q=params.q,
        min_segment=params.min_segment,
        window=params.window,
        min_hour_shift=params.min_hour_shift,
        day_family=params.day_family,
    )


def pointflow_of(
    tables: Sequence[TableObs],
    coseating: CoseatingResult,
    params: AuditParams,
    history: Sequence[TableObs] = (),
) -> PointflowResult:
    """Run point flow over the window's ``tables`` (at least every game of the feeders it
    tests) and its ``history`` (at least every earlier game of the same players), the pairs
    co-seating discovered being no strangers to each other's partners."""
    return detect_pointflow(
        tables,
        q=params.pair_q,
        min_shared_wins=params.min_shared_wins,
        queued=[flag.players for flag in coseating.flags],
        history=history,
    )


def _sharing(coseating: CoseatingResult, params: AuditParams) -> list[tuple[str, str]]:
    """The pairs co-seating discovered with ``>= min_shared_wins`` tables together: the
    families of the pair tests on co-seating's discoveries."""
    return [f.players for f in coseating.flags if f.shared >= params.min_shared_wins]


def together_of(
    tables: Sequence[TableObs],
    coseating: CoseatingResult,
    params: AuditParams,
    skills: Mapping[str, float],
) -> TogetherResult:
    """Run "better together than apart" over the pairs co-seating discovered with
    ``>= min_shared_wins`` tables together (``tables``: at least every game of their
    players in the window and, when read, its history), each player tested with as many
    games apart, the strangers weighed by their strengths
    (:func:`~integrity.domain.strengths.luce_strengths` of the window's ``skills``, fitted
    to the tables of the pairs' players)."""
    pairs = _sharing(coseating, params)
    paired = {player for pair in pairs for player in pair}
    theirs = [table for table in tables if not paired.isdisjoint(table.players)]
    return detect_together(
        theirs,
        pairs,
        q=params.pair_q,
        min_shared=params.min_shared_wins,
        min_apart=params.min_shared_wins,
        strengths=luce_strengths(skills, theirs) if pairs else {},
    )


def fed_of(
    tables: Iterable[TableObs], coseating: CoseatingResult, params: AuditParams
) -> FedResult:
    """Run the fed-account test over the groups of the pairs co-seating discovered with
    ``>= min_shared_wins`` tables together (``tables``: at least every game of their
    players in the window and, when read, its history)."""
    pairs = _sharing(coseating, params)
    return detect_fed(tables, pairs, q=params.pair_q, min_shared_wins=params.min_shared_wins)


def kept_of(
    tables: Iterable[TableObs], coseating: CoseatingResult, params: AuditParams
) -> KeptResult:
    """Run the cards-kept test over the pairs co-seating discovered with
    ``>= min_shared_wins`` tables together (``tables``: at least every game of their
    players in the window and, when read, its history)."""
    pairs = _sharing(coseating, params)
    return detect_kept(tables, pairs, q=params.pair_q, min_shared=params.min_shared_wins)


def flag_ref(flag: DetectorFlag) -> str:
    """The stable reference of a detector's flag (see the module docstring)."""
    if isinstance(flag, PairFlag):
        return f"coseating:{flag.players[0]}|{flag.players[1]}"
    if isinstance(flag, FlowFlag):
        return f"pointflow:{flag.feeder}>{flag.beneficiary}"
    if isinstance(flag, SessionCluster):
        return "sessions:" + "|".join(flag.players)
    if isinstance(flag, SameTableLink):
        a, b = flag.players
        return f"same_table:{flag.game_id}:{a}|{b}:{flag.kind}:{flag.identifier}"
    if isinstance(flag, SoftPlayFlag):
        return f"softplay:{flag.actor}>{flag.target}"
    if isinstance(flag, TogetherFlag):
        return f"together:{flag.players[0]}|{flag.players[1]}"
    if isinstance(flag, FedFlag):
        return f"fed:{flag.account}"
    if isinstance(flag, KeptFlag):
        return f"kept:{flag.players[0]}|{flag.players[1]}"
    return f"boosting:{flag.player}"


def audit(
    tables: list[TableObs],
    sessions: list[SessionObs],
    params: AuditParams | None = None,
    chances: Iterable[Chance] | None = None,
    history: tuple[list[TableObs], list[SessionObs]] | None = None,
) -> AuditOutcome:
    """Run the detectors over one window's observations and propose cases; soft play too
    when the window's chances (read from its move logs) are given. The window's ``history``
    (the observations of the games before it), when given, is boosting's owner baseline and
    part of the games point flow, "better together" and the fed accounts test the window's
    pairs on (module docstring)."""
    params = params or AuditParams()
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    before, before_sessions = history or ([], [])
    residuals, counts = boosting_series(tables, before)
    boosting = boosting_of(residuals, [*before_sessions, *sessions], params, counts)
    seconds["boosting"] = time.perf_counter() - started

    started = time.perf_counter()
    coseating = detect_coseating(
        tables,
        q=params.q,
        min_games=params.min_games,
        min_common_hours=params.min_common_hours,
    )
    seconds["coseating"] = time.perf_counter() - started
    softplay = NO_SOFTPLAY
    if chances is not None:
        started = time.perf_counter()
        softplay = detect_softplay(
            chances,
            q=params.q,
            min_chances=params.min_chances,
            queued=[flag.players for flag in coseating.flags],
        )
        seconds["softplay"] = time.perf_counter() - started
    started = time.perf_counter()
    pointflow = pointflow_of(tables, coseating, params, before)
    seconds["pointflow"] = time.perf_counter() - started
    started = time.perf_counter()
    paired = [*before, *tables]
    together = together_of(paired, coseating, params, window_skills(tables))
    seconds["together"] = time.perf_counter() - started
    started = time.perf_counter()
    fed = fed_of(paired, coseating, params)
    seconds["fed"] = time.perf_counter() - started
    started = time.perf_counter()
    kept = kept_of(paired, coseating, params)
    seconds["kept"] = time.perf_counter() - started
    started = time.perf_counter()
    shared = detect_sessions(sessions, max_degree=params.max_degree)
    seconds["sessions"] = time.perf_counter() - started

    return outcome(
        Found(coseating, pointflow, shared, boosting, together, fed, kept, softplay),
        tables=len(tables),
        seats=len(sessions),
        players=len({obs.player for obs in sessions}),
        seconds=seconds,
    )


def outcome(
    found: Found, *, tables: int, seats: int, players: int, seconds: dict[str, float]
) -> AuditOutcome:
    """The audit's outcome from its detectors' results: their flags by reference and the
    cases proposed over them (the case proposal's time added to ``seconds``)."""
    every: list[DetectorFlag] = [
        *found.coseating.flags,
        *found.pointflow.flags,
        *found.sessions.clusters,
        *found.sessions.links,
        *found.boosting.flags,
        *found.softplay.flags,
        *found.together.flags,
        *found.fed.flags,
        *found.kept.flags,
    ]
    flags = {flag_ref(flag): flag for flag in every}
    started = time.perf_counter()
    as_protocol: dict[str, Flag] = dict(flags)
    triage = propose_cases(as_protocol)
    seconds["cases"] = time.perf_counter() - started
    return AuditOutcome(
        coseating=found.coseating,
        pointflow=found.pointflow,
        sessions=found.sessions,
        boosting=found.boosting,
        flags=flags,
        softplay=found.softplay,
        together=found.together,
        fed=found.fed,
        kept=found.kept,
        triage=triage,
        tables=tables,
        seats=seats,
        players=players,
        seconds=seconds,
    )
