"""Finalise an event: fix its ranking, record its champion, compute who advances and record
the champion's title qualification (SPEC §4 "Finalising an event…", §2 quotas, §6).

* **Ranking**: a finalised event accepts no new games (a correction re-runs the pieces
  below), so the order of its standings on the ranking indexes *is* its frozen ranking; no
  rank is written into the board. The leaderboard selectors number rows by their position
  in that order, as for a live event (``tournaments.selectors.leaderboard``).
* **One window query** ranks what the finalisation needs: ``leaderboard_top`` returns the
  national top X (at least the first row: the champion) and each province's top Y, with
  both ranks, from one ``ROW_NUMBER() OVER (ORDER BY …)`` / ``OVER (PARTITION BY province
  ORDER BY …)`` SELECT filtered in SQL, so a board of a million rows hands Python a few
  thousand.
* **Champion**: the row ranked 1 (none when nobody is eligible), kept on the event.
* **Rules**: the event keeps the season's result rules it is finalised with
  (``Event.ruleset``); a re-freeze after a correction reads those, whatever the season
  says since (``tournaments.services.seasons``).
* **Advancement** to the fed event with the event's quota for its kind: the domain
  ``advance`` (national top X ∪ each province's top Y, overlaps not back-filled) decides
  over those rows. Only the advancing rows are written: ``advanced / by_national /
  by_province`` and ``rank / province_rank`` — stored for advancing rows only, as the basis
  of their entry — by one prepared UPDATE per row, pipelined; and the fed event's
  ``Entry`` rows (bulk; basis advanced, the source event, the reason from
  ``Basis.reason``). A player who reaches the fed event from two of its feeders keeps one
  entry, from the first feeder finalised; if that source later withdraws them (a
  correction), the entry moves to the other feeder.
* **Titles**: the champion of an event that names a qualification rule
  (``Event.champion_achievement``) gets it; that and the event's audit and webhook are the
  other apps' part, called by ``flows.finalisation`` in the same transaction. This module
  returns what changed (``FinaliseResult``, ``Outcome``) and gives the qualification's date
  and evidence (``final_day``, ``champion_evidence``).

A re-finalisation after a correction (``event_refreeze``) diffs the champion and the
advancing set against what is stored and writes only what moved: rows that no longer
advance lose their flags and ranks, rows whose ranks or lists changed are rewritten.

Events are finalised in order: an event whose feeders (the events whose advancement writes
its entries) are not all finalised is refused, naming them, forced or not.

Finalising is idempotent (the second call changes nothing) and serialised by a row lock on
the event (``select_for_update``): of two concurrent calls, one finalises and the other
finds the work done. An event whose window has not ended is refused unless the organiser
passes ``force`` (e.g. a final stopped early by the organiser).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import Player, User
from core.errors import ConflictError
from tournaments.domain.advancement import Basis, Quota, advance, basis_for
from tournaments.models import Entry, Event, EventStatus, Season, Standing
from tournaments.selectors.events import event_quota
from tournaments.selectors.leaderboard import leaderboard_top


@dataclass(frozen=True, slots=True)
class RankedRow:
    """A stored advancing row, as ``tournaments.domain.advancement`` reads it."""

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


def _fed_event(event: Event) -> Event | None:
    if event.feeds_id is None:
        return None
    fed = Event.objects.get(pk=event.feeds_id)
    return None if fed.status == EventStatus.CANCELLED else fed


def _rank(event: Event) -> tuple[Player | None, dict[int, Basis]]:
    """The champion and who advances (bases keyed by player pk), from one window query over
    the national top X (at least 1: the champion) and each province's top Y."""
    quota = event_quota(event) if _fed_event(event) is not None else Quota(0, 0)
    top = leaderboard_top(event, national=max(quota.national, 1), per_province=quota.per_province)
    champion = Player.objects.get(pk=top[0].player_id) if top else None
    pks = {row.player: row.player_id for row in top}
    return champion, {pks[key]: basis for key, basis in advance(top, quota).items()}


def _write_bases(event: Event, bases: list[tuple[int, Basis]]) -> None:
    """Mark these players advanced, with their ranks and lists: one prepared UPDATE per row,
    sent together (psycopg pipelines ``executemany``)."""
    quote = connection.ops.quote_name
    columns = ("advanced", "rank", "province_rank", "by_national", "by_province")
    assign = ", ".join(f"{quote(column)} = %s" for column in columns)
    with connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {quote(Standing._meta.db_table)} SET {assign} "  # noqa: S608
            f"WHERE {quote('event_id')} = %s AND {quote('player_id')} = %s",
            [
                (
                    True,
                    basis.national_rank,
                    basis.province_rank,
                    basis.by_national,
                    basis.by_province,
                    event.pk,
                    pk,
                )
                for pk, basis in bases
            ],
        )


def _set_flags(event: Event, bases: dict[int, Basis], outcome: Outcome, *, refreeze: bool) -> None:
    """Write the advancing rows; on a re-freeze only those that moved, and clear the rows
    that no longer advance. Before a first freeze nobody has advanced yet."""
    old: dict[int, tuple[str, tuple[int | None, int | None, bool, bool]]] = {}
    if refreeze:
        rows = Standing.objects.filter(event=event, advanced=True).values_list(
            "player_id", "player_key", "rank", "province_rank", "by_national", "by_province"
        )
        old = {
            pk: (key, (rank, prank, national, province))
            for pk, key, rank, prank, national, province in rows
        }
    removed = sorted(set(old) - set(bases))
    if removed:
        Standing.objects.filter(event=event, player_id__in=removed).update(
            advanced=False, by_national=False, by_province=False, rank=None, province_rank=None
        )
    _write_bases(
        event,
        [
            (pk, basis)
            for pk, basis in sorted(bases.items())
            if pk not in old
            or old[pk][1]
            != (basis.national_rank, basis.province_rank, basis.by_national, basis.by_province)
        ],
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


def champion_evidence(event: Event, champion: Player) -> dict[str, Any]:
    """What the champion's title qualification records of the event (SPEC §6)."""
    standing = Standing.objects.get(event=event, player=champion)
    return {
        "event": event.code,
        "station": event.station,
        "rank": 1,
        "score": standing.total,
        "games": standing.games,
    }


def champion_source(event: Event) -> str:
    """The source the champion's title qualification is recorded under."""
    return f"event:{event.code}:champion"


def _settle(event: Event, *, refreeze: bool) -> Outcome:
    """Rank, then champion, advancement and entries; ``event`` is locked."""
    before = event.champion
    after, bases = _rank(event)
    outcome = Outcome(
        champion_before=before.external_id if before else None,
        champion_after=after.external_id if after else None,
    )
    _set_flags(event, bases, outcome, refreeze=refreeze)
    _sync_entries(event, bases, outcome)
    event.champion = after
    event.save(update_fields=["champion"])
    return outcome


def event_refreeze(*, event: Event) -> Outcome:
    """Re-finalise an event after a correction and move its champion, advancement and the
    fed event's entries; the outcome says what moved (the champion's title is the flow's).

    Runs inside the caller's transaction with ``event`` locked by the caller."""
    outcome = _settle(event, refreeze=True)
    Event.objects.filter(pk=event.pk).update(leaderboard_version=F("leaderboard_version") + 1)
    return outcome


def unfinalised_feeders(event: Event) -> list[str]:
    """The codes of the events feeding ``event`` that are not finalised yet (cancelled
    feeders feed nothing)."""
    return sorted(
        Event.objects.filter(feeds=event, status=EventStatus.SCHEDULED).values_list(
            "code", flat=True
        )
    )


def event_finalise_check(*, event: Event, force: bool, now: datetime | None = None) -> None:
    """Raise ConflictError when ``event`` cannot be finalised now (cancelled, a feeder not
    finalised — forced or not —, or its window still open and not forced); a finalised
    event passes (finalising it is a no-op)."""
    if event.status == EventStatus.CANCELLED:
        raise ConflictError(f"event {event.code} is cancelled and cannot be finalised")
    waiting = unfinalised_feeders(event)
    if event.status == EventStatus.SCHEDULED and waiting:
        verb = "is" if len(waiting) == 1 else "are"
        raise ConflictError(
            f"{event.code} cannot be finalised before {', '.join(waiting)} {verb} finalised",
            detail={"feeders": waiting},
        )
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
    """Finalise ``event`` (SPEC §4); idempotent, one of concurrent calls does the work.

    ``changed`` is false when the event was finalised already. The champion's title, the
    audit and the webhook are ``flows.finalisation.event_finalise``'s."""
    moment = now or timezone.now()
    with transaction.atomic():
        locked = (
            Event.objects.select_for_update(of=("self",)).select_related("season").get(pk=event.pk)
        )
        if locked.status == EventStatus.FINALISED:
            return FinaliseResult(locked, False, locked.champion, _advanced_count(locked))
        event_finalise_check(event=locked, force=force, now=moment)
        _settle(locked, refreeze=False)
        locked.ruleset = {name: getattr(locked.season, name) for name in Season.rule_fields}
        locked.status = EventStatus.FINALISED
        locked.finalised_at = moment
        locked.finalised_by = by
        locked.leaderboard_version = F("leaderboard_version") + 1
        locked.save(
            update_fields=[
                "ruleset",
                "status",
                "finalised_at",
                "finalised_by",
                "leaderboard_version",
            ]
        )
        locked.refresh_from_db()
    return FinaliseResult(locked, True, locked.champion, _advanced_count(locked))


def _advanced_count(event: Event) -> int:
    fed = _fed_event(event)
    return 0 if fed is None else Entry.objects.filter(event=fed, source=event).count()
