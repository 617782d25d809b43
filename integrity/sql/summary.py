"""The window's players summarised in one grouped query (SPEC §7): each player's skill (the
mean game score at the window's tables, as :func:`~integrity.domain.audit.observations`
gives it), whether boosting can test the player
(:func:`~integrity.domain.boosting.may_be_tested` on the summary) and whose history it reads,
and the eligible players active per hour, which co-seating's family size needs
(:func:`~integrity.domain.coseating.family_bound`). Equal to the same figures over the
window's observations (tests/integrity/test_audit_sql.py).

A *lone game* is a game of the window left with fewer than two seats (the others voided): no
table, only sessions; every table read leaves it out.
"""

from collections import Counter
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime

from django.db import connection

from core.domain.clock import TOUR_TZ
from integrity.domain.audit import AuditParams
from integrity.domain.boosting import may_be_tested, reads_history
from integrity.domain.data import hour_bucket
from integrity.sql.window import WORK_MEMORY, audit_transaction, streamed, window_sql
from tournaments.models import Event

#: The window's lone games: only a game with a voided seat can be one.
_LONE_SQL = """
    SELECT s.game_id, min(s.player_id) FROM tournaments_seat s
    WHERE {window} AND s.game_id IN (SELECT v.game_id FROM tournaments_seat v WHERE {voided})
    GROUP BY s.game_id HAVING count(*) < 2
"""

#: Per player at the window's tables (lone games left out), in (ended_at, game) order: the
#: games, the summed game score, whether two or more known devices and IP ranges (IPv4 /24,
#: IPv6 /48) appear, and the hour bucket of each game as one character, ``A`` + the hours
#: since the window's first bucket (``%(first)s``; at most the audit's longest window,
#: ``integrity.services.audits.LONGEST_WINDOW``, which keeps the characters below the
#: UTF-16 surrogates PostgreSQL refuses); and the player's external id (the tables' name for
#: him).
_SUMMARY_SQL = """
    SELECT summary.*, player.external_id
    FROM (
    SELECT p, count(*) AS n, sum(score) AS total,
           min(device) FILTER (WHERE device <> '')
               IS DISTINCT FROM max(device) FILTER (WHERE device <> '') AS devices,
           min(r) IS DISTINCT FROM max(r) AS ranges,
           string_agg(hr, '' ORDER BY e, g) AS hours
    FROM (
        SELECT s.player_id AS p, s.ended_at AS e, s.game_id AS g, s.score, s.device,
               network(set_masklen(s.ip, CASE family(s.ip) WHEN 4 THEN 24 ELSE 48 END)) AS r,
               chr(65 + (floor(extract(epoch from (s.ended_at AT TIME ZONE %(tz)s)) / 3600)
                         - %(first)s)::int) AS hr
        FROM tournaments_seat s
        WHERE {window} AND s.game_id <> ALL(%(lone)s::bigint[])
    ) AS seats
    GROUP BY p
    ) AS summary JOIN accounts_player player ON player.id = summary.p
"""

#: The summary's character for the window's first hour bucket.
_A = ord("A")


@dataclass(frozen=True)
class HourActivity:
    """The window's eligible players (``>= min_games`` games at its tables) and, per hour
    bucket, how many of them played then: what the co-seating family size needs
    (:func:`~integrity.domain.coseating.family_bound`)."""

    eligible: int
    active: dict[int, int]


@dataclass(frozen=True)
class WindowPlayers:
    """The window's players as :func:`window_players` summarised them: the skills by player
    id and by external id (:func:`~integrity.domain.audit.window_skills`), the ids of the
    players boosting can test and of those among them whose history it
    reads (:func:`~integrity.domain.boosting.reads_history`), the lone games left out by
    every table read, the window's seats and players (lone games included), and the hour
    activity co-seating needs."""

    skill: dict[int, float]
    skill_by_external_id: dict[str, float]
    boosting: list[int]
    history: list[int]
    lone: list[int]
    seats: int
    players: int
    activity: HourActivity


def window_players(
    *,
    window_start: datetime,
    window_end: datetime,
    event: Event | None = None,
    params: AuditParams | None = None,
) -> WindowPlayers:
    """The window's skills, the players boosting can test and the eligible players active
    per hour (module docstring), read in one grouped query (:data:`_SUMMARY_SQL`) after the
    lone games (:data:`_LONE_SQL`)."""
    params = params or AuditParams()
    first = hour_bucket(window_start)
    window, values = window_sql(window_start, window_end, event)
    voided = window_sql(window_start, window_end, event, "v", voided=True)[0]
    skill: dict[int, float] = {}
    skill_by_external_id: dict[str, float] = {}
    testable: list[int] = []
    history: list[int] = []
    least = 2 * params.min_segment
    with audit_transaction():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL jit = off")
            cursor.execute(f"SET LOCAL work_mem = '{WORK_MEMORY}'")
            # The summary reads every seat of the window: read in the table's order (a
            # bitmap or sequential scan) and sorted, not fetched one by one in player order
            # through the (event, player, ended_at) index (3x slower on 1,000,000 seats).
            cursor.execute("SET LOCAL enable_indexscan = off")
            cursor.execute(_LONE_SQL.format(window=window, voided=voided), values)
            lone = cursor.fetchall()
        lone_games = sorted({game for game, _ in lone})
        values.update(tz=TOUR_TZ.key, lone=lone_games, first=first)
        seats = len(lone)
        players = {player for _, player in lone}
        eligible = 0
        active: Counter[str] = Counter()
        with closing(streamed(_SUMMARY_SQL.format(window=window), values)) as summary:
            for player, games, total, devices, ranges, hours, name in summary:
                seats += games
                players.add(player)
                skill[player] = skill_by_external_id[name] = total / games
                if games >= params.min_games:
                    eligible += 1
                    active.update(set(hours))
                if games >= least and may_be_tested(
                    [(first + ord(hour) - _A) % 24 for hour in hours],
                    several_devices=devices,
                    several_ranges=ranges,
                    min_segment=params.min_segment,
                    window=params.window,
                    min_hour_shift=params.min_hour_shift,
                ):
                    testable.append(player)
                    if reads_history(several_devices=devices, several_ranges=ranges):
                        history.append(player)
    activity = HourActivity(eligible, {first + ord(hour) - _A: n for hour, n in active.items()})
    return WindowPlayers(
        skill, skill_by_external_id, testable, history, lone_games, seats, len(players), activity
    )
