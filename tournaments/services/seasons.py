"""Seasons: create one with its calendar, and edit its ruleset as data (SPEC §2, §4, §9).

``season_create`` lays the calendar out with ``tournaments.domain.calendar.build_calendar``
and writes the season and every event (codes as SPEC §9, windows, daily hours of the
qualifiers, the feeding links, stations and their cities; weekly qualifiers enter every
player: ``open_entry``). Creating a year that exists, or a calendar whose codes are taken,
is a conflict that names them; nothing is written.

The ruleset (best N, minimum games, quotas per event kind, card table, singles scoring,
tie-break order, time zone, cities, placement points, and the rules of play
``play_ruleset``: a preset and its changed switches) is validated by the domain that reads it
(``resolve_order``, ``Quota``, ``CardTable.from_dict``, ``ruleset_from_spec``) and every
error names its field: in English for the API (``ServiceError.message``, errors by field in
its ``detail``) and for people in the active language (``ServiceError.say``: this module's
checks raise ``RuleError``, which carries both; a domain's English-only error is said by
its field, the bad switch of the rules of play by its name on the season form).
Rulesets are versioned per event: a finalised event keeps the result rules it was
finalised with (``Event.ruleset``, ``Season.rule_fields``: best N, minimum games, quotas,
card table, singles scoring, placement points), so a season change applies to the events
not yet finalised and is logged (who, when, why, before → after, the events it applies to
and those that keep theirs). A change of best N or the minimum rebuilds the standings the
unfinalised events hold; a changed card table or scoring applies to the games stored after
it, and so do changed rules of play (a stored game was checked under the rules it was
played by). The tie-break order and the time zone stay locked once an event is finalised:
every leaderboard of the season is ordered by the one order its indexes hold, and a final's day
is read in the season's zone.
"""

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any
from zoneinfo import ZoneInfo

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts.models import User
from core.errors import ConflictError, ServiceError
from tournaments.domain.advancement import Quota
from tournaments.domain.calendar import Calendar, build_calendar
from tournaments.domain.calendar import EventKind as PlannedKind
from tournaments.domain.cards import CardTable
from tournaments.domain.leaderboard import resolve_order
from tournaments.domain.rules import PRESETS, SWITCHES, ruleset_from_spec
from tournaments.models import CalendarChange, Event, EventKind, EventStatus, Season, Standing
from tournaments.services.finalise import event_refreeze
from tournaments.services.standings import standings_recompute

RULESET_FIELDS = (
    "best_n",
    "minimum_games",
    "quotas",
    "card_table",
    "singles_scoring",
    "tiebreak_order",
    "time_zone",
    "cities",
    "placement_points",
    "play_ruleset",
)
#: Fields that decide results: the versioned ones (each finalised event keeps its own)
#: and the season-wide ones, locked once an event of the season is finalised.
#: The rules of play are neither: a change applies to the games stored after it.
RESULT_FIELDS = frozenset(RULESET_FIELDS) - {"cities", "play_ruleset"}
LOCKED_FIELDS = RESULT_FIELDS - set(Season.rule_fields)
#: Fields whose change rebuilds the standings of the events not yet finalised.
STANDING_FIELDS = frozenset({"best_n", "minimum_games"})
#: Every online kind feeds the next one, so each needs a quota (SPEC §2).
QUOTA_KINDS = tuple(kind.value for kind in PlannedKind)
#: The table sizes seating makes (tournaments.domain.seating.table_sizes): 3, 4 and 5.
SEATED_TABLE_SIZES = (3, 4, 5)

#: The finals whose champion earns a Master qualification (SPEC §2): the rule key each
#: event carries in ``Event.champion_achievement`` (titles.QualificationRule.key).
TITLE_ACHIEVEMENTS = {
    "monthly_final": "monthly_champion",
    "quarterly_final": "quarterly_champion",
    "annual_final": "annual_final_champion",
}

KIND_NAMES = {
    "weekly_qualifier": "周预赛",
    "weekly_final": "周赛",
    "monthly_final": "月赛",
    "quarterly_final": "季赛",
    "annual_final": "年赛",
    "championship": "锦标赛",
    "custom": "赛事",
}


#: The ruleset fields in an organiser's words (a refusal names the field it is about).
FIELD_SAYS = {
    "best_n": gettext_lazy("计入成绩的最佳局数"),
    "minimum_games": gettext_lazy("最少局数"),
    "quotas": gettext_lazy("晋级名额"),
    "card_table": gettext_lazy("牌表"),
    "singles_scoring": gettext_lazy("单人局计分"),
    "tiebreak_order": gettext_lazy("同分排序"),
    "time_zone": gettext_lazy("时区"),
    "cities": gettext_lazy("站点城市"),
    "placement_points": gettext_lazy("名次积分"),
    "play_ruleset": gettext_lazy("玩法规则"),
}
#: The event kinds and the switches of play as the console names them (``web``'s labels).
KIND_SAYS = {
    "weekly_qualifier": gettext_lazy("周预选赛"),
    "weekly_final": gettext_lazy("周赛"),
    "monthly_final": gettext_lazy("月赛"),
    "quarterly_final": gettext_lazy("季赛"),
    "annual_final": gettext_lazy("年赛"),
    "championship": gettext_lazy("锦标赛"),
    "custom": gettext_lazy("特别赛事"),
}
SWITCH_SAYS = {
    "deck": gettext_lazy("牌组"),
    "challenge": gettext_lazy("+4 质疑"),
    "stacking": gettext_lazy("叠加"),
    "seven_zero": gettext_lazy("7-0 换牌"),
    "jump_in": gettext_lazy("抢牌"),
    "draw": gettext_lazy("摸牌"),
    "forced_play": gettext_lazy("强制出牌"),
    "multi_play": gettext_lazy("叠牌（一次出多张）"),
    "last_card_number": gettext_lazy("最后一张须为数字牌"),
    "two_player_reverse": gettext_lazy("双人时的反转"),
    "start_card": gettext_lazy("首张牌"),
    "hand_size": gettext_lazy("起手张数"),
    "turn_seconds": gettext_lazy("每回合秒数"),
    "final_minute_turn_seconds": gettext_lazy("最后一分钟每回合秒数"),
    "game_seconds": gettext_lazy("每局时限（秒）"),
}
#: The bounds ``tournaments.domain.rules`` puts on the number switches (said on refusal).
HAND_SIZES = (1, 20)
SWITCH_SECONDS = (1, 3600)


class RuleError(ValueError):
    """A refused ruleset value: ``str(exc)`` the English reason (the API's), ``say`` the
    same for people in the active language."""

    def __init__(self, message: str, say: str) -> None:
        super().__init__(message)
        self.say = say


def _kind_says(kind: object) -> str:
    return str(KIND_SAYS.get(str(kind), kind))


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _count(value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RuleError(
            f"must be an integer >= {minimum}, got {value!r}",
            _("须为不小于 %(minimum)s 的整数，填的是 %(value)s。")
            % {"minimum": minimum, "value": value},
        )
    return value


def _quotas(value: object) -> dict[str, dict[str, int]]:
    if not isinstance(value, Mapping):
        raise RuleError(
            "must map each event kind to {national, per_province}",
            _("须为每类赛事各给出全国名额和各省名额。"),
        )
    unknown = sorted(set(value) - set(EventKind.values))
    if unknown:
        raise RuleError(
            f"unknown event kinds: {', '.join(map(str, unknown))}",
            _("没有这些赛事类别：%(kinds)s。") % {"kinds": "、".join(map(str, unknown))},
        )
    missing = [kind for kind in QUOTA_KINDS if kind not in value]
    if missing:
        raise RuleError(
            f"no quota for {', '.join(missing)}",
            _("缺少这些赛事的名额：%(kinds)s。") % {"kinds": "、".join(map(_kind_says, missing))},
        )
    clean: dict[str, dict[str, int]] = {}
    for kind, quota in value.items():
        if not isinstance(quota, Mapping) or set(quota) != {"national", "per_province"}:
            raise RuleError(
                f"{kind}: give exactly national and per_province",
                _("%(kind)s：须给出全国名额和各省名额（且只给这两项）。")
                % {"kind": _kind_says(kind)},
            )
        try:
            checked = Quota(national=quota["national"], per_province=quota["per_province"])
        except ValueError as exc:
            raise RuleError(
                f"{kind}: {exc}",
                _(
                    "%(kind)s：全国名额和各省名额须为不小于 0 的整数，填的是 %(national)s 和 "
                    "%(per_province)s。"
                )
                % {
                    "kind": _kind_says(kind),
                    "national": quota["national"],
                    "per_province": quota["per_province"],
                },
            ) from None
        clean[kind] = {"national": checked.national, "per_province": checked.per_province}
    return clean


def _card_table(value: object) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise RuleError(
            "must be a card table object (name, points, copies)",
            _("须为一张牌表：名称、每种牌的分值和张数。"),
        )
    return CardTable.from_dict(value).to_dict()


def _singles_scoring(value: object) -> str:
    if value not in Season.SinglesScoring.values:
        known = ", ".join(Season.SinglesScoring.values)
        raise RuleError(
            f"unknown scoring {value!r} (known: {known})",
            _("没有 %(value)s 这种计分方式（可选：%(known)s）。")
            % {"value": value, "known": "、".join(Season.SinglesScoring.values)},
        )
    return str(value)


def _switch_says(name: str, value: object) -> str:
    """Why switch ``name`` refuses ``value``, in an organiser's words."""
    if name not in SWITCH_SAYS:
        return _("没有“%(switch)s”这个规则开关。") % {"switch": name}
    facts = {"switch": SWITCH_SAYS[name], "value": value}
    if name == "hand_size":
        low, high = HAND_SIZES
        return _("“%(switch)s”须为 %(low)s 到 %(high)s 张，填的是 %(value)s。") % {
            **facts,
            "low": low,
            "high": high,
        }
    if name.endswith("seconds"):
        low, high = SWITCH_SECONDS
        return _("“%(switch)s”须为 %(low)s 到 %(high)s 秒或不限，填的是 %(value)s。") % {
            **facts,
            "low": low,
            "high": high,
        }
    return _("“%(switch)s”不能取 %(value)s。") % facts


def _play_says(value: object) -> str:
    """Why a spec of the rules of play is refused, in an organiser's words: the unknown
    preset, or the first switch the domain refuses."""
    if not isinstance(value, Mapping):
        if isinstance(value, str):
            return _("没有“%(preset)s”这个规则预设。") % {"preset": value}
        return _("须为一个规则预设，或一个预设加上改动的开关。")
    preset = value.get("preset", "classic")
    if preset not in PRESETS:
        return _("没有“%(preset)s”这个规则预设。") % {"preset": preset}
    switches = value.get("switches") or {}
    if isinstance(switches, Mapping):
        for name, setting in switches.items():
            if name not in SWITCHES:
                return _switch_says(str(name), setting)
            try:
                ruleset_from_spec({"preset": preset, "switches": {name: setting}})
            except ValueError:
                return _switch_says(name, setting)
    return _("须为一个规则预设，或一个预设加上改动的开关。")


def _play_ruleset(value: object) -> dict[str, Any]:
    try:
        return ruleset_from_spec(value).to_spec()
    except ValueError as exc:
        raise RuleError(str(exc), _play_says(value)) from None


def _tiebreak_order(value: object) -> list[str]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise RuleError("must be a list of tie-break names", _("须为同分排序规则名的列表。"))
    return [tiebreak.name for tiebreak in resolve_order(value)]


def _time_zone(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise RuleError(
            "must name an IANA time zone, e.g. Asia/Shanghai",
            _("须填 IANA 时区名，例如 Asia/Shanghai。"),
        )
    try:
        ZoneInfo(value)
    except (ValueError, OSError, KeyError):
        raise RuleError(
            f"unknown time zone {value!r}", _("没有 %(zone)s 这个时区。") % {"zone": value}
        ) from None
    return value


def _cities(value: object) -> list[str]:
    if not isinstance(value, list | tuple) or not value:
        raise RuleError("must be a non-empty list of city names", _("须至少列出一座城市。"))
    bad = [city for city in value if not isinstance(city, str) or not city.strip()]
    if bad:
        raise RuleError(
            f"city names must be non-empty strings, got {bad[0]!r}",
            _("城市名不能为空，填的是 %(city)s。") % {"city": repr(bad[0])},
        )
    limit = Event._meta.get_field("city").max_length
    too_long = [city for city in value if limit is not None and len(city) > limit]
    if too_long:
        raise RuleError(
            f"city name {too_long[0]!r} is too long",
            _("城市名“%(city)s”太长（最多 %(limit)s 个字）。")
            % {"city": too_long[0], "limit": limit},
        )
    return [city.strip() for city in value]


def _placement_points(value: object) -> dict[str, list[int]]:
    if not isinstance(value, Mapping):
        raise RuleError(
            "must map a table size to its points per place", _("须为每种桌型各给出各名次的积分。")
        )
    sizes: dict[int, object] = {}
    for key, points in value.items():
        try:
            sizes[int(key)] = points
        except (TypeError, ValueError):
            raise RuleError(
                f"table size {key!r} is not a number",
                _("桌型 %(size)s 不是数字。") % {"size": key},
            ) from None
    wanted = set(SEATED_TABLE_SIZES)
    if set(sizes) != wanted:
        raise RuleError(
            f"give points for tables of exactly {sorted(wanted)}, got {sorted(sizes)}",
            _("须为 %(wanted)s 人桌各给出积分（且只给这些），给的是 %(got)s 人桌。")
            % {
                "wanted": "、".join(map(str, sorted(wanted))),
                "got": "、".join(map(str, sorted(sizes))),
            },
        )
    clean: dict[str, list[int]] = {}
    for size in sorted(sizes):
        points = sizes[size]
        facts = {"size": size, "points": points}
        if not isinstance(points, list | tuple) or len(points) != size:
            raise RuleError(
                f"a table of {size} needs {size} points, got {points!r}",
                _("%(size)s 人桌须给出 %(size)s 个名次的积分，给的是 %(points)s。") % facts,
            )
        if not all(_is_int(p) and p >= 0 for p in points):
            raise RuleError(
                f"table of {size}: points must be integers >= 0, got {points!r}",
                _("%(size)s 人桌：积分须为不小于 0 的整数，给的是 %(points)s。") % facts,
            )
        if any(a < b for a, b in zip(points, points[1:], strict=False)):
            raise RuleError(
                f"table of {size}: a better place never earns less, got {points!r}",
                _("%(size)s 人桌：名次靠前的积分不能更少，给的是 %(points)s。") % facts,
            )
        clean[str(size)] = list(points)
    return clean


_CLEANERS = {
    "best_n": lambda value: _count(value, 1),
    "minimum_games": lambda value: _count(value, 0),
    "quotas": _quotas,
    "card_table": _card_table,
    "singles_scoring": _singles_scoring,
    "tiebreak_order": _tiebreak_order,
    "time_zone": _time_zone,
    "cities": _cities,
    "placement_points": _placement_points,
    "play_ruleset": _play_ruleset,
}


def _ruleset_said(
    values: Mapping[str, Any],
) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    """Validate ruleset fields: (normalised values, errors by field, the same for people)."""
    clean: dict[str, Any] = {}
    errors: dict[str, str] = {}
    says: dict[str, str] = {}
    for field, value in values.items():
        cleaner = _CLEANERS.get(field)
        if cleaner is None:
            errors[field] = "not a ruleset field"
            says[field] = _("不是赛季规则的设置项。")
            continue
        try:
            clean[field] = cleaner(value)
        except (TypeError, ValueError) as exc:
            errors[field] = str(exc)
            says[field] = (
                exc.say if isinstance(exc, RuleError) else _("设置不对，请对照规则说明修改。")
            )
    return clean, errors, says


def ruleset_clean(values: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """Validate ruleset fields; returns (normalised values, errors by field name)."""
    clean, errors, _says = _ruleset_said(values)
    return clean, errors


def _checked(values: Mapping[str, Any]) -> dict[str, Any]:
    clean, errors, says = _ruleset_said(values)
    if errors:
        summary = "; ".join(f"{field}: {message}" for field, message in errors.items())
        problems = "；".join(
            _("%(field)s：%(problem)s")
            % {"field": FIELD_SAYS.get(field, field), "problem": say.rstrip("。.")}
            for field, say in says.items()
        )
        raise ServiceError(
            f"invalid ruleset: {summary}",
            detail=errors,
            say=_("赛季规则有误：%(problems)s。") % {"problems": problems},
        )
    return clean


def _codes_free(year: int, codes: Sequence[str]) -> None:
    """Refuse a calendar any of whose event codes exists already."""
    taken = sorted(Event.objects.filter(code__in=codes).values_list("code", flat=True))
    if taken:
        shown = ", ".join(taken[:5]) + (" …" if len(taken) > 5 else "")
        raise ConflictError(
            f"season {year}: {len(taken)} event codes already exist ({shown})",
            detail={"codes": taken},
            say=_("%(year)s 赛季：已有 %(n)s 个赛事代码被占用（%(codes)s）。")
            % {
                "year": year,
                "n": len(taken),
                "codes": "、".join(taken[:5]) + ("……" if len(taken) > 5 else ""),
            },
        )


def _events_create(season: Season, calendar: Calendar) -> list[Event]:
    """Store the calendar's events, then link each to the event it feeds."""
    events = Event.objects.bulk_create(
        [
            Event(
                season=season,
                code=plan.code,
                kind=plan.kind.value,
                name=event_name(plan.kind.value, plan.code, plan.city or ""),
                starts_at=plan.starts_at,
                ends_at=plan.ends_at,
                daily_opens=plan.daily_hours[0] if plan.daily_hours else None,
                daily_closes=plan.daily_hours[1] if plan.daily_hours else None,
                month=plan.month or "",
                station=plan.station,
                city=plan.city or "",
                open_entry=plan.kind == PlannedKind.WEEKLY_QUALIFIER,
                champion_achievement=TITLE_ACHIEVEMENTS.get(plan.kind.value, ""),
            )
            for plan in calendar.events
        ]
    )
    by_code = {event.code: event for event in events}
    for plan in calendar.events:
        if plan.feeds:
            by_code[plan.code].feeds = by_code[plan.feeds]
    Event.objects.bulk_update([e for e in events if e.feeds is not None], ["feeds"])
    return events


def _carried_link(season: Season) -> list[str]:
    """Link the previous season's carried monthly finals (those that feed nothing: played in
    a quarter of their own after its last quarterly final; ``Calendar.carried``) to this
    season's first quarterly final. One already finalised is settled again, which writes
    its advancing players' entries. Returns their codes."""
    first = (
        Event.objects.filter(season=season, kind=EventKind.QUARTERLY_FINAL)
        .order_by("starts_at", "code")
        .first()
    )
    if first is None:
        return []
    carried = list(
        Event.objects.select_for_update()
        .filter(season__year=season.year - 1, kind=EventKind.MONTHLY_FINAL, feeds__isnull=True)
        .exclude(status=EventStatus.CANCELLED)
        .order_by("starts_at", "code")
    )
    for event in carried:
        event.feeds = first
        event.save(update_fields=["feeds"])
        if event.status == EventStatus.FINALISED:
            event_refreeze(event=event)
    return [event.code for event in carried]


def _calendar_says(
    year: int,
    start: date,
    weeks: int,
    quarterly_dates: Sequence[date] | None,
    annual_date: date | None,
) -> str:
    """Why ``build_calendar`` refused the season, in an organiser's words: the dates it was
    given are checked again here (the calendar's errors speak English only)."""
    weekdays = [
        _("星期一"),
        _("星期二"),
        _("星期三"),
        _("星期四"),
        _("星期五"),
        _("星期六"),
        _("星期日"),
    ]
    if start.weekday() != 0:
        return _("赛季须从星期一开始：%(start)s 是%(weekday)s。") % {
            "start": start.isoformat(),
            "weekday": weekdays[start.weekday()],
        }
    if weeks < 1:
        return _("周数须至少为 1，填的是 %(weeks)s。") % {"weeks": weeks}
    if quarterly_dates is not None or annual_date is not None:
        return _(
            "无法按所给的季赛、年赛日期排出 %(year)s 赛季的赛历：每站须在前一站之后、各占一天。"
        ) % {"year": year}
    return _("无法从 %(start)s 起排出 %(year)s 赛季 %(weeks)s 周的赛历。") % {
        "year": year,
        "start": start.isoformat(),
        "weeks": weeks,
    }


def season_create(
    *,
    year: int,
    start: date,
    quarterly_dates: Sequence[date] | None = None,
    annual_date: date | None = None,
    weeks: int = 52,
    name: str = "",
    ruleset: Mapping[str, Any] | None = None,
    by: User | None = None,
) -> Season:
    """Create the season ``year`` and its whole calendar (SPEC §2); a conflict if it exists."""
    settings = _checked(ruleset or {})
    season = Season(year=year, name=name or f"{year} 中国UNO线上巡回赛", starts_on=start)
    for field, value in settings.items():
        setattr(season, field, value)
    try:
        calendar = build_calendar(
            year,
            start,
            weeks=weeks,
            quarterly_dates=quarterly_dates,
            annual_date=annual_date,
            cities=season.cities,
            tz=season.time_zone,
        )
    except ValueError as exc:
        raise ServiceError(
            str(exc), say=_calendar_says(year, start, weeks, quarterly_dates, annual_date)
        ) from None
    exists = _("%(year)s 赛季已经存在。") % {"year": year}
    with transaction.atomic():
        if Season.objects.filter(year=year).exists():
            raise ConflictError(f"season {year} already exists", detail={"year": year}, say=exists)
        _codes_free(year, [plan.code for plan in calendar.events])
        try:
            with transaction.atomic():
                season.save()
        except IntegrityError:
            raise ConflictError(
                f"season {year} already exists", detail={"year": year}, say=exists
            ) from None
        events = _events_create(season, calendar)
        carried = _carried_link(season)
        CalendarChange.objects.create(
            season=season,
            action=CalendarChange.Action.SEASON_CREATE,
            by=by,
            reason="season created",
            diff={
                "start": start.isoformat(),
                "weeks": weeks,
                "events": len(events),
                "stations": sum(1 for e in events if e.station is not None),
                "carried_in": carried,
                "carried_out": list(calendar.carried),
            },
        )
    return season


def event_name(kind: str, code: str, city: str) -> str:
    """A station is named after its city ("南京站 周赛"); other events by code and kind."""
    label = KIND_NAMES.get(kind, kind)
    return f"{city}站 {label}" if city else f"{code} {label}"


def season_update_check(*, season: Season, changes: Mapping[str, Any]) -> dict[str, Any]:
    """Validate ruleset changes against ``season``; returns the fields that change, cleaned.
    Raises ServiceError with errors by field (the admin form and ``season_update`` share it).
    """
    clean = _checked(changes)
    changed = {f: v for f, v in clean.items() if getattr(season, f) != v}
    frozen = sorted(set(changed) & LOCKED_FIELDS)
    if frozen and season.events.filter(status=EventStatus.FINALISED).exists():
        raise ConflictError(
            f"season {season.year} has finalised events: {', '.join(frozen)} can no longer "
            "change (the tour's days are calendar days of one time zone, and the finalised "
            "events' windows and title days were counted in it)",
            detail=dict.fromkeys(frozen, "locked by finalised events"),
            say=_(
                "%(year)s 赛季已有定结果的赛事：%(fields)s不能再改（巡回赛的日子按同一时区的"
                "日历计算，已定赛事的时段和头衔日期都按它算过）。"
            )
            % {"year": season.year, "fields": "、".join(str(FIELD_SAYS[f]) for f in frozen)},
        )
    return changed


def _standings_rebuild(events: Sequence[Event]) -> None:
    """Rebuild the standings of these (locked season's, unfinalised) events under the
    season's new best N and minimum."""
    for event in events:
        players = list(Standing.objects.filter(event=event).values_list("player_id", flat=True))
        if players:
            standings_recompute(event=event, player_ids=players)


def season_update(
    *, season: Season, changes: Mapping[str, Any], by: User | None, reason: str
) -> Season:
    """Change ruleset fields (validated, errors by field) and log the change with ``reason``."""
    if not reason.strip():
        raise ServiceError(
            "give a reason for the change",
            detail={"reason": "required"},
            say=_("变更须写明理由。"),
        )
    with transaction.atomic():
        locked = Season.objects.select_for_update().get(pk=season.pk)
        changed = season_update_check(season=locked, changes=changes)
        if not changed:
            return locked
        diff: dict[str, Any] = {
            f: {"before": getattr(locked, f), "after": v} for f, v in changed.items()
        }
        for field, value in changed.items():
            setattr(locked, field, value)
        locked.save(update_fields=list(changed))
        if set(changed) & RESULT_FIELDS:
            events = locked.events.exclude(status=EventStatus.CANCELLED)
            diff["kept_by"] = sorted(
                events.filter(status=EventStatus.FINALISED).values_list("code", flat=True)
            )
            pending = list(events.filter(status=EventStatus.SCHEDULED).order_by("pk"))
            diff["applies_to"] = len(pending)
            if set(changed) & STANDING_FIELDS:
                _standings_rebuild(pending)
        CalendarChange.objects.create(
            season=locked, action=CalendarChange.Action.RULESET, by=by, reason=reason, diff=diff
        )
    return locked
