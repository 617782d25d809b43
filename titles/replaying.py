"""Replaying the ledger into the title state it implies (SPEC §6), no writes.

A player's title state is :func:`titles.domain.replay.replay` of their approved,
non-voided qualifications (:func:`approved`). This module reads those rows, replays them
(:func:`plan`) and says what the materialisation should show for one player on a day: the
status (:func:`status_of`), the history entries (:func:`changes_of`, which adds the lapse of
the last term once its day has come), each term's state and JSON. :func:`fingerprint`
hashes a replay so that an unchanged player is recognised without reading their terms or
history (the rule is in :mod:`titles.recompute`).
"""

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from functools import partial
from itertools import groupby
from operator import itemgetter
from typing import Any

from django.db import connection
from django.db.models import Q, QuerySet

from titles.domain.replay import LAPSED, Term, TitleHistory, replay
from titles.domain.replay import Qualification as Replayed
from titles.models import Qualification, QualificationStatus, TermState, TitleStatus, TitleTerm

#: (kind, on, source, valid_until, note): what makes two history entries the same change.
ChangeKey = tuple[str, date, str, date | None, str]
#: A ``PlayerTitle`` as read or locked: (status, fingerprint).
Locked = tuple[str, int | None]
Row = tuple[Any, ...]

NO_HISTORY = replay(())
ONE_DAY = timedelta(days=1)
_SEP = "\0"


def fingerprint(history: TitleHistory) -> int:
    """A 64-bit hash of a replay's output — every change, every term, Lifetime — that is
    the same in every process (``hash()`` is not)."""
    parts = [
        f"{kind}{_SEP}{on.toordinal()}{_SEP}{source}{_SEP}"
        f"{valid_until.toordinal() if valid_until is not None else ''}{_SEP}{reason}"
        for kind, on, source, valid_until, reason in history.changes
    ]
    parts += [
        f"{t.start.toordinal()}{_SEP}{t.valid_until.toordinal()}{_SEP}{_SEP.join(t.sources)}"
        for t in history.terms
    ]
    if history.lifetime_since is not None:
        parts.append(str(history.lifetime_since.toordinal()))
    digest = hashlib.blake2b("\1".join(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


#: The fingerprint of a player with no approved qualification.
EMPTY = fingerprint(NO_HISTORY)


@dataclass(frozen=True, slots=True)
class Read:
    """What a replay of some players starts from: their title rows as read (or locked),
    their approved qualifications (rows of :func:`approved`), players with stale terms."""

    titles: dict[int, Locked]
    qualifications: list[Row]
    stale: set[int]


@dataclass(frozen=True, slots=True)
class Plan:
    """A replay of some players: ``replays`` holds (player, history, status, fingerprint)
    of those whose materialisation may differ, in player id order."""

    titles: dict[int, Locked]
    replays: list[tuple[int, TitleHistory, str, int]]


def fetch(query: QuerySet[Any, Any]) -> list[Row]:
    """All rows of a ``values_list`` query as the driver returns them (no per-row ORM)."""
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows: list[Row] = cursor.fetchall()
        return rows


def by_range(rows: Iterable[Row], ends: list[int]) -> Iterator[list[Row]]:
    """The rows (ordered by the player id they start with) below each of ``ends`` in turn."""
    pending = iter(rows)
    row = next(pending, None)
    for end in ends:
        taken = []
        while row is not None and row[0] < end:
            taken.append(row)
            row = next(pending, None)
        yield taken


def approved() -> QuerySet[Any, Any]:
    """Approved qualifications by player; in any order within a player (the replay orders
    them), which spares the database a sort on the date and the source."""
    return (
        Qualification.objects.filter(status=QualificationStatus.APPROVED)
        .order_by("player_id")
        .values_list("player_id", "source", "on", "confers", "requires_valid_master")
    )


def stale(today: date, where: Q | None = None) -> set[int]:
    """Players with a term whose state is not today's: ended but ``current`` (the expiry
    sweep has not reached it) or ``lapsed`` but valid today."""
    rows = TitleTerm.objects.filter(
        Q(state=TermState.CURRENT, valid_until__lt=today)
        | Q(state=TermState.LAPSED, valid_until__gte=today)
    )
    if where is not None:
        rows = rows.filter(where)
    return {pid for (pid,) in fetch(rows.values_list("player_id"))}


def histories(rows: list[Row]) -> dict[int, TitleHistory]:
    """Replay each player of ``rows`` (rows of :func:`approved`, grouped by player)."""
    return {player_id: _replay(group) for player_id, group in groupby(rows, key=itemgetter(0))}


def _replay(rows: Iterable[Row]) -> TitleHistory:
    """Replay one player's rows of :func:`approved`. The rows skip the domain's argument
    checks (:func:`_make`): the ledger's constraints hold what they check — a date, a
    non-empty source, ``confers`` master or lifetime."""
    return replay(map(_make, rows))


#: A ``Qualification`` built straight from a row's fields after the player id, as
#: ``tuple.__new__``: ``approved`` selects exactly those four fields, in their order.
_new_qualification = partial(tuple.__new__, Replayed)


def _make(row: Row) -> Replayed:
    return _new_qualification(row[1:])


def plan(read: Read, today: date) -> Plan:
    """Replay the players read (no database). A player whose fingerprint and status match
    and whose terms' states are today's is unchanged (:mod:`titles.recompute`)."""
    replayed = histories(read.qualifications)
    replays = []
    for pid in sorted(read.titles.keys() | replayed.keys()):
        history = replayed.get(pid, NO_HISTORY)
        status, digest = status_of(history, today), fingerprint(history)
        if read.titles.get(pid) != (status, digest) or pid in read.stale:
            replays.append((pid, history, status, digest))
    return Plan(titles=read.titles, replays=replays)


# --- the desired state ----------------------------------------------------------------------


def status_of(history: TitleHistory, today: date) -> str:
    """The ``PlayerTitle.status`` of a replay on ``today``: ``lapsed`` once the last term
    has ended without Lifetime."""
    status = history.status_on(today)
    if status == TitleStatus.NONE and history.terms and history.terms[-1].valid_until < today:
        return TitleStatus.LAPSED.value
    return status


def changes_of(history: TitleHistory, today: date) -> list[ChangeKey]:
    """The replay's changes, and the lapse of the last term once its day has come (earlier
    lapses are in the replay's changes)."""
    keys: list[ChangeKey] = list(history.changes)  # a Change is that tuple
    last = history.terms[-1] if history.terms else None
    if last is not None and last.valid_until < today:
        lapse = (LAPSED, last.valid_until + ONE_DAY, last.sources[-1], last.valid_until, "")
        keys.append(lapse)
        if len(keys) > 1 and keys[-2][1] > lapse[1]:
            keys.sort(key=itemgetter(1))  # stable: by day, then replay order
    return keys


def term_state(term: Term, today: date) -> str:
    return TermState.CURRENT if term.valid_until >= today else TermState.LAPSED


_quote = json.encoder.encode_basestring_ascii


def json_list(items: Iterable[str]) -> str:
    """JSON text of a list of strings (as ``json.dumps`` writes it, a few times faster)."""
    return f"[{', '.join(map(_quote, items))}]"


def shown_term(term: Term, sources: str, code: str) -> str:
    """JSON text of a term as ``PlayerTitle.terms`` lists it; ``sources`` is JSON text."""
    return (
        f'{{"start": "{term.start.isoformat()}", '
        f'"valid_until": "{term.valid_until.isoformat()}", '
        f'"sources": {sources}, "code": {_quote(code)}}}'
    )
