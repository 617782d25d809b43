"""Materialise title state from the replay of the ledger (SPEC §6).

Title state is a pure function of a player's approved, non-voided qualifications replayed in
date order (:func:`titles.domain.replay.replay`). Every service that changes the ledger locks
the players' :class:`~titles.models.PlayerTitle` rows first (:func:`titles_lock`: existing
rows in player id order, then missing rows inserted in player id order), changes the ledger,
and calls :func:`titles_recompute` in the same transaction. It replays the players
(:mod:`titles.replaying`) and writes only what differs from the previous materialisation
(:mod:`titles.writing`):

* ``PlayerTitle`` (status as of today in Asia/Shanghai, latest ``valid_until``, Lifetime,
  terms) when any of it changed;
* ``TitleTerm`` rows by term start — created, updated, or marked ``void`` / ``revoked``
  when the replay no longer produces them (their code keeps verifying, as no longer valid);
* ``TitleChange`` history: each replay change (granted, extended, lapsed — including the
  lapse of the last term once its day has come —, lifetime, ignored) that is not yet live in
  the history is added, and each live one the replay no longer produces gets a
  ``retracted`` row. A recompute with no change writes nothing.

**Fingerprint.** ``PlayerTitle.fingerprint`` is a 64-bit hash of the replay output the
player was last materialised from (:func:`fingerprint`: changes, terms, Lifetime; never the
day). A player whose replay hashes the same, whose stored status is today's and none of
whose terms has a state other than today's is unchanged: their terms and history are not
even read. This holds because only this module writes terms and replay history, always
with the fingerprint, and the one other writer, the expiry sweep
(:func:`titles.services.titles_expire`), changes only what the last two checks look at
(``current`` → ``lapsed``, the status, and the lapse in the history).

:func:`titles_recompute_all` replays every player, streaming the qualifications, and gives
players who have approved qualifications but no title row yet (a bulk import, the first
build) one, through the same path.

The history rows added are announced in the same transaction (:mod:`titles.announce`;
``flows.titles`` sends partner webhooks from them).
"""

from collections.abc import Iterable
from datetime import date

from django.db import transaction
from django.db.models import Max, Min, Q

from accounts.models import User
from core import collector
from core.clock import tour_today
from titles.domain.replay import TitleHistory
from titles.models import PlayerTitle, Qualification, TermState
from titles.replaying import (
    EMPTY,
    NO_HISTORY,
    Locked,
    Read,
    approved,
    by_range,
    fetch,
    fingerprint,
    histories,
    plan,
    stale,
)
from titles.writing import lock_titles, write

__all__ = [
    "CHUNK",
    "STREAM_CHUNK",
    "fingerprint",
    "player_history",
    "titles_lock",
    "titles_recompute",
    "titles_recompute_all",
]

#: Players per transaction of :func:`titles_recompute_all`.
CHUNK = 5000
#: Qualification rows per fetch from the server-side cursor.
STREAM_CHUNK = 50_000


def titles_lock(player_ids: Iterable[int]) -> dict[int, Locked]:
    """Lock the players' ``PlayerTitle`` rows, creating the missing ones; returns their
    status and fingerprint, to pass to :func:`titles_recompute`.

    Call inside a transaction, before touching the players' qualifications: it is the
    first lock every titles write takes. Existing rows are locked first, in player id
    order, then missing rows are inserted and locked in player id order — the same two
    phases as :func:`titles_recompute_all`, so no two writers deadlock. A missing row is
    the materialisation of no qualifications: status ``none``, the empty replay's
    fingerprint.
    """
    ids = tuple(sorted(set(player_ids)))
    locked = lock_titles(ids)
    missing = tuple(pid for pid in ids if pid not in locked)
    if missing:
        PlayerTitle.objects.bulk_create(
            [PlayerTitle(player_id=pid, fingerprint=EMPTY) for pid in missing],
            ignore_conflicts=True,
        )
        locked.update(lock_titles(missing))
    return locked


def player_history(player_id: int) -> TitleHistory:
    """Replay one player's approved, non-voided qualifications (no lock, read only)."""
    rows = fetch(approved().filter(player_id=player_id))
    return histories(rows).get(player_id, NO_HISTORY)


def titles_recompute(
    *,
    titles: dict[int, Locked],
    by: User | None,
    reason: str,
    vanished: str = TermState.VOID,
    today: date | None = None,
) -> None:
    """Replay the players of ``titles`` (as locked by :func:`titles_lock`) and write the
    difference. ``vanished`` is the state given to terms the replay no longer produces:
    ``void``, or ``revoked`` when a sanction caused it."""
    today = today or tour_today()
    where = Q(player_id__in=sorted(titles))
    read = Read(
        titles=titles,
        qualifications=fetch(approved().filter(where)),
        stale=stale(today, where),
    )
    write(plan(read, today), today=today, by=by, reason=reason, vanished=vanished)


def titles_recompute_all(
    *, by: User | None = None, reason: str = "recompute", chunk: int = CHUNK
) -> int:
    """Replay every player with qualifications or titles; returns the number replayed.

    Reads come first, without locks: every title row (status, fingerprint) and the players
    with a term whose state is not today's, then every approved qualification in one query
    ordered by player, streamed from a server-side cursor. Players are replayed in ranges
    of ``chunk`` player ids, each written in its own transaction: it locks the title rows
    of the players to write and leaves alone those changed since they were read — their
    writer materialised them, from qualifications at least as new as the stream's.
    Idempotent: a second run writes nothing, and reads no terms or history of an
    unchanged player. On an empty materialisation every player is a newcomer: the first
    build is this same path.
    """
    today = tour_today()
    bounds = [
        model.objects.aggregate(low=Min("player_id"), high=Max("player_id"))
        for model in (Qualification, PlayerTitle)
    ]
    lows = [b["low"] for b in bounds if b["low"] is not None]
    if not lows:
        return 0
    last = max(b["high"] for b in bounds if b["high"] is not None)
    ends = list(range(min(lows) + chunk, last + chunk + 1, chunk))
    titles = fetch(
        PlayerTitle.objects.order_by("player_id").values_list("player_id", "status", "fingerprint")
    )
    stale_ids = stale(today)
    replayed = 0
    with collector.paused():
        qualifications = approved().iterator(chunk_size=STREAM_CHUNK)
        for rows, ledger in zip(
            by_range(titles, ends), by_range(qualifications, ends), strict=True
        ):
            read = Read(
                titles={pid: tuple(row) for pid, *row in rows},
                qualifications=ledger,
                stale=stale_ids,
            )
            planned = plan(read, today)
            with transaction.atomic():
                replayed += write(
                    planned, today=today, by=by, reason=reason, vanished=TermState.VOID
                )
    return replayed
