"""Writing a replay's difference to the title materialisation (SPEC §6).

:func:`write` compares a :class:`~titles.replaying.Plan` with what ``PlayerTitle``,
``TitleTerm`` and ``TitleChange`` hold and writes only what differs, in bulk
(:mod:`titles.bulk_sql`): a title row whose status, last day, Lifetime or terms changed
(or just its fingerprint); terms created, updated, or marked ``void`` / ``revoked`` when the
replay no longer produces them; history rows the replay adds, and a ``retracted`` row for
each live one it no longer produces; a ``LifetimeTitle`` per Lifetime conferred (made
``void`` / ``revoked`` like a term when the replay no longer confers it); and, for every term
or Lifetime title that becomes void or revoked or comes back, its credential's status bit
(:mod:`titles.credentials.status`). The history rows added are announced
(:mod:`titles.announce`). A player with no title row yet gets one and all of it inserted —
the first build and the incremental replay are this one path.
"""

import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from operator import itemgetter
from typing import Any

from django.db import connection
from django.utils import timezone

from accounts.models import Player, User
from titles import bulk_sql
from titles.announce import Announced, announce, listening
from titles.credentials.status import REVOKED_STATES, status_bits_write
from titles.domain.codes import lifetime_code, term_code
from titles.domain.replay import TitleHistory
from titles.models import (
    REPLAY_KINDS,
    ChangeKind,
    LifetimeTitle,
    PlayerTitle,
    TermState,
    TitleChange,
    TitleTerm,
)
from titles.replaying import (
    ChangeKey,
    Locked,
    Plan,
    Row,
    changes_of,
    fetch,
    json_list,
    shown_term,
    term_state,
)

#: What a ``PlayerTitle`` shows: (status, valid_until, lifetime_since, terms).
Shown = tuple[str, date | None, date | None, list[dict[str, Any]]]


def lock_titles(ids: tuple[int, ...]) -> dict[int, Locked]:
    """Lock the existing ``PlayerTitle`` rows of ``ids`` (ascending) in player id order."""
    if not ids:
        return {}
    rows = (
        PlayerTitle.objects.select_for_update()
        .filter(player_id__in=ids)
        .order_by("player_id")
        .values_list("player_id", "status", "fingerprint")
    )
    return {pid: (status, digest) for pid, status, digest in fetch(rows)}


@dataclass(frozen=True, slots=True)
class _Context:
    """What every row of one write shares."""

    today: date
    vanished: str
    now: Any
    by_id: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class _Stored:
    """The materialisation of the players that have a title row: shown, terms, live history."""

    shown: dict[int, Shown]
    terms: dict[int, dict[date, Row]]
    live: dict[int, dict[ChangeKey, int]]
    external: dict[int, str]


@dataclass(slots=True)
class _Rows:
    """What one write sends, per table; a newcomer's terms and history wait in
    ``newcomers`` until its title row is in (another writer may have created it)."""

    titles: list[Row] = field(default_factory=list)
    digests: list[Row] = field(default_factory=list)
    new_titles: list[Row] = field(default_factory=list)
    terms: list[Row] = field(default_factory=list)
    new_terms: list[Row] = field(default_factory=list)
    new_changes: list[Row] = field(default_factory=list)
    newcomers: dict[int, tuple[list[Row], list[Row]]] = field(default_factory=dict)
    #: Status bits of terms: (term id, revoked).
    term_bits: list[tuple[int, bool]] = field(default_factory=list)
    #: Lifetime changes: (player id, Lifetime since before, since now, state of the old).
    lifetimes: list[tuple[int, date | None, date | None, str]] = field(default_factory=list)
    #: Newcomers whose title row this write inserted.
    inserted: set[int] = field(default_factory=set)


def write(plan: Plan, *, today: date, by: User | None, reason: str, vanished: str) -> int:
    """Write what differs between ``plan`` and the materialisation, and announce the history
    rows added; returns the number of players materialised.

    The title rows of the planned players that have one are locked (a no-op for rows
    :func:`titles.recompute.titles_lock` locked); one that changed since it was read was
    materialised by its writer and is left alone. The others are compared with their terms
    and live history. A player with approved qualifications but no title row yet (a bulk
    import, the first build) gets a row and all of it inserted; if another writer created
    the row meanwhile, that writer materialised the player and it is left alone.
    """
    locked = lock_titles(tuple(pid for pid, *_ in plan.replays if pid in plan.titles))
    replays = [
        replayed
        for replayed in plan.replays
        if replayed[0] not in plan.titles or locked.get(replayed[0]) == plan.titles[replayed[0]]
    ]
    known = {pid: locked[pid] for pid, *_ in replays if pid in locked}
    stored = _stored(tuple(known), [pid for pid, history, _, _ in replays if history.terms])
    context = _Context(
        today=today,
        vanished=vanished,
        now=connection.ops.adapt_datetimefield_value(timezone.now()),
        by_id=by.pk if by is not None else None,
        reason=reason,
    )
    rows = _Rows()
    for pid, history, status, digest in replays:
        _diff_player(pid, history, status, digest, known.get(pid), stored, rows, context)
    announce(_flush(rows))
    _write_credential_status(rows)
    return len(plan.titles) + len(rows.newcomers)


def _stored(ids: tuple[int, ...], with_terms: list[int]) -> _Stored:
    if not ids:
        return _Stored(shown={}, terms={}, live={}, external=_external_ids(with_terms))
    return _Stored(
        shown=_shown(ids),
        terms=_terms_of(ids),
        live=_live_changes_of(ids),
        external=_external_ids(with_terms),
    )


def _diff_player(
    pid: int,
    history: TitleHistory,
    status: str,
    digest: int,
    known: Locked | None,
    stored: _Stored,
    rows: _Rows,
    context: _Context,
) -> None:
    """Add one player's differences to ``rows``."""
    terms_out, changes_out = rows.new_terms, rows.new_changes
    if known is None:
        terms_out, changes_out = rows.newcomers[pid] = ([], [])
    shown_terms = _diff_terms(pid, history, stored, rows, terms_out, context)
    last = history.terms[-1] if history.terms else None
    wanted = (
        status,
        last.valid_until if last is not None else None,
        history.lifetime_since,
        f"[{', '.join(shown_terms)}]",
    )
    if known is None:
        rows.new_titles.append((pid, *wanted, digest, context.now))
    elif stored.shown[pid] != (*wanted[:3], json.loads(wanted[3])):
        rows.titles.append((pid, *wanted, digest, context.now))
    elif known[1] != digest:
        rows.digests.append((pid, digest))
    before = stored.shown[pid][2] if known is not None else None
    if before != history.lifetime_since:
        rows.lifetimes.append((pid, before, history.lifetime_since, context.vanished))
    _diff_changes(pid, history, stored.live.pop(pid, {}), changes_out, context)


def _diff_terms(
    pid: int,
    history: TitleHistory,
    stored: _Stored,
    rows: _Rows,
    new_terms: list[Row],
    context: _Context,
) -> list[str]:
    """Add the player's new and changed terms; returns the terms as ``PlayerTitle`` shows
    them (JSON text). Terms the replay no longer produces become ``context.vanished``."""
    previous = stored.terms.pop(pid, {})
    term_rows = rows.terms
    shown_terms = []
    for term in history.terms:
        sources = json_list(term.sources)
        state = term_state(term, context.today)
        row = previous.pop(term.start, None)
        if row is None:
            code = term_code(stored.external[pid], term.start)
            new_terms.append((pid, term.start, term.valid_until, sources, code, state, context.now))
        else:
            term_id, valid_until, old_sources, code, old_state = row
            if (valid_until, old_sources, old_state) != (
                term.valid_until,
                list(term.sources),
                state,
            ):
                term_rows.append((term_id, term.valid_until, sources, state, context.now))
                if old_state in REVOKED_STATES:  # back: its credential is valid again
                    rows.term_bits.append((term_id, False))
        shown_terms.append(shown_term(term, sources, code))
    for term_id, valid_until, old_sources, _, old_state in previous.values():
        if old_state not in (TermState.VOID, TermState.REVOKED):
            term_rows.append(
                (term_id, valid_until, json_list(old_sources), context.vanished, context.now)
            )
            rows.term_bits.append((term_id, True))
    return shown_terms


def _diff_changes(
    pid: int,
    history: TitleHistory,
    old_changes: dict[ChangeKey, int],
    out: list[Row],
    context: _Context,
) -> None:
    """Add a ``retracted`` row for each live entry the replay no longer produces (oldest
    first), then each replay change not yet live."""
    want = changes_of(history, context.today)
    tail = (context.by_id, context.now, context.reason)
    if old_changes:
        keep = set(want)
        retracted = ChangeKind.RETRACTED.value
        for key, change_id in sorted(old_changes.items(), key=itemgetter(1)):
            if key not in keep:
                kind, on, source, valid_until, note = key
                out.append((pid, retracted, on, valid_until, source, note, change_id, *tail))
    out.extend(
        (pid, kind, on, valid_until, source, note, None, *tail)
        for kind, on, source, valid_until, note in want
        if (kind, on, source, valid_until, note) not in old_changes
    )


def _write_credential_status(rows: _Rows) -> None:
    """Keep the players' ``LifetimeTitle`` rows and the credentials' status bits in step with
    what was just written (same transaction). A newcomer another writer materialised is
    left to that writer, as its terms are."""
    bits = [("master", term_id, value) for term_id, value in rows.term_bits]
    lifetimes = [
        change
        for change in rows.lifetimes
        if change[0] not in rows.newcomers or change[0] in rows.inserted
    ]
    if lifetimes:
        external = dict(
            Player.objects.filter(pk__in=[pid for pid, *_ in lifetimes]).values_list(
                "pk", "external_id"
            )
        )
        now = timezone.now()
        for pid, before, since, vanished in lifetimes:
            if before is not None:
                gone = LifetimeTitle.objects.filter(player_id=pid, since=before).exclude(
                    state__in=REVOKED_STATES
                )
                bits.extend(("lifetime", pk, True) for pk in gone.values_list("pk", flat=True))
                gone.update(state=vanished, updated_at=now)
            if since is not None:
                title, created = LifetimeTitle.objects.get_or_create(
                    player_id=pid,
                    since=since,
                    defaults={"code": lifetime_code(external[pid], since), "state": "current"},
                )
                if not created and title.state != TermState.CURRENT:
                    bits.append(("lifetime", title.pk, False))
                    title.state, title.updated_at = TermState.CURRENT, now
                    title.save(update_fields=["state", "updated_at"])
    status_bits_write(bits)


def _flush(rows: _Rows) -> list[Announced]:
    """Send ``rows``; returns the history rows added, to announce."""
    with bulk_sql.raw_cursor() as cursor:
        for pid in bulk_sql.insert_titles(cursor, rows.new_titles):
            rows.new_terms.extend(rows.newcomers[pid][0])
            rows.new_changes.extend(rows.newcomers[pid][1])
            rows.inserted.add(pid)
        title_columns = bulk_sql.TITLE_COLUMNS
        bulk_sql.update_rows(cursor, PlayerTitle, "player_id", title_columns, rows.titles)
        fingerprints = bulk_sql.FINGERPRINT_COLUMNS
        bulk_sql.update_rows(cursor, PlayerTitle, "player_id", fingerprints, rows.digests)
        bulk_sql.update_rows(cursor, TitleTerm, "id", bulk_sql.TERM_UPDATE_COLUMNS, rows.terms)
        bulk_sql.insert_rows(cursor, TitleTerm, bulk_sql.TERM_COLUMNS, rows.new_terms)
        ids = bulk_sql.insert_rows(
            cursor, TitleChange, bulk_sql.CHANGE_COLUMNS, rows.new_changes, ids=listening()
        )
    if not ids:
        return []
    return [
        (change_id, pid, kind, on, valid_until, source)
        for change_id, (pid, kind, on, valid_until, source, *_) in zip(
            ids, rows.new_changes, strict=True
        )
    ]


# --- reading the materialisation ------------------------------------------------------------


def _shown(ids: tuple[int, ...]) -> dict[int, Shown]:
    rows = PlayerTitle.objects.filter(player_id__in=ids).values_list(
        "player_id", "status", "valid_until", "lifetime_since", "terms"
    )
    return {pid: tuple(shown) for pid, *shown in rows}


def _external_ids(ids: list[int]) -> dict[int, str]:
    """The players' external ids (for term codes), as ``id = ANY(array)``: an IN list of
    thousands of parameters costs more to build and parse than to run."""
    if not ids:
        return {}
    table = connection.ops.quote_name(Player._meta.db_table)
    pk = connection.ops.quote_name(Player._meta.pk.column)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {pk}, external_id FROM {table} WHERE {pk} = ANY(%s)",  # noqa: S608
            [ids],
        )
        return dict(cursor.fetchall())


def _terms_of(ids: tuple[int, ...]) -> dict[int, dict[date, Row]]:
    """(id, valid_until, sources, code, state) of each term, by player and start."""
    terms: dict[int, dict[date, Row]] = defaultdict(dict)
    rows = TitleTerm.objects.filter(player_id__in=ids).values_list(
        "player_id", "start", "id", "valid_until", "sources", "code", "state"
    )
    for pid, start, *term in rows:
        terms[pid][start] = tuple(term)
    return terms


def _live_changes_of(ids: tuple[int, ...]) -> dict[int, dict[ChangeKey, int]]:
    """The history entries of replay kinds that no later entry retracted."""
    live: dict[int, dict[ChangeKey, int]] = defaultdict(dict)
    rows = TitleChange.objects.filter(
        player_id__in=ids, kind__in=REPLAY_KINDS, retraction__isnull=True
    ).values_list("id", "player_id", "kind", "on", "source", "valid_until", "note")
    for change_id, pid, kind, on, source, valid_until, note in fetch(rows):
        live[pid][(kind, on, source, valid_until, note)] = change_id
    return live
