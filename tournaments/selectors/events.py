"""Reads of seasons, events, stations and entries (SPEC §2, §5 "the champions of every
station"), and the per-event settings services and selectors share."""

from datetime import datetime

from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from core.errors import NotFoundError
from tournaments.domain.advancement import Quota
from tournaments.models import Entry, Event, EventStatus, Season

#: Seated events rank every player who has played a table (SPEC §4 sets no minimum there).
SEATED_MINIMUM_TABLES = 1


def season_get(*, year: int) -> Season:
    try:
        return Season.objects.get(year=year)
    except Season.DoesNotExist:
        raise NotFoundError(f"no season {year}") from None


def season_list() -> QuerySet[Season]:
    return Season.objects.annotate(
        events_count=Count("events", filter=~Q(events__status=EventStatus.CANCELLED)),
        stations_count=Count(
            "events",
            filter=Q(events__station__isnull=False) & ~Q(events__status=EventStatus.CANCELLED),
        ),
    ).order_by("-year")


def window_is_open(
    status: str, starts_at: datetime, ends_at: datetime, now: datetime | None = None
) -> bool:
    """Whether an event with this status and window is live now: its window is open and it
    is neither finalised nor cancelled."""
    moment = now or timezone.now()
    return status == EventStatus.SCHEDULED and starts_at <= moment <= ends_at


def event_get(*, code: str) -> Event:
    try:
        return Event.objects.select_related("season", "feeds", "champion").get(code=code)
    except Event.DoesNotExist:
        raise NotFoundError(f"no event {code!r}") from None


def event_list(
    *, season: int | None = None, kind: str | None = None, status: str | None = None
) -> QuerySet[Event]:
    events = Event.objects.select_related("season", "feeds", "champion")
    if season is not None:
        events = events.filter(season__year=season)
    if kind:
        events = events.filter(kind=kind)
    if status:
        events = events.filter(status=status)
    return events.order_by("starts_at", "code")


def station_list(*, season: Season) -> QuerySet[Event]:
    """The season's stations (finals) in number order, with their champions."""
    return (
        Event.objects.filter(season=season, station__isnull=False)
        .exclude(status=EventStatus.CANCELLED)
        .select_related("champion")
        .order_by("station")
    )


def entry_list(*, event: Event) -> QuerySet[Entry]:
    return (
        Entry.objects.filter(event=event)
        .select_related("player", "source")
        .order_by("player__external_id")
    )


def station_title(event: Event) -> str:
    """ "第13站 南京站 冠军：小猴子" — the station, its city and, once known, its champion."""
    parts = []
    if event.station is not None:
        parts.append(f"第{event.station}站")
    parts.append(f"{event.city}站" if event.city else event.name or event.code)
    title = " ".join(parts)
    if event.champion is not None:
        title += f" 冠军：{event.champion.name}"
    return title


def event_quota(event: Event) -> Quota:
    """The quota for the event's kind (the one it was finalised with, else the season's);
    nobody advances from an event that feeds nothing (or whose kind has no quota)."""
    quota = event.rule("quotas").get(event.kind) if event.feeds_id else None
    if not quota:
        return Quota(national=0, per_province=0)
    return Quota(national=quota["national"], per_province=quota["per_province"])


def event_minimum_games(event: Event) -> int:
    """Games needed to be ranked: the season's minimum, or one table in a seated event."""
    if event.format == Event.Format.SEATED:
        return SEATED_MINIMUM_TABLES
    return int(event.rule("minimum_games"))
