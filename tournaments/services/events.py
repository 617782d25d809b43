"""Organisers change the calendar: move, add or cancel events (SPEC §1, §2).

Each change is logged (``CalendarChange``: who, when, why, before and after) in the same
transaction. Stations are the season's finals (weekly, monthly, quarterly, annual) that are
not cancelled; after every change they are re-numbered in date order, ties on one start
ordered weekly, monthly, quarterly, annual, then by code — the calendar generator's order
(``tournaments.domain.calendar``). Decision: a station's city stays with its event when the
numbers move (the city is part of the station's announced name), and a cancelled event
gives up its number (kept in the log). Finalised events cannot move or be cancelled: their
results stand, and corrections go through ``flows.corrections``.

Locks are taken in a fixed order: the season row, then the event row.
"""

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from core.domain.text import ident_problem
from core.errors import ConflictError, ServiceError
from tournaments.domain.calendar import EventKind as PlannedKind
from tournaments.domain.rules import ruleset_from_spec
from tournaments.models import CalendarChange, Event, EventKind, EventStatus, Game, Season
from tournaments.services.seasons import TITLE_ACHIEVEMENTS, event_name

#: The kinds that are stations (站), in their order on a shared start.
STATION_KINDS = tuple(kind.value for kind in PlannedKind if kind != PlannedKind.WEEKLY_QUALIFIER)
_KIND_ORDER = {kind.value: i for i, kind in enumerate(PlannedKind)}


def _need_reason(reason: str) -> None:
    if not reason.strip():
        raise ServiceError(
            "give a reason for the change",
            detail={"reason": "required"},
            say=_("变更须写明理由。"),
        )


def _need_aware(**moments: datetime) -> None:
    names = {"starts_at": _("开始时间"), "ends_at": _("结束时间")}
    for name, moment in moments.items():
        if moment.tzinfo is None or moment.utcoffset() is None:
            raise ServiceError(
                f"{name} must carry a time zone",
                detail={name: "naive"},
                say=_("%(name)s须带时区。") % {"name": names.get(name, name)},
            )


def _shown(moment: datetime) -> str:
    """A moment for people: the tour's local time to the minute (the console's form)."""
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M")


#: How far after its first day a season's events may reach: its 53 weeks, the carried
#: monthly finals of its closing week, and room for a late championship.
SEASON_REACH = timedelta(days=460)


def _check_window(starts_at: datetime, ends_at: datetime, season: Season) -> None:
    _need_aware(starts_at=starts_at, ends_at=ends_at)
    if ends_at <= starts_at:
        raise ServiceError(
            f"the window must end after it starts ({starts_at.isoformat()} → "
            f"{ends_at.isoformat()})",
            detail={"ends_at": "must be after starts_at"},
            say=_("结束时间须晚于开始时间（%(starts)s → %(ends)s）。")
            % {"starts": _shown(starts_at), "ends": _shown(ends_at)},
        )
    first = datetime.combine(season.starts_on, time(0), tzinfo=ZoneInfo(season.time_zone))
    if not (first <= starts_at and ends_at <= first + SEASON_REACH):
        raise ServiceError(
            f"the window {starts_at.isoformat()} → {ends_at.isoformat()} is outside season "
            f"{season.year} ({first.date().isoformat()} to "
            f"{(first + SEASON_REACH).date().isoformat()})",
            detail={"starts_at": "outside the season"},
            say=_("时段 %(starts)s → %(ends)s 不在 %(year)s 赛季之内（%(first)s 至 %(last)s）。")
            % {
                "starts": _shown(starts_at),
                "ends": _shown(ends_at),
                "year": season.year,
                "first": first.date().isoformat(),
                "last": (first + SEASON_REACH).date().isoformat(),
            },
        )


def _lock(event: Event) -> tuple[Season, Event]:
    season = Season.objects.select_for_update().get(pk=event.season_id)
    locked = Event.objects.select_for_update(of=("self",)).select_related("season").get(pk=event.pk)
    return season, locked


def _refuse_closed(event: Event, what: str) -> None:
    """Refuse to move or cancel (``what``: "moved", "cancelled") a finalised or cancelled
    event."""
    moving = what == "moved"
    if event.status == EventStatus.FINALISED:
        say = (
            _("赛事 %(code)s 已定结果，不能改期。")
            if moving
            else _("赛事 %(code)s 已定结果，不能取消。")
        )
        raise ConflictError(
            f"event {event.code} is finalised and cannot be {what}",
            say=say % {"code": event.code},
        )
    if event.status == EventStatus.CANCELLED:
        say = _("赛事 %(code)s 已取消，不能改期。") if moving else _("赛事 %(code)s 已经取消了。")
        raise ConflictError(
            f"event {event.code} is cancelled and cannot be {what}",
            say=say % {"code": event.code},
        )


def stations_renumber(*, season: Season) -> dict[str, list[int | None]]:
    """Number the season's stations 1… in date order; returns {code: [before, after]} of
    the stations whose number changed. Runs inside the caller's transaction."""
    events = list(
        Event.objects.filter(season=season)
        .filter(Q(kind__in=STATION_KINDS) | Q(station__isnull=False))
        .only("id", "code", "kind", "starts_at", "station", "status")
    )
    stations = sorted(
        (e for e in events if e.kind in STATION_KINDS and e.status != EventStatus.CANCELLED),
        key=lambda e: (e.starts_at, _KIND_ORDER[e.kind], e.code),
    )
    wanted: dict[int, int | None] = {e.pk: None for e in events}
    wanted.update({e.pk: number for number, e in enumerate(stations, start=1)})
    moved = [e for e in events if e.station != wanted[e.pk]]
    if not moved:
        return {}
    changes = {e.code: [e.station, wanted[e.pk]] for e in moved}
    # Two statements, so no row ever holds a number another row still holds.
    Event.objects.filter(pk__in=[e.pk for e in moved]).update(station=None)
    for event in moved:
        event.station = wanted[event.pk]
    Event.objects.bulk_update([e for e in moved if e.station is not None], ["station"])
    return changes


def event_move_check(*, event: Event, starts_at: datetime, ends_at: datetime) -> None:
    """Raise ServiceError when ``event`` cannot move to this window (the admin form and
    ``event_move`` share it)."""
    _check_window(starts_at, ends_at, event.season)
    _refuse_closed(event, "moved")
    outside = (
        Game.objects.filter(event=event, voided=False)
        .filter(Q(started_at__lt=starts_at) | Q(ended_at__gt=ends_at))
        .count()
    )
    if outside:
        raise ConflictError(
            f"event {event.code} has {outside} games outside the new window; void them "
            "first or choose a window that holds them",
            detail={"games_outside": outside},
            say=_(
                "赛事 %(code)s 有 %(n)s 局不在新时段之内：请先作废这些对局，或另选能容纳它们的"
                "时段。"
            )
            % {"code": event.code, "n": outside},
        )


def event_move(
    *, event: Event, starts_at: datetime, ends_at: datetime, by: User | None, reason: str
) -> Event:
    """Give an event a new window; the season's stations are re-numbered in date order."""
    _need_reason(reason)
    with transaction.atomic():
        season, locked = _lock(event)
        event_move_check(event=locked, starts_at=starts_at, ends_at=ends_at)
        before = (locked.starts_at.isoformat(), locked.ends_at.isoformat())
        locked.starts_at, locked.ends_at = starts_at, ends_at
        locked.save(update_fields=["starts_at", "ends_at"])
        stations = stations_renumber(season=season)
        CalendarChange.objects.create(
            season=season,
            event=locked,
            action=CalendarChange.Action.MOVE,
            by=by,
            reason=reason,
            diff={
                "starts_at": [before[0], starts_at.isoformat()],
                "ends_at": [before[1], ends_at.isoformat()],
                "stations": stations,
            },
        )
        locked.refresh_from_db()
    return locked


def event_cancel_check(*, event: Event) -> None:
    """Raise ConflictError when ``event`` cannot be cancelled (it is finalised)."""
    if event.status == EventStatus.FINALISED:
        _refuse_closed(event, "cancelled")


def event_cancel(*, event: Event, by: User | None, reason: str) -> Event:
    """Cancel an event that is not finalised; cancelling twice changes nothing."""
    _need_reason(reason)
    with transaction.atomic():
        season, locked = _lock(event)
        if locked.status == EventStatus.CANCELLED:
            return locked
        event_cancel_check(event=locked)
        locked.status = EventStatus.CANCELLED
        locked.save(update_fields=["status"])
        stations = stations_renumber(season=season)
        CalendarChange.objects.create(
            season=season,
            event=locked,
            action=CalendarChange.Action.CANCEL,
            by=by,
            reason=reason,
            diff={"status": ["scheduled", "cancelled"], "stations": stations},
        )
        locked.refresh_from_db()
    return locked


def event_add_check(
    *,
    season: Season,
    code: str,
    kind: str,
    starts_at: datetime,
    ends_at: datetime,
    event_format: str,
    feeds: Event | None,
    daily_hours: tuple[time, time] | None,
) -> None:
    """Raise ServiceError when this event cannot be added (the admin form and ``event_add``
    share it)."""
    _check_window(starts_at, ends_at, season)
    problem = ident_problem(code) or (None if len(code) <= 32 else "longer than 32 characters")
    if problem is not None:
        raise ServiceError(
            f"event code {code!r} {problem}",
            detail={"code": "invalid"},
        )
    if kind not in EventKind.values:
        raise ServiceError(f"unknown event kind {kind!r}", detail={"kind": "invalid"})
    if event_format not in Event.Format.values:
        raise ServiceError(f"unknown event format {event_format!r}", detail={"format": "invalid"})
    if feeds is not None and feeds.season_id != season.pk:
        raise ServiceError(
            f"event {feeds.code} is in another season", detail={"feeds": "other season"}
        )
    if daily_hours is not None and daily_hours[1] <= daily_hours[0]:
        raise ServiceError("daily hours must close after they open", detail={"daily_hours": ""})
    if Event.objects.filter(code=code).exists():
        raise ConflictError(f"event {code} already exists", detail={"code": code})


def event_add(
    *,
    season: Season,
    code: str,
    kind: str,
    starts_at: datetime,
    ends_at: datetime,
    by: User | None,
    reason: str,
    event_format: str = Event.Format.LEADERBOARD,
    name: str = "",
    city: str = "",
    feeds: Event | None = None,
    open_entry: bool = False,
    daily_hours: tuple[time, time] | None = None,
    champion_achievement: str | None = None,
    play_ruleset: object = None,
) -> Event:
    """Add an event with the organiser's own code; a final kind becomes a station.

    ``play_ruleset`` (a preset name or ``{"preset", "switches"}``) gives the event its own
    rules of play; None follows the season's.

    ``champion_achievement`` names the qualification rule its champion earns (default: the
    kind's, as in the calendar; e.g. "national_championship" for a championship)."""
    _need_reason(reason)
    play = None
    if play_ruleset is not None:
        try:
            play = ruleset_from_spec(play_ruleset).to_spec()
        except ValueError as exc:
            raise ServiceError(str(exc), detail={"play_ruleset": str(exc)}) from None
    with transaction.atomic():
        season = Season.objects.select_for_update().get(pk=season.pk)
        event_add_check(
            season=season,
            code=code,
            kind=kind,
            starts_at=starts_at,
            ends_at=ends_at,
            event_format=event_format,
            feeds=feeds,
            daily_hours=daily_hours,
        )
        event = Event.objects.create(
            season=season,
            code=code,
            kind=kind,
            format=event_format,
            name=name or event_name(kind, code, city),
            starts_at=starts_at,
            ends_at=ends_at,
            daily_opens=daily_hours[0] if daily_hours else None,
            daily_closes=daily_hours[1] if daily_hours else None,
            city=city,
            feeds=feeds,
            open_entry=open_entry,
            champion_achievement=(
                TITLE_ACHIEVEMENTS.get(kind, "")
                if champion_achievement is None
                else champion_achievement
            ),
            play_ruleset=play,
        )
        stations = stations_renumber(season=season)
        CalendarChange.objects.create(
            season=season,
            event=event,
            action=CalendarChange.Action.ADD,
            by=by,
            reason=reason,
            diff={
                "code": code,
                "kind": kind,
                "starts_at": starts_at.isoformat(),
                "ends_at": ends_at.isoformat(),
                "stations": stations,
                "play_ruleset": play,
            },
        )
        event.refresh_from_db()
    return event
