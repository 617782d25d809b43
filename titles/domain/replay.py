"""Replay of a player's qualifications into their national title history (SPEC §6, Titles).

Titles: Master (大师) and Lifetime Master (终身大师). International Master (国际大师) has its
own, separate validity and is never replayed here.

The rules (seeds: 大师头衔有效期注意事项), with the decisions of SPEC §6:

* A Master term that starts with a qualification on day ``s`` and holds ``k``
  qualifications is valid through ``add_years(s, k)`` inclusive (PRC Civil Code
  Arts. 201–203, see :mod:`titles.domain.dates`), computed from ``s`` every time.
* A Master qualification dated ``d <= valid_until`` of the current term extends it
  (``k + 1``) — the last valid day itself still extends. Dated after ``valid_until`` it
  starts a new term (``s = d``, ``k = 1``); the old term stays in the history as lapsed.
* Two qualifications on the same day: the first grants, the second extends (+2 years).
* The same achievement never counts twice: one qualification per ``source``.
* A Lifetime-conferring championship (National Championship, China Masters) counts only if
  the holder's Master is valid that day; on one day, Master qualifications apply before
  Lifetime upgrades. Lifetime never expires. Without a valid Master it confers nothing
  (recorded as ``"ignored"`` with the reason), unless an admin's rule says it always
  confers: for one qualification (``requires_valid_master=False``) or for the whole replay
  (``lifetime_requires_master=False``).
* Title state is a pure function of the approved, non-voided qualifications: the caller
  passes exactly those, and a late (earlier-dated) result, a rejected grant or a voided
  qualification is handled by replaying again — an extension that depended on a removed
  qualification disappears and a later qualification may become a new term.

Decisions taken here (where SPEC §6 is silent):

* Processing order is deterministic whatever the input order: by date, then on one day
  Master qualifications before Lifetime upgrades, then by ``source`` string.
* A ``source`` that appears more than once counts once: the first in processing order is
  kept, i.e. the earliest date (and on one day the Master one). The others are listed in
  :attr:`TitleHistory.dropped` and do nothing else.
* A Lifetime-conferring qualification does **not** also extend the Master term; it only
  confers the Lifetime upgrade. (A final that is both a Master qualification and a
  Lifetime championship is passed as two qualifications with two sources.)
* After Lifetime, Master qualifications still form terms exactly as before (the registry
  keeps showing Master validity); :meth:`TitleHistory.status_on` reports ``"lifetime"``.
  A second Lifetime-conferring qualification is ``"ignored"`` (already Lifetime).
* A lapse is dated the day after the term's ``valid_until``. :attr:`TitleHistory.changes`
  logs it when a later qualification starts a new term; :meth:`TitleHistory.lapses_through`
  also reports the lapse of the last term once its day has come.

The replay is O(n log n) for the sort and O(1) per qualification after it.
Pure and stdlib-only: no Django, no clock.
"""

from __future__ import annotations

import datetime
from bisect import bisect_right
from collections.abc import Iterable
from functools import lru_cache, partial
from operator import countOf, itemgetter
from typing import NamedTuple

from titles.domain.dates import add_years

__all__ = [
    "EXTENDED",
    "GRANTED",
    "IGNORED",
    "LAPSED",
    "LIFETIME",
    "LIFETIME_CONFERRED",
    "MASTER",
    "STATUS_LIFETIME",
    "STATUS_MASTER",
    "STATUS_NONE",
    "Change",
    "Qualification",
    "Term",
    "TitleHistory",
    "replay",
]

#: What a qualification confers.
MASTER = "master"
LIFETIME = "lifetime"
CONFERS = (MASTER, LIFETIME)

#: Title status on a day, in rank order none < master < lifetime.
STATUS_NONE = "none"
STATUS_MASTER = "master"
STATUS_LIFETIME = "lifetime"

#: Kinds of :class:`Change`.
GRANTED = "granted"
EXTENDED = "extended"
LAPSED = "lapsed"
LIFETIME_CONFERRED = "lifetime"
IGNORED = "ignored"

#: Reasons for an ``"ignored"`` change.
REASON_NO_VALID_MASTER = "no valid Master title on that day"
REASON_ALREADY_LIFETIME = "already a Lifetime Master"

_ONE_DAY = datetime.timedelta(days=1)


class _QualificationFields(NamedTuple):
    source: str
    on: datetime.date
    confers: str
    requires_valid_master: bool


class Qualification(_QualificationFields):
    """One approved, non-voided qualification of one player (immutable, keyword-only).

    ``source`` identifies the achievement (e.g. ``"event:2021-nc-final"``) and is what makes
    a qualification count once; ``on`` is the date of the final that produced it (World Cup
    representation: the last day of the month); ``confers`` is :data:`MASTER` or
    :data:`LIFETIME`. ``requires_valid_master`` applies to :data:`LIFETIME` only: ``False``
    when the rule that produced it confers Lifetime even without a valid Master.

    A named tuple rather than a dataclass: a full recompute builds a million of them.
    """

    __slots__ = ()

    def __new__(
        cls,
        *,
        source: str,
        on: datetime.date,
        confers: str,
        requires_valid_master: bool = True,
    ) -> Qualification:
        if confers not in CONFERS:
            raise ValueError(f"confers must be {MASTER!r} or {LIFETIME!r}, got {confers!r}")
        if not isinstance(source, str) or not source:
            raise ValueError("source must be a non-empty string")
        if isinstance(on, datetime.datetime) or not isinstance(on, datetime.date):
            raise TypeError("on must be a calendar date (datetime.date), not a datetime")
        return tuple.__new__(cls, (source, on, confers, requires_valid_master))


class Term(NamedTuple):
    """An unbroken Master term: valid from ``start`` through ``valid_until`` inclusive.

    ``sources`` are the qualifications that make it up, in processing order; the first one
    granted the term, each further one extended it by a year:
    ``valid_until == add_years(start, count)``.

    A named tuple, like :class:`Change`: a full recompute builds hundreds of thousands.
    """

    start: datetime.date
    valid_until: datetime.date
    sources: tuple[str, ...]

    @property
    def count(self) -> int:  # type: ignore[override]  # shadows tuple.count on purpose
        """How many qualifications the term holds (``k``)."""
        return len(self.sources)

    def covers(self, day: datetime.date) -> bool:
        """Whether the term makes its holder a Master on ``day``."""
        return self.start <= day <= self.valid_until


class Change(NamedTuple):
    """One entry of the explanation log: what happened to the titles on ``on`` and why.

    ``kind`` is one of :data:`GRANTED` (a new Master term), :data:`EXTENDED`,
    :data:`LAPSED` (a term ended; ``on`` is the day after its last valid day),
    :data:`LIFETIME_CONFERRED` or :data:`IGNORED`.

    ``source`` is the qualification that caused the change; for a lapse, the last
    qualification of the term that ended. ``valid_until`` is the Master term's last valid
    day after a grant or extension, and the last valid day of the ended term for a lapse;
    ``None`` for Lifetime and ignored entries. ``reason`` explains an ignored entry.

    A named tuple: a full recompute builds over a million of them.
    """

    kind: str
    on: datetime.date
    source: str
    valid_until: datetime.date | None = None
    reason: str = ""

    def describe(self) -> str:
        """Return a one-line, human-readable account of the change."""
        on = self.on.isoformat()
        until = self.valid_until.isoformat() if self.valid_until is not None else ""
        if self.kind == GRANTED:
            return f"{on}: Master granted by {self.source}, valid until {until}"
        if self.kind == EXTENDED:
            return f"{on}: Master extended by {self.source}, valid until {until}"
        if self.kind == LAPSED:
            return f"{on}: Master lapsed (last valid day {until}, last source {self.source})"
        if self.kind == LIFETIME_CONFERRED:
            return f"{on}: Lifetime Master conferred by {self.source}"
        return f"{on}: {self.source} ignored: {self.reason}"


class TitleHistory(NamedTuple):
    """The national title history of one player, as replayed from their qualifications.

    ``qualifications`` are the counted ones in processing order; ``dropped`` the repeated
    sources that were not counted. ``terms`` are the Master terms in date order (they never
    overlap); ``changes`` is the ordered explanation log. A named tuple: one per player.
    """

    qualifications: tuple[Qualification, ...]
    terms: tuple[Term, ...]
    changes: tuple[Change, ...]
    lifetime_since: datetime.date | None = None
    lifetime_source: str | None = None
    dropped: tuple[Qualification, ...] = ()

    def term_on(self, day: datetime.date) -> Term | None:
        """Return the Master term that covers ``day``, or ``None``."""
        terms = self.terms
        index = bisect_right(terms, day, key=_term_start) - 1
        if index >= 0 and day <= terms[index].valid_until:
            return terms[index]
        return None

    def status_on(self, day: datetime.date) -> str:
        """Return ``"none"``, ``"master"`` or ``"lifetime"`` for ``day``.

        Lifetime from its day on, forever; otherwise Master when a term covers the day.
        """
        if self.lifetime_since is not None and self.lifetime_since <= day:
            return STATUS_LIFETIME
        if self.term_on(day) is not None:
            return STATUS_MASTER
        return STATUS_NONE

    def valid_until_on(self, day: datetime.date) -> datetime.date | None:
        """Return the last valid day of the Master term covering ``day``.

        ``None`` when no term covers it — even for a Lifetime Master, whose Lifetime title
        has no end.
        """
        term = self.term_on(day)
        return term.valid_until if term is not None else None

    def qualifications_behind(self, day: datetime.date) -> tuple[Qualification, ...]:
        """Answer "why was this player a Master (or Lifetime Master) on ``day``".

        Returns the qualifications of the Master term covering ``day`` (all of them, in
        order — including those dated after ``day`` that extended the same unbroken term),
        followed by the Lifetime-conferring qualification if Lifetime was held by ``day``.
        Empty when the player held no national title that day.
        """
        term = self.term_on(day)
        lifetime = self.lifetime_since is not None and self.lifetime_since <= day
        if term is None and not lifetime:
            return ()
        by_source = {q.source: q for q in self.qualifications}
        behind = [by_source[source] for source in term.sources] if term is not None else []
        if lifetime and self.lifetime_source is not None:
            behind.append(by_source[self.lifetime_source])
        return tuple(behind)

    def lapses_through(self, day: datetime.date) -> tuple[Change, ...]:
        """Return the lapses of Master terms dated on or before ``day``, in order.

        Unlike :attr:`changes`, this includes the lapse of the last term once
        ``day`` is after its ``valid_until``.
        """
        return tuple(_lapse(term) for term in self.terms if term.valid_until + _ONE_DAY <= day)


#: :func:`add_years` remembered: a replay of many players asks for the same (start, years)
#: again and again (a term's start is a qualification's date, years its count).
_valid_until = lru_cache(maxsize=1 << 16)(add_years)


def _term_start(term: Term) -> datetime.date:
    return term.start


def _lapse(term: Term) -> Change:
    return Change(LAPSED, term.valid_until + _ONE_DAY, term.sources[-1], term.valid_until)


#: Processing order when every qualification confers Master: by date, then by source.
_by_day_and_source = itemgetter(1, 0)
_source_of = itemgetter(0)
_confers_of = itemgetter(2)
#: A :class:`Change` built without the named tuple's argument handling (all five fields).
_change = partial(tuple.__new__, Change)


def _processing_order(q: Qualification) -> tuple[datetime.date, bool, str]:
    # By date; on one day Master (False) before Lifetime (True); then by source.
    return (q.on, q.confers != MASTER, q.source)


def _ordered(qualifications: Iterable[Qualification]) -> list[Qualification]:
    """The qualifications in processing order (module docstring). When all confer Master
    (nearly every player) the order is by (date, source): a sort without a Python key."""
    ordered = sorted(qualifications, key=_by_day_and_source)
    if countOf(map(_confers_of, ordered), MASTER) != len(ordered):
        ordered.sort(key=_processing_order)
    return ordered


def replay(
    qualifications: Iterable[Qualification], *, lifetime_requires_master: bool = True
) -> TitleHistory:
    """Replay one player's approved, non-voided qualifications into a :class:`TitleHistory`.

    Any input order gives the same history (see the module docstring for the processing
    order and the handling of repeated sources). With ``lifetime_requires_master=False``
    a Lifetime-conferring qualification confers Lifetime even without a valid Master.
    """
    counted = _ordered(qualifications)
    dropped: list[Qualification] = []
    if len(set(map(_source_of, counted))) != len(counted):
        ordered, counted, seen = counted, [], set()
        for q in ordered:
            if q.source in seen:
                dropped.append(q)
            else:
                seen.add(q.source)
                counted.append(q)

    terms: list[Term] = []
    changes: list[Change] = []
    append_change = changes.append
    # The current (latest) term: start, number of qualifications, last valid day, sources.
    start: datetime.date | None = None
    until: datetime.date | None = None
    count = 0
    sources: list[str] = []
    lifetime_since: datetime.date | None = None
    lifetime_source: str | None = None

    for source, on, confers, requires_valid_master in counted:
        if confers == MASTER:
            if until is not None and start is not None and on <= until:
                count += 1
                until = _valid_until(start, count)
                sources.append(source)
                append_change(_change((EXTENDED, on, source, until, "")))
            else:
                if start is not None and until is not None:
                    terms.append(Term(start, until, tuple(sources)))
                    append_change(_change((LAPSED, until + _ONE_DAY, sources[-1], until, "")))
                start, count, until, sources = on, 1, _valid_until(on, 1), [source]
                append_change(_change((GRANTED, on, source, until, "")))
        elif lifetime_since is not None:
            append_change(_change((IGNORED, on, source, None, REASON_ALREADY_LIFETIME)))
        elif (
            not lifetime_requires_master
            or not requires_valid_master
            or (until is not None and on <= until)
        ):
            lifetime_since, lifetime_source = on, source
            append_change(_change((LIFETIME_CONFERRED, on, source, None, "")))
        else:
            append_change(_change((IGNORED, on, source, None, REASON_NO_VALID_MASTER)))

    if start is not None and until is not None:
        terms.append(Term(start, until, tuple(sources)))

    return TitleHistory(
        qualifications=tuple(counted),
        terms=tuple(terms),
        changes=tuple(changes),
        lifetime_since=lifetime_since,
        lifetime_source=lifetime_source,
        dropped=tuple(dropped),
    )
