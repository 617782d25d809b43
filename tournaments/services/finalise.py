"""Finalise an event: fix its ranking, record its champion, compute who advances and record
the champion's title qualification (SPEC §4 "Finalising an event…", §2 quotas, §6).

* **Ranks** are frozen into ``Standing.rank`` / ``province_rank`` by one SQL statement with
  window functions (``ROW_NUMBER() OVER (ORDER BY …)`` and ``OVER (PARTITION BY province
  ORDER BY …)``) over the eligible rows, in the season's tie-break order
  (``tournaments.selectors.leaderboard.ranking_order_sql``). Only rows whose rank changes are
  written, so a re-freeze after a correction touches the rows that moved.
* **Champion**: the row ranked 1 (none when nobody is eligible).
* **Advancement** to the fed event with the season's quota for the event's kind: the domain
  ``advance`` (national top X ∪ each province's top Y, overlaps not back-filled) decides, over
  the candidate rows the database pre-selects with the same cut-offs. ``Standing.advanced /
  by_national / by_province`` are set and the fed event's ``Entry`` rows written (basis
  advanced, the source event, the reason from ``Basis.reason``). A player who reaches the fed
  event from two of its feeders keeps one entry, from the first feeder finalised; if that
  source later withdraws them (a correction), the entry moves to the other feeder.
* **Titles**: the champion of an event that names a qualification rule
  (``Event.champion_achievement``: monthly, quarterly and annual finals from the calendar —
  SPEC §2 — and any championship the organiser adds, e.g. the National Championship) gets
  it, recorded with ``titles.services.achievement_record`` (dated the final's last day in
  the season's time zone, source ``event:<code>:champion``); a correction that changes the
  champion withdraws it from the old one and records it for the new one.

Finalising is idempotent (the second call changes nothing) and serialised by a row lock on
the event (``select_for_update``): of two concurrent calls, one finalises and the other
finds the work done. An event whose window has not ended is refused unless the organiser
passes ``force`` (e.g. a final stopped early by the organiser).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from accounts.models import Player, User
from core.errors import ConflictError, UnavailableError
from tournaments.domain.advancement import Basis, advance, basis_for
from tournaments.models import Entry, Event, EventStatus, Standing
from tournaments.selectors.events import event_quota
from tournaments.selectors.leaderboard import ranking_order, ranking_order_sql


@dataclass(frozen=True, slots=True)
class RankedRow:
    """A frozen leaderboard row, as ``tournaments.domain.advancement`` reads it."""

    player: str
    province: str
    rank: int | None
    province_rank: int | None


@dataclass(frozen=True)
class FinaliseResult:
    event: Event
    changed: bool
    champion: Player | None
    entries: int


@dataclass
class Outcome:
    """What a (re-)freeze changed downstream: champion and advancement."""

    champion_before: str | None = None
    champion_after: str | None = None
    advanced_added: list[str] = field(default_factory=list)
    advanced_removed: list[str] = field(default_factory=list)
    entries_added: list[str] = field(default_factory=list)
    entries_removed: list[str] = field(default_factory=list)

    def as_diff(self) -> dict[str, Any]:
        return {
            "champion": {"before": self.champion_before, "after": self.champion_after},
            "advanced": {"added": self.advanced_added, "removed": self.advanced_removed},
            "entries": {"added": self.entries_added, "removed": self.entries_removed},
        }


def final_day(event: Event) -> date:
    """The day a final's result is decided: its window's last day in the season's zone."""
    return event.ends_at.astimezone(ZoneInfo(event.season.time_zone)).date()


#: UPDATE … FROM needs SQLite 3.33 (window functions: 3.25); PostgreSQL has both.
SQLITE_MINIMUM = (3, 33, 0)


def _freeze_ranks(event: Event, *, clear_ineligible: bool) -> None:
    if connection.vendor == "sqlite" and connection.Database.sqlite_version_info < SQLITE_MINIMUM:
        raise UnavailableError(
            f"freezing ranks needs SQLite {'.'.join(map(str, SQLITE_MINIMUM))} or later, "
            f"found {connection.Database.sqlite_version}"
        )
    table = connection.ops.quote_name(Standing._meta.db_table)
    rank, province_rank = (connection.ops.quote_name(c) for c in ("rank", "province_rank"))
    order = ranking_order_sql(event.season)
    with connection.cursor() as cursor:
        if clear_ineligible:
            cursor.execute(
                f"UPDATE {table} SET {rank} = NULL, {province_rank} = NULL "  # noqa: S608
                f"WHERE event_id = %s AND eligible = %s "
                f"AND ({rank} IS NOT NULL OR {province_rank} IS NOT NULL)",
                [event.pk, False],
            )
        cursor.execute(
            f"UPDATE {table} SET {rank} = r.rn, {province_rank} = r.prn FROM ("  # noqa: S608
            f"SELECT id, ROW_NUMBER() OVER (ORDER BY {order}) AS rn, "
            f"ROW_NUMBER() OVER (PARTITION BY province ORDER BY {order}) AS prn "
            f"FROM {table} WHERE event_id = %s AND eligible = %s) AS r "
            f"WHERE {table}.id = r.id AND ({table}.{rank} IS NULL OR {table}.{rank} <> r.rn "
            f"OR {table}.{province_rank} IS NULL OR {table}.{province_rank} <> r.prn)",
            [event.pk, True],
        )


def _champion(event: Event) -> Player | None:
    """The row ranked 1: the first eligible row in ranking order (read on the index)."""
    row = (
        Standing.objects.filter(event=event, eligible=True)
        .order_by(*ranking_order(event.season))
        .select_related("player")
        .first()
    )
    return row.player if row else None


def _fed_event(event: Event) -> Event | None:
    if event.feeds_id is None:
        return None
    fed = Event.objects.get(pk=event.feeds_id)
    return None if fed.status == EventStatus.CANCELLED else fed


def _bases(event: Event) -> dict[int, Basis]:
    """Who advances from ``event`` (finalised ranks), keyed by player pk."""
    quota = event_quota(event)
    if _fed_event(event) is None or (quota.national == 0 and quota.per_province == 0):
        return {}
    candidates = (
        Standing.objects.filter(event=event, eligible=True)
        .filter(Q(rank__lte=quota.national) | Q(province_rank__lte=quota.per_province))
        .values_list("player_id", "player_key", "province", "rank", "province_rank")
    )
    pks = {key: pk for pk, key, *_ in candidates}
    chosen = advance([RankedRow(*row[1:]) for row in candidates], quota)
    return {pks[key]: basis for key, basis in chosen.items()}


def _set_flags(event: Event, bases: dict[int, Basis], outcome: Outcome, *, refreeze: bool) -> None:
    """Set the advancement flags; before a first freeze nobody has advanced yet."""
    old = (
        {
            pk: (key, by_national, by_province)
            for pk, key, by_national, by_province in Standing.objects.filter(
                event=event, advanced=True
            ).values_list("player_id", "player_key", "by_national", "by_province")
        }
        if refreeze
        else {}
    )
    removed = sorted(set(old) - set(bases))
    if removed:
        Standing.objects.filter(event=event, player_id__in=removed).update(
            advanced=False, by_national=False, by_province=False
        )
    groups: dict[tuple[bool, bool], list[int]] = defaultdict(list)
    for pk, basis in bases.items():
        flags = (basis.by_national, basis.by_province)
        if old.get(pk, (None, None, None))[1:] != flags:
            groups[flags].append(pk)
    for (by_national, by_province), pks in sorted(groups.items()):
        Standing.objects.filter(event=event, player_id__in=pks).update(
            advanced=True, by_national=by_national, by_province=by_province
        )
    outcome.advanced_added = sorted(b.player for pk, b in bases.items() if pk not in old)
    outcome.advanced_removed = sorted(old[pk][0] for pk in removed)


def _other_source(fed: Event, event: Event, player_id: int) -> tuple[Event, str] | None:
    """Another finalised feeder of ``fed`` the player advanced from (the earliest), with the
    reason, to carry an entry that ``event`` no longer supports."""
    rows = (
        Standing.objects.filter(
            player_id=player_id,
            advanced=True,
            event__feeds=fed,
            event__status=EventStatus.FINALISED,
        )
        .exclude(event=event)
        .select_related("event__season", "event__feeds")
        .order_by("event__starts_at", "event__code")
    )
    for row in rows:
        basis = basis_for(
            RankedRow(row.player_key, row.province, row.rank, row.province_rank),
            event_quota(row.event),
        )
        if basis is not None:
            return row.event, basis.reason
    return None


def _sync_entries(event: Event, bases: dict[int, Basis], outcome: Outcome) -> None:
    fed = _fed_event(event)
    if fed is None:
        return
    ours = {
        entry.player_id: entry
        for entry in Entry.objects.filter(event=fed, source=event, basis=Entry.Basis.ADVANCED)
    }
    others = set(
        Entry.objects.filter(event=fed, player_id__in=list(bases))
        .exclude(pk__in=[entry.pk for entry in ours.values()])
        .values_list("player_id", flat=True)
    )
    new = [
        Entry(
            event=fed,
            player_id=pk,
            basis=Entry.Basis.ADVANCED,
            source=event,
            reason=basis.reason,
        )
        for pk, basis in sorted(bases.items())
        if pk not in ours and pk not in others
    ]
    Entry.objects.bulk_create(new)
    stale = []
    for pk, entry in ours.items():
        if pk in bases and entry.reason != bases[pk].reason:
            entry.reason = bases[pk].reason
            stale.append(entry)
    Entry.objects.bulk_update(stale, ["reason"])
    gone = sorted(pk for pk in ours if pk not in bases)
    if not gone:
        outcome.entries_added = sorted(bases[entry.player_id].player for entry in new)
        return
    Entry.objects.filter(pk__in=[ours[pk].pk for pk in gone]).delete()
    keys = dict(Player.objects.filter(pk__in=gone).values_list("pk", "external_id"))
    carried = []
    for pk in gone:
        other = _other_source(fed, event, pk)
        if other is not None:
            carried.append(
                Entry(
                    event=fed,
                    player_id=pk,
                    basis=Entry.Basis.ADVANCED,
                    source=other[0],
                    reason=other[1],
                )
            )
    Entry.objects.bulk_create(carried)
    kept = {entry.player_id for entry in carried}
    outcome.entries_added = sorted(bases[entry.player_id].player for entry in new)
    outcome.entries_removed = sorted(keys[pk] for pk in gone if pk not in kept)


def _titles(
    event: Event, before: Player | None, after: Player | None, *, by: User | None, reason: str
) -> None:
    achievement = event.champion_achievement
    if not achievement or before == after:
        return
    from titles.services import achievement_record, achievement_withdraw

    source = f"event:{event.code}:champion"
    if before is not None:
        achievement_withdraw(source=source, player=before, by=by, reason=reason)
    if after is not None:
        standing = Standing.objects.get(event=event, player=after)
        achievement_record(
            achievement=achievement,
            player=after,
            on=final_day(event),
            source=source,
            evidence={
                "event": event.code,
                "station": event.station,
                "rank": 1,
                "score": standing.total,
                "games": standing.games,
            },
            by=by,
        )


def _settle(event: Event, *, by: User | None, reason: str, refreeze: bool) -> Outcome:
    """Freeze ranks, then champion, advancement, entries and titles; ``event`` is locked."""
    before = event.champion
    _freeze_ranks(event, clear_ineligible=refreeze)
    after = _champion(event)
    outcome = Outcome(
        champion_before=before.external_id if before else None,
        champion_after=after.external_id if after else None,
    )
    bases = _bases(event)
    _set_flags(event, bases, outcome, refreeze=refreeze)
    _sync_entries(event, bases, outcome)
    event.champion = after
    event.save(update_fields=["champion"])
    _titles(event, before, after, by=by, reason=reason)
    return outcome


def event_refreeze(*, event: Event, by: User | None, reason: str) -> Outcome:
    """Re-rank a finalised event after a correction and move everything downstream.

    Runs inside the caller's transaction with ``event`` locked by the caller."""
    outcome = _settle(event, by=by, reason=reason, refreeze=True)
    Event.objects.filter(pk=event.pk).update(leaderboard_version=F("leaderboard_version") + 1)
    return outcome


def event_finalise_check(*, event: Event, force: bool, now: datetime | None = None) -> None:
    """Raise ConflictError when ``event`` cannot be finalised now (cancelled, or its window
    still open and not forced); a finalised event passes (finalising it is a no-op)."""
    if event.status == EventStatus.CANCELLED:
        raise ConflictError(f"event {event.code} is cancelled and cannot be finalised")
    if (
        event.status == EventStatus.SCHEDULED
        and not force
        and (now or timezone.now()) <= (event.ends_at)
    ):
        zone = ZoneInfo(event.season.time_zone)
        raise ConflictError(
            f"event {event.code} is still open until "
            f"{event.ends_at.astimezone(zone):%Y-%m-%d %H:%M}; an organiser may force "
            "an early finalisation",
            detail={"ends_at": event.ends_at.isoformat()},
        )


def event_finalise(
    *, event: Event, by: User | None, force: bool = False, now: datetime | None = None
) -> FinaliseResult:
    """Finalise ``event`` (SPEC §4); idempotent, one of concurrent calls does the work."""
    moment = now or timezone.now()
    with transaction.atomic():
        locked = (
            Event.objects.select_for_update(of=("self",)).select_related("season").get(pk=event.pk)
        )
        if locked.status == EventStatus.FINALISED:
            return FinaliseResult(locked, False, locked.champion, _advanced_count(locked))
        event_finalise_check(event=locked, force=force, now=moment)
        _settle(locked, by=by, reason=f"event {locked.code} finalised", refreeze=False)
        locked.status = EventStatus.FINALISED
        locked.finalised_at = moment
        locked.finalised_by = by
        locked.leaderboard_version = F("leaderboard_version") + 1
        locked.save(update_fields=["status", "finalised_at", "finalised_by", "leaderboard_version"])
        locked.refresh_from_db()
    return FinaliseResult(locked, True, locked.champion, _advanced_count(locked))


def _advanced_count(event: Event) -> int:
    fed = _fed_event(event)
    return 0 if fed is None else Entry.objects.filter(event=fed, source=event).count()
