"""The words of a notice (issue #27), in the reader's language.

A notice stores its ``kind`` and ``params``, never its sentence: the feed renders it in the
page's language, the e-mail and the partners' webhook in the tour's (``LANGUAGE_CODE``,
Chinese: the msgids are the Chinese text, ``locale/en`` translates them).

Public wording: a sanction says what it did (games voided, titles revoked, suspended) and
that it was for a breach of the rules, never why in detail: the reviewer's reason, the
evidence (addresses, devices, accounts) and the other players of the case stay in the
reviewers' console. Event labels follow the pages' (a station by number and city, an
organiser's event by its name, any other event by its code), with the same msgids.
"""

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext, gettext_lazy

from notices.models import Notice, NoticeKind

#: Event kinds as the pages name them (the msgids of ``web.templatetags.tour.KIND_LABELS``).
KIND_LABELS = {
    "weekly_qualifier": gettext_lazy("周预选赛"),
    "weekly_final": gettext_lazy("周赛"),
    "monthly_final": gettext_lazy("月赛"),
    "quarterly_final": gettext_lazy("季赛"),
    "annual_final": gettext_lazy("年赛"),
    "championship": gettext_lazy("锦标赛"),
    "custom": gettext_lazy("特别赛事"),
}

#: The measures a sanction may take, in the order a notice lists them.
MEASURES = (
    ("void_games", gettext_lazy("相关赛事成绩作废")),
    ("revoke_titles", gettext_lazy("全国头衔被撤销")),
    ("suspend", gettext_lazy("暂停参赛资格")),
)


def event_params(
    *, code: str, kind: str, station: int | None, city: str, name: str
) -> dict[str, Any]:
    """What a notice keeps of an event to name it (public fields only)."""
    return {"code": code, "kind": kind, "station": station, "city": city, "name": name}


def event_label(event: Mapping[str, Any]) -> str:
    """ "第13站 南京站 · 月赛", an organiser's event by its name, else "<code> · <kind>"."""
    kind = str(KIND_LABELS.get(event["kind"], event["kind"]))
    station = event.get("station")
    if station is not None:
        if event.get("city"):
            place = gettext("第%(number)s站 %(city)s站") % {
                "number": station,
                "city": event["city"],
            }
        else:
            place = gettext("第%(number)s站") % {"number": station}
        return f"{place} · {kind}"
    if event["kind"] in ("championship", "custom") and event.get("name"):
        return str(event["name"])
    return f"{event['code']} · {kind}"


def _measures(params: Mapping[str, Any]) -> str:
    # The enumeration comma is a message too: English joins with ", ".
    return gettext("、").join(str(label) for flag, label in MEASURES if params.get(flag))


def notice_text(kind: str, params: Mapping[str, Any]) -> str:
    """The sentence of a notice of ``kind`` with ``params``, in the active language."""
    if kind == NoticeKind.ADVANCED:
        return gettext("从「%(source)s」晋级「%(target)s」。") % {
            "source": event_label(params["source"]),
            "target": event_label(params["target"]),
        }
    if kind == NoticeKind.TITLE_GRANTED:
        return gettext("获得大师头衔，有效期至 %(date)s。") % {"date": params["valid_until"]}
    if kind == NoticeKind.TITLE_EXTENDED:
        return gettext("大师头衔延期，有效期至 %(date)s。") % {"date": params["valid_until"]}
    if kind == NoticeKind.TITLE_LIFETIME:
        return gettext("晋升终身大师。")
    if kind == NoticeKind.TITLE_EXPIRING:
        return gettext("大师头衔有效期至 %(date)s，将在 %(days)s 天内到期。") % {
            "date": params["valid_until"],
            "days": params["days"],
        }
    if kind == NoticeKind.TITLE_LAPSED:
        return gettext("大师头衔已到期失效（有效期至 %(date)s）。") % {
            "date": params["valid_until"]
        }
    if kind == NoticeKind.TITLE_REVOKED:
        return gettext("全国头衔因违规被撤销。")
    if kind == NoticeKind.TITLE_RESTORED:
        return gettext("申诉成功，全国头衔已恢复。")
    if kind == NoticeKind.SANCTIONED:
        return gettext("因违规被处罚：%(measures)s。") % {"measures": _measures(params)}
    if kind == NoticeKind.SANCTION_REVERSED:
        return gettext("申诉成功，处罚已撤销。")
    if kind == NoticeKind.APPEAL_REJECTED:
        return gettext("申诉未获支持，处罚维持。")
    raise ValueError(f"unknown notice kind {kind!r}")


def tour_text(notice: Notice) -> str:
    """The sentence in the tour's language (the partners' webhook, the e-mail)."""
    with translation.override(settings.LANGUAGE_CODE):
        return notice_text(notice.kind, notice.params)


def email_message(notice: Notice, *, name: str) -> tuple[str, str]:
    """The e-mail of a notice to its player ``name``: (subject, body), in the tour's language."""
    with translation.override(settings.LANGUAGE_CODE):
        subject = gettext("UNO 中国线上巡回赛通知")
        body = (
            gettext("%(name)s，您好：") % {"name": name}
            + "\n\n"
            + notice_text(notice.kind, notice.params)
            + "\n"
        )
    return subject, body
