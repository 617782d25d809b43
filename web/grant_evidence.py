"""A pending title grant as a reviewer reads it (SPEC §6 "Grants go through review").

A qualification's ``evidence`` is a small dict written by whoever recorded it; this module
says it in words, with links to where it can be checked:

* ``event`` / ``station`` / ``rank`` / ``score`` / ``games`` (the champion of an event,
  ``tournaments.services.finalise.champion_evidence``): one sentence ("2021-02-M 月赛冠军，
  第 1 名，1680 分，15 局") linking the event's board and the player's results in it (their
  row on the board, or their seats and games of a seated event), and one about the event's
  integrity audit (``integrity.models.AuditRun``: not run, running, failed, or completed
  with how many flags name the player), linking the case console filtered by the event
  when its audit opened cases.
* ``world_cup`` / ``ranking`` (a World Cup representative, ``titles.services.world_cup``).
* ``reason`` (a reviewer's manual entry, ``titles.services.qualification_enter``),
  ``note``, ``demo`` (the demo data).
* Any other key (a manual entry's evidence is free-form): a generic ``key: value`` line; a
  known key whose value is not of the expected type too.

It also says who recorded the grant, which version the reviewer is deciding, and why
approving it would be refused before the reviewer tries: four eyes (the reviewer entered
it by hand), a held player, an audit not cleared — the order and the reasons of
``titles.services.review``.

The words are pure functions of the qualification and :class:`Facts`;
:func:`grant_facts` reads the facts for a page of grants in a fixed number of queries.
"""

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django.db.models import Count
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from integrity.models import AuditRun, Flag
from integrity.selectors import case_queue_events
from integrity.services.audits import event_key
from titles.models import Qualification
from titles.selectors import QueueItem
from titles.services.ledger import MANUAL
from tournaments.models import Event
from web.templatetags.tour import kind_label, station_name

#: Why approving a grant is refused (``ConflictError.detail["reason"]`` of
#: ``titles.services.review``), said to the reviewer.
REFUSALS = {
    "held": gettext_lazy("该选手有未结的诚信案件，其头衔申请暂缓审核。"),
    "audit": gettext_lazy("该赛事的诚信审计尚未通过，暂不能批准。"),
    "stale": gettext_lazy("其他审核员已先作出决定（409），请查看最新状态。"),
    "four_eyes": gettext_lazy("四眼原则：此资格由您录入，须由另一位审核员批准。"),
}

#: The World Cup stake rankings (``titles.models.StakeRanking``).
RANKING_LABELS = {
    "80x": gettext_lazy("80× 倍数场"),
    "8x": gettext_lazy("8× 倍数场"),
    "1x": gettext_lazy("1× 经典场"),
}

#: The evidence keys said in words; any other key is a generic line.
ACHIEVEMENT_KEYS = ("event", "station", "rank", "score", "games")
WORLD_CUP_KEYS = ("world_cup", "ranking")


@dataclass(frozen=True)
class Link:
    text: str
    url: str


@dataclass(frozen=True)
class Line:
    """One sentence of evidence with its links; ``kind`` names it for the page's style
    (``achievement``, ``audit``, ``note``, ``missing``, ``other``)."""

    text: str
    kind: str
    links: tuple[Link, ...] = ()


@dataclass(frozen=True)
class AuditFacts:
    """The integrity audit of one event as the grant's player sees it."""

    status: str
    started_at: datetime
    finished_at: datetime | None
    flags_on_player: int


@dataclass
class Facts:
    """What the words need beyond the qualification: the events its evidence names (by
    code), their audits (by event code and player id) and the events whose audits opened
    cases (the codes the case console's event filter accepts)."""

    events: dict[str, Event] = field(default_factory=dict)
    audits: dict[tuple[str, int], AuditFacts] = field(default_factory=dict)
    case_events: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Grant:
    """A grant of the review queue as the page shows it to one reviewer."""

    qualification: Qualification
    held: bool
    audited: bool
    event_code: str | None
    lines: list[Line]
    recorded: str
    version: str
    own_entry: bool
    refusal: str


# --- reads -----------------------------------------------------------------------------------


def _event_code(qualification: Qualification) -> str | None:
    code = (qualification.evidence or {}).get("event")
    return code if isinstance(code, str) and code else None


def grant_facts(qualifications: Sequence[Qualification]) -> Facts:
    """The facts of a page of grants: at most four queries, however many grants."""
    codes = {code for q in qualifications if (code := _event_code(q))}
    if not codes:
        return Facts()
    events = {event.code: event for event in Event.objects.filter(code__in=codes)}
    keys = {event_key(event): event.code for event in events.values()}
    runs = {keys[run.key]: run for run in AuditRun.objects.filter(key__in=keys)}
    flagged = (
        Flag.objects.filter(
            run__in=list(runs.values()), players__in={q.player_id for q in qualifications}
        )
        .values_list("run_id", "players")
        .annotate(n=Count("pk"))
    )
    counts = {(run_id, player_id): n for run_id, player_id, n in flagged}
    audits = {
        (code, q.player_id): AuditFacts(
            status=run.status,
            started_at=run.started_at,
            finished_at=run.finished_at,
            flags_on_player=counts.get((run.pk, q.player_id), 0),
        )
        for q in qualifications
        if (code := _event_code(q)) is not None and (run := runs.get(code)) is not None
    }
    case_events = set(
        case_queue_events().filter(code__in=list(events)).values_list("code", flat=True)
    )
    return Facts(events=events, audits=audits, case_events=case_events)


# --- words -----------------------------------------------------------------------------------


def _when(moment: datetime | None) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M") if moment else "—"


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _count(value: Any) -> int | None:
    """An integer figure of the evidence (``bool`` is not one)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _achievement(
    evidence: Mapping[str, Any], event: Event | None, code: str | None
) -> tuple[str, set[str]]:
    """The achievement's sentence and the keys it said."""
    said: set[str] = set()
    rank = _count(evidence.get("rank"))
    parts = []
    if code is not None:
        said.add("event")
        kind = kind_label(event.kind) if event is not None else ""
        if rank == 1:
            head = _("%(event)s %(kind)s冠军") if kind else _("%(event)s 冠军")
        else:
            head = "%(event)s %(kind)s" if kind else "%(event)s"
        head = (head % {"event": code, "kind": kind}).strip()
        station = _count(evidence.get("station"))
        if station is not None:
            said.add("station")
            where = (
                station_name(event)
                if event is not None and event.station == station
                else _("第%(number)s站") % {"number": station}
            )
            head = _("%(head)s（%(station)s）") % {"head": head, "station": where}
        parts.append(head)
    for key, words in (
        ("rank", _("第 %(n)s 名")),
        ("score", _("%(n)s 分")),
        ("games", _("%(n)s 局")),
    ):
        value = _count(evidence.get(key))
        if value is not None:
            said.add(key)
            parts.append(words % {"n": value})
    return _("，").join(parts), said


def _achievement_links(qualification: Qualification, event: Event) -> tuple[Link, ...]:
    player = qualification.player
    query = "?" + urlencode({"q": player.external_id})
    if event.format == Event.Format.SEATED:
        mine = Link(
            _("%(name)s在本赛事的座位与对局") % {"name": player.name},
            reverse("web:event-tables", args=[event.code]) + query,
        )
    else:
        mine = Link(
            _("%(name)s在本赛事的成绩") % {"name": player.name},
            reverse("web:event", args=[event.code]) + query,
        )
    return (Link(_("赛事成绩榜"), reverse("web:event", args=[event.code])), mine)


def audit_line(code: str, audit: AuditFacts | None, *, has_cases: bool) -> Line:
    """The integrity audit of event ``code`` in words (SPEC §7), linking the event's cases."""
    if audit is None:
        text = _("诚信审计：%(event)s 尚未审计。") % {"event": code}
    elif audit.status == AuditRun.Status.RUNNING:
        text = _("诚信审计：%(event)s 的审计于 %(at)s 开始，尚未完成。") % {
            "event": code,
            "at": _when(audit.started_at),
        }
    elif audit.status == AuditRun.Status.FAILED:
        text = _("诚信审计：%(event)s 的审计失败（%(at)s），需重新运行。") % {
            "event": code,
            "at": _when(audit.finished_at),
        }
    elif audit.flags_on_player:
        text = ngettext(
            "诚信审计：%(event)s 的审计于 %(at)s 完成，%(n)s 项标记涉及该选手。",
            "诚信审计：%(event)s 的审计于 %(at)s 完成，%(n)s 项标记涉及该选手。",
            audit.flags_on_player,
        ) % {"event": code, "at": _when(audit.finished_at), "n": audit.flags_on_player}
    else:
        text = _("诚信审计：%(event)s 的审计于 %(at)s 完成，没有标记该选手。") % {
            "event": code,
            "at": _when(audit.finished_at),
        }
    links: tuple[Link, ...] = ()
    if has_cases:
        url = reverse("web:review-cases") + "?" + urlencode({"event": code, "state": "all"})
        links = (Link(_("该赛事的诚信案件"), url),)
    return Line(text, "audit", links)


def _world_cup(evidence: Mapping[str, Any]) -> tuple[str, set[str]]:
    month, ranking = evidence.get("world_cup"), evidence.get("ranking")
    if not isinstance(month, str):
        return "", set()
    if isinstance(ranking, str) and ranking in RANKING_LABELS:
        text = _("UNO 世界杯 %(month)s 月末，%(ranking)s排行中国第一") % {
            "month": month,
            "ranking": RANKING_LABELS[ranking],
        }
        return text, {"world_cup", "ranking"}
    return _("UNO 世界杯 %(month)s 月末中国代表") % {"month": month}, {"world_cup"}


def evidence_lines(qualification: Qualification, facts: Facts) -> list[Line]:
    """The grant's evidence in words: the achievement, its event's audit, then the notes,
    then every other key as ``key: value`` (by key: stored as ``jsonb``, the evidence keeps no
    order of its own)."""
    evidence: Mapping[str, Any] = qualification.evidence or {}
    lines: list[Line] = []
    code = _event_code(qualification)
    event = facts.events.get(code) if code is not None else None
    text, said = _achievement(evidence, event, code)
    if text:
        links = _achievement_links(qualification, event) if event is not None else ()
        lines.append(Line(text, "achievement", links))
    if code is not None and event is None:
        lines.append(Line(_("系统中没有赛事 %(event)s。") % {"event": code}, "missing"))
    elif code is not None:
        audit = facts.audits.get((code, qualification.player_id))
        lines.append(audit_line(code, audit, has_cases=code in facts.case_events))
    text, cup = _world_cup(evidence)
    if text:
        lines.append(Line(text, "achievement"))
    said |= cup
    for key, words in (("reason", _("录入理由：%(text)s")), ("note", _("备注：%(text)s"))):
        value = evidence.get(key)
        if isinstance(value, str):
            said.add(key)
            if value.strip():
                lines.append(Line(words % {"text": value}, "note"))
    if evidence.get("demo") is True:
        lines.append(Line(_("演示数据（由 demo 命令生成）"), "note"))
        said.add("demo")
    lines.extend(
        Line(f"{key}: {_value(value)}", "other")
        for key, value in sorted(evidence.items())
        if key not in said
    )
    return lines


def recorded_words(qualification: Qualification, *, viewer_id: int | None) -> str:
    """Who recorded the grant, and how."""
    by = qualification.created_by
    source = qualification.source
    if by is None:
        if source.startswith("world_cup:"):
            return _("世界杯月末快照自动记录")
        return _("系统自动记录")
    who = {"who": by.get_username()}
    if source.startswith(MANUAL):
        if by.pk == viewer_id:
            return _("由您手工录入")
        return _("由 %(who)s 手工录入") % who
    if source.startswith("event:"):
        return _("%(who)s 确认赛事结果时自动记录") % who
    return _("由 %(who)s 记录") % who


def version_words(qualification: Qualification) -> str:
    """The version the reviewer decides at, and whether it changed since it was recorded
    (withdrawn and recorded again, or restored on appeal)."""
    changes = qualification.version - 1
    if changes <= 0:
        return _("第 %(n)s 版（记录后未改动）") % {"n": qualification.version}
    return ngettext(
        "第 %(n)s 版（记录后改动过 %(k)s 次）",
        "第 %(n)s 版（记录后改动过 %(k)s 次）",
        changes,
    ) % {"n": qualification.version, "k": changes}


def is_own_entry(qualification: Qualification, *, viewer_id: int | None) -> bool:
    """Whether the viewer entered the grant by hand: four eyes, someone else approves it."""
    return (
        viewer_id is not None
        and qualification.source.startswith(MANUAL)
        and qualification.created_by_id == viewer_id
    )


def approve_refusal(item: QueueItem, *, viewer_id: int | None) -> str:
    """Why approving the grant would be refused, in words (the service's order of checks),
    or ``""`` when it would not."""
    if is_own_entry(item.qualification, viewer_id=viewer_id):
        return str(REFUSALS["four_eyes"])
    if item.held:
        return str(REFUSALS["held"])
    if not item.audited:
        return str(REFUSALS["audit"])
    return ""


def grant(item: QueueItem, facts: Facts, *, viewer_id: int | None) -> Grant:
    qualification = item.qualification
    return Grant(
        qualification=qualification,
        held=item.held,
        audited=item.audited,
        event_code=_event_code(qualification),
        lines=evidence_lines(qualification, facts),
        recorded=recorded_words(qualification, viewer_id=viewer_id),
        version=version_words(qualification),
        own_entry=is_own_entry(qualification, viewer_id=viewer_id),
        refusal=approve_refusal(item, viewer_id=viewer_id),
    )


def grants(items: Iterable[QueueItem], *, viewer_id: int | None) -> list[Grant]:
    """The queue's grants as the page shows them to the reviewer ``viewer_id``."""
    shown = list(items)
    facts = grant_facts([item.qualification for item in shown])
    return [grant(item, facts, viewer_id=viewer_id) for item in shown]
