"""Template labels for the tour's codes, translated (source strings Chinese, SPEC §2, §6).

The models' choice labels are staff-facing English; the public pages say 周赛 / weekly
final through these filters instead.
"""

from typing import Any

from django import template
from django.urls import translate_url
from django.utils.translation import get_language, gettext
from django.utils.translation import gettext_lazy as _

from accounts.roles import has_role
from tournaments.models import Event

register = template.Library()

KIND_LABELS = {
    "weekly_qualifier": _("周预选赛"),
    "weekly_final": _("周赛"),
    "monthly_final": _("月赛"),
    "quarterly_final": _("季赛"),
    "annual_final": _("年赛"),
    "championship": _("锦标赛"),
    "custom": _("特别赛事"),
}

TITLE_STATUS_LABELS = {
    "none": _("无头衔"),
    "master": _("大师"),
    "lapsed": _("大师（已失效）"),
    "lifetime": _("终身大师"),
}

TERM_STATE_LABELS = {
    "current": _("有效"),
    "lapsed": _("已过期"),
    "void": _("已作废"),
    "revoked": _("已撤销"),
}

CHANGE_KIND_LABELS = {
    "granted": _("获得大师"),
    "extended": _("大师延期"),
    "lapsed": _("大师失效"),
    "lifetime": _("晋升终身大师"),
    "revoked": _("头衔被撤销"),
    "restored": _("申诉后恢复"),
}

EVENT_STATE_LABELS = {
    "upcoming": _("未开始"),
    "live": _("进行中"),
    "closed": _("已结束待定"),
    "finalised": _("已定"),
    "cancelled": _("已取消"),
}

EVENT_STATUS_LABELS = {
    "scheduled": _("未结束"),
    "finalised": _("已确认"),
    "cancelled": _("已取消"),
}


@register.simple_tag(takes_context=True)
def path_in(context: dict[str, Any], language: str) -> str:
    """This page's path (and query) in ``language``: the language switch's link, so leaving
    English for the unprefixed default language lands on the same page."""
    return translate_url(context["request"].get_full_path(), language)


@register.filter
def holds(user: Any, role: str) -> bool:
    """Whether ``user`` holds ``role`` (superusers hold every role)."""
    return has_role(user, role)


@register.filter
def kind_label(kind: str) -> str:
    return str(KIND_LABELS.get(kind, kind))


@register.filter
def title_status_label(status: str) -> str:
    return str(TITLE_STATUS_LABELS.get(status, status))


@register.filter
def term_state_label(state: str) -> str:
    return str(TERM_STATE_LABELS.get(state, state))


@register.filter
def change_kind_label(kind: str) -> str:
    return str(CHANGE_KIND_LABELS.get(kind, kind))


@register.filter
def event_state_label(state: str) -> str:
    return str(EVENT_STATE_LABELS.get(state, state))


@register.filter
def event_status_label(status: str) -> str:
    return str(EVENT_STATUS_LABELS.get(status, status))


@register.filter
def rule_label(rule: Any) -> str:
    """A qualification rule in the page's language: its description is "中文 — English"
    (the defaults, and the admin's convention); the part for the language, else the whole
    description, else the rule's key."""
    description = str(getattr(rule, "description", "") or "")
    if not description:
        return str(getattr(rule, "key", ""))
    chinese, dash, english = description.partition(" — ")
    if not dash:
        return description
    return english.strip() if (get_language() or "").startswith("en") else chinese.strip()


@register.filter
def station_name(event: Event) -> str:
    """ "第13站 南京站" (SPEC §2), or the event's code when it is not a station."""
    if event.station is None:
        return event.code
    if event.city:
        return gettext("第%(number)s站 %(city)s站") % {"number": event.station, "city": event.city}
    return gettext("第%(number)s站") % {"number": event.station}


@register.filter
def event_title(event: Event) -> str:
    """A station by number and city with its kind; an organiser's event by its name; any
    other event by its code and kind."""
    if event.station is not None:
        return f"{station_name(event)} · {kind_label(event.kind)}"
    if event.kind in ("championship", "custom") and event.name:
        return event.name
    return f"{event.code} · {kind_label(event.kind)}"


def _standing(row: dict[str, Any] | None) -> str:
    if row is None:
        return "—"
    text = gettext("%(total)s 分 %(games)s 局") % {"total": row["total"], "games": row["games"]}
    if row.get("rank"):
        text += " " + gettext("第 %(rank)s 名") % {"rank": row["rank"]}
    if row.get("advanced"):
        text += " " + gettext("晋级")
    return text


@register.filter
def diff_lines(diff: dict[str, Any]) -> list[str]:
    """A correction's diff (tournaments.services.corrections) as sentences: each player's
    standing before and after, the players leaving the field, the event it feeds, the title
    qualification moved; any other part as its key and value."""
    lines = []
    for key, value in diff.items():
        if key == "standings":
            lines += [
                f"{row['player']}: {_standing(row['before'])} → {_standing(row['after'])}"
                for row in value
            ]
        elif key == "standings_removed":
            lines.append(gettext("移出名单：%(players)s") % {"players": ", ".join(value) or "—"})
        elif key == "fed" and value:
            state = (
                gettext("已赛过，须决定重赛或保留") if value.get("played") else gettext("未开赛")
            )
            lines.append(
                gettext("下游赛事 %(event)s：名单变化，%(state)s")
                % {"event": value["event"], "state": state}
            )
        elif key == "qualifications":
            lines.append(
                gettext("冠军资格：撤回 %(withdrawn)s，记录 %(recorded)s")
                % {
                    "withdrawn": value.get("withdrawn") or "—",
                    "recorded": value.get("recorded") or "—",
                }
            )
        else:
            lines.append(f"{key}: {value}")
    return lines
