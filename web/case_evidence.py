"""An integrity case as a reviewer reads it (SPEC §7: flags with their statistic and p/q
value, evidence pointers; a reviewer decides).

The reads are ``integrity.selectors`` (:func:`~integrity.selectors.case_evidence` and the
console's reads); this module only puts them in words and tables:

* **Flags in words.** One presenter per detector (:data:`PRESENTERS`, keyed by the flag's
  detector): a headline sentence with the statistic against what chance explains and the
  q-value as people write it (``q = 2×10⁻⁶``, :func:`q_words`), then a few sentences of the
  evidence behind it. A flag whose evidence a presenter does not know (an older or a newer
  detector version) is said generically: its statistic, its q and its evidence's fields.
* **Tables.** Together vs apart per pair, the flow matrix (feeder × beneficiary, also as the
  heat map's data), the shared devices and addresses (also as a graph's data: players linked
  to the identifiers they used, :func:`identifier_graph`), the linked games with each seat's
  cards, and the case's log, each step in words.
* **Moves.** A game's move log (SPEC §9 move log v1) one line a move.

Players are named by name (their ids in the player list). IP addresses and devices are
personal data: these pages serve reviewers only.
"""

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from django.db.models import Prefetch
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts.models import Player
from flows.sanctions import SanctionPlan
from integrity import selectors
from integrity.models import Appeal, Case, CaseEvent, CasePlayer, Flag, Sanction
from titles.models import PlayerTitle
from tournaments.models import Event, Game
from web.templatetags.tour import change_kind_label, diff_lines, title_status_label

# --- labels ----------------------------------------------------------------------------------

#: What each detector looks for, as a flag's heading.
DETECTOR_LABELS = {
    "coseating": gettext_lazy("同桌过多"),
    "pointflow": gettext_lazy("让分（点数流向）"),
    "sessions": gettext_lazy("共用设备或地址"),
    "same_table": gettext_lazy("同局两座同源"),
    "boosting": gettext_lazy("代练迹象"),
    "softplay": gettext_lazy("放水"),
    "together": gettext_lazy("同桌时成绩异常"),
    "fed": gettext_lazy("养号（一伙人给一个号送分）"),
    "kept": gettext_lazy("替搭档扛牌"),
}

#: The detector families of ``Case.families`` (the queue's filter).
FAMILY_LABELS = {
    "pointflow": gettext_lazy("让分"),
    "softplay": gettext_lazy("放水"),
    "coseating": gettext_lazy("同桌"),
    "sessions": gettext_lazy("设备与地址"),
    "boosting": gettext_lazy("代练"),
    "together": gettext_lazy("同桌异常"),
    "fed": gettext_lazy("养号"),
    "kept": gettext_lazy("扛牌"),
}

CASE_STATUS_LABELS = {
    "open": gettext_lazy("待处理"),
    "dismissed": gettext_lazy("已结案（不处罚）"),
    "sanctioned": gettext_lazy("已处罚"),
    "reversed": gettext_lazy("申诉成立，处罚已撤销"),
}

ROLE_LABELS = {
    "unknown": gettext_lazy("未定"),
    "beneficiary": gettext_lazy("受益者"),
    "helper": gettext_lazy("协助者"),
    "cleared": gettext_lazy("已排除"),
}

ACTION_LABELS = {
    "opened": gettext_lazy("立案"),
    "flagged_again": gettext_lazy("审计再次标记"),
    "taken": gettext_lazy("领取"),
    "dismissed": gettext_lazy("结案（不处罚）"),
    "sanctioned": gettext_lazy("处罚"),
    "appealed": gettext_lazy("申诉"),
    "appeal_rejected": gettext_lazy("申诉驳回"),
    "reversed": gettext_lazy("申诉成立，撤销处罚"),
}

APPEAL_STATUS_LABELS = {
    "pending": gettext_lazy("待裁决"),
    "upheld": gettext_lazy("成立"),
    "rejected": gettext_lazy("驳回"),
}

#: The session changes a boosting flag coincides with (integrity.domain.boosting).
CHANGE_LABELS = {
    "device": gettext_lazy("设备"),
    "ip_range": gettext_lazy("IP 网段"),
    "hours": gettext_lazy("上线时段"),
}

IDENTIFIER_LABELS = {"device": gettext_lazy("设备"), "ip": gettext_lazy("IP 地址")}

#: Card colours of SPEC §3, as a move's chosen colour.
COLOUR_LABELS = {
    "R": gettext_lazy("红"),
    "G": gettext_lazy("绿"),
    "B": gettext_lazy("蓝"),
    "Y": gettext_lazy("黄"),
}


def label(labels: Mapping[str, Any], key: str) -> str:
    return str(labels.get(key, key))


# --- numbers ---------------------------------------------------------------------------------

_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def q_words(q: float | None) -> str:
    """A p- or q-value as people write it: two significant digits, ``0.0042`` down to 0.001,
    below that ``2×10⁻⁶`` / ``4.2×10⁻⁷``; ``< 10⁻³⁰⁷`` when it underflowed to 0."""
    if q is None or not math.isfinite(q):
        return "—"
    if q <= 0:
        return "< 10⁻³⁰⁷"
    if q >= 0.001:
        return f"{q:.2g}"
    mantissa, exponent = f"{q:.1e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}×10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def decimal(value: float | None, *, signed: bool = False) -> str:
    """One decimal, without a trailing ``.0`` (``6.4``, ``5``, ``+2.5``); ``—`` for none."""
    if value is None or not math.isfinite(value):
        return "—"
    text = f"{value:+.1f}" if signed else f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def percent(share: float | None) -> str:
    """A share as a whole percentage (``0.625`` -> ``63%``); ``—`` for none."""
    if share is None or not math.isfinite(share):
        return "—"
    return f"{round(100 * share)}%"


# --- flags in words --------------------------------------------------------------------------

Names = Callable[[str], str]


@dataclass(frozen=True)
class FlagWords:
    """A flag as a reviewer reads it: its heading, a headline sentence (with the q-value
    when the detector has one) and the evidence behind it."""

    flag: Flag
    label: str
    headline: str
    details: list[str]


def _qualified(sentence: str, q: float | None) -> str:
    if q is None:
        return sentence
    return _("%(sentence)s（q = %(q)s）") % {"sentence": sentence, "q": q_words(q)}


def _listed(items: Iterable[str], limit: int = 8) -> str:
    """Items joined with 、, the first ``limit`` of them and how many in all."""
    items = list(items)
    shown = "、".join(items[:limit])
    if len(items) <= limit:
        return shown
    return _("%(shown)s 等 %(n)s 项") % {"shown": shown, "n": len(items)}


def _coseating(flag: Flag, name: Names) -> tuple[str, list[str]]:
    e = flag.evidence
    a, b = flag.player_keys
    headline = _("%(a)s与%(b)s一起同桌 %(shared)s 局，随机预期 %(expected)s 局") % {
        "a": name(a),
        "b": name(b),
        "shared": e["shared"],
        "expected": decimal(e["expected"]),
    }
    games = e.get("games", {})
    details = [
        _("窗口内%(a)s打了 %(ga)s 局，%(b)s打了 %(gb)s 局；两人同时在线的小时段 %(hours)s 个。")
        % {
            "a": name(a),
            "ga": games.get(a, "—"),
            "b": name(b),
            "gb": games.get(b, "—"),
            "hours": e.get("common_hours", "—"),
        },
    ]
    return headline, details


def _history_note(evidence: Mapping[str, Any]) -> list[str]:
    """The sentence saying a pair test's counts include the days before the audit's window
    (none for a run that read no history)."""
    days = evidence.get("history_days")
    if not days:
        return []
    return [_("以上局数包括审计窗口之前 %(days)s 天里的对局。") % {"days": days}]


#: The point-flow versions whose count was of the heaviest of all the losing hands and whose
#: baseline held the games both lost: flags they stored are said in their own terms.
WHOLE_TABLE_POINTFLOW = frozenset({"pointflow-1", "pointflow-2"})


def _pointflow(flag: Flag, name: Names) -> tuple[str, list[str]]:
    e = flag.evidence
    feeder, beneficiary = name(e["feeder"]), name(e["beneficiary"])
    words = {
        "feeder": feeder,
        "beneficiary": beneficiary,
        "wins": e["shared_wins"],
        "mean": decimal(e["feeder_mean"]),
        "baseline": decimal(e.get("feeder_baseline")),
    }
    if e.get("feeder_baseline") is None:
        headline = _("%(beneficiary)s赢的 %(wins)s 局里%(feeder)s都在同桌，平均剩 %(mean)s 分手牌")
    else:
        headline = _(
            "%(beneficiary)s赢的 %(wins)s 局里%(feeder)s平均剩 %(mean)s 分手牌，"
            "不和%(beneficiary)s同桌的输局平均只剩 %(baseline)s 分"
        )
    whole_table = flag.version in WHOLE_TABLE_POINTFLOW
    if whole_table:
        heavy = _("其中 %(heaviest)s 局%(feeder)s的手牌在输家中最重，随机预期 %(expected)s 局。")
    else:
        heavy = _(
            "其中 %(heaviest)s 局%(feeder)s的手牌不比任何没出完的陌生对手轻"
            "（常一起排队的人不算陌生对手），随机预期 %(expected)s 局。"
        )
    details = [
        heavy % {"heaviest": e["heaviest"], "feeder": feeder, "expected": decimal(e["expected"])},
        _(
            "这些局里%(feeder)s共输给%(beneficiary)s %(to_b)s 分；"
            "%(feeder)s赢%(beneficiary)s的 %(reverse)s 局里，%(beneficiary)s输给%(feeder)s "
            "%(to_f)s 分。"
        )
        % {
            "feeder": feeder,
            "beneficiary": beneficiary,
            "to_b": e.get("flow_to_beneficiary", "—"),
            "reverse": e.get("reverse_wins", "—"),
            "to_f": e.get("flow_to_feeder", "—"),
        },
    ]
    if e.get("test") == "rank" and whole_table:
        test = _("检验：%(feeder)s在这些局的手牌与其另外 %(n)s 局输局比较（秩和检验）。")
    elif e.get("test") == "rank":
        test = _(
            "检验：%(feeder)s在这些局的手牌与其不和%(beneficiary)s同桌的 %(n)s 局输局比较"
            "（秩和检验）。"
        )
    elif whole_table:
        test = _("检验：数%(feeder)s手牌最重的局数（%(feeder)s没有足够的其他输局可比）。")
    else:
        test = _(
            "检验：数%(feeder)s手牌不比陌生对手轻的局数"
            "（%(feeder)s不和%(beneficiary)s同桌的输局太少，不够比较）。"
        )
    details.append(
        test % {"feeder": feeder, "beneficiary": beneficiary, "n": e.get("baseline_games", "—")}
    )
    return headline % words, [*details, *_history_note(e)]


def _sessions(flag: Flag, name: Names) -> tuple[str, list[str]]:
    e = flag.evidence
    devices = list(e.get("devices", [e["device"]] if e.get("device") else []))
    ips = list(e.get("ips", [e["ip"]] if e.get("ip") else []))
    headline = _("%(players)s共用 %(devices)s 台设备、%(ips)s 个 IP 地址") % {
        "players": "、".join(name(key) for key in flag.player_keys),
        "devices": len(devices),
        "ips": len(ips),
    }
    details = []
    if devices:
        details.append(_("设备：%(list)s") % {"list": _listed(devices)})
    if ips:
        details.append(_("IP 地址：%(list)s") % {"list": _listed(ips)})
    return headline, details


def _same_table(flag: Flag, name: Names) -> tuple[str, list[str]]:
    e = flag.evidence
    a, b = flag.player_keys
    words = {
        "a": name(a),
        "b": name(b),
        "identifier": e["identifier"],
        "n": len(e.get("games", [])),
    }
    if e["kind"] == "device":
        headline = _("%(a)s与%(b)s在同一局的两个座位上使用同一台设备 %(identifier)s，共 %(n)s 局")
        why = _("一台设备同时坐两个座位：近乎确证是一人操作两个账号。")
    else:
        headline = _("%(a)s与%(b)s在同一局的两个座位上使用同一 IP 地址 %(identifier)s，共 %(n)s 局")
        why = _("同一地址也可能是一个家庭或网吧：只说明两人相关，不证明作弊。")
    games = sorted(e.get("games", []), key=lambda g: (len(g), g))
    return headline % words, [why, _("对局：%(list)s") % {"list": _listed(games)}]


def _boosting(flag: Flag, name: Names) -> tuple[str, list[str]]:
    e = flag.evidence
    headline = _(
        "%(player)s从第 %(index)s 局起表现突变：每局得分相对预期平均由 %(before)s 变为 %(after)s"
    ) % {
        "player": name(flag.player_keys[0]),
        "index": e["change_index"] - e.get("history", 0) + 1,
        "before": decimal(e["before_mean"], signed=True),
        "after": decimal(e["after_mean"], signed=True),
    }
    kinds = "、".join(label(CHANGE_LABELS, kind) for kind in e.get("kinds", []))
    details = [
        _("突变处（对局 %(game)s）%(kinds)s同时改变。")
        % {"game": e.get("change_game", "—"), "kinds": kinds or "—"},
        _("共 %(games)s 局，在 %(splits)s 个会话切换点检验；z = %(z)s。")
        % {
            "games": e.get("games", "—"),
            "splits": e.get("splits", "—"),
            "z": decimal(flag.statistic),
        },
    ]
    if e.get("day_effect", 1.0) > 1.0:
        details.append(
            _(
                "同一天的对局状态相近：z 已除以对局日设计效应 %(effect)s 的平方根"
                "（日内相关取自其他玩家）。"
            )
            % {"effect": f"{e['day_effect']:.2f}"}
        )
    if e.get("history"):
        details.append(
            _("其中 %(history)s 局在审计窗口之前（本人此前的对局，作为基线）；局数从窗口开始计。")
            % {"history": e["history"]}
        )
    return headline, details


#: Per kind of chance (``integrity.domain.softplay.KIND_NAMES``), its counts in words.
_SOFTPLAY_KINDS = {
    "punish": gettext_lazy(
        "惩罚：对%(target)s的 %(chances)s 次机会用了 %(punished)s 次，对其他人的 %(others)s "
        "次用了 %(punished_others)s 次。"
    ),
    "challenge": gettext_lazy(
        "质疑 +4：%(target)s打出的 +4 有 %(chances)s 次可质疑，质疑了 %(punished)s 次；"
        "其他人的 %(others)s 次质疑了 %(punished_others)s 次。"
    ),
    "swap": gettext_lazy(
        "出 7 换牌：%(chances)s 次能把更少的手牌换给%(target)s，%(punished)s 次换给了别人；"
        "对其他人的 %(others)s 次里 %(punished_others)s 次没换给对方。"
    ),
}


def _softplay(flag: Flag, name: Names) -> tuple[str, list[str]]:
    e = flag.evidence
    target = name(e["target"])
    headline = _(
        "%(actor)s对%(target)s手下留情：%(chances)s 次机会只用了 %(punished)s 次，"
        "对其他人的 %(others)s 次机会用了 %(punished_others)s 次"
    ) % {
        "actor": name(e["actor"]),
        "target": target,
        "chances": e["chances"],
        "punished": e["punished"],
        "others": e["chances_others"],
        "punished_others": e["punished_others"],
    }
    details = [
        _SOFTPLAY_KINDS[kind["kind"]]
        % {
            "target": target,
            "chances": kind["chances"],
            "punished": kind["punished"],
            "others": kind["chances_others"],
            "punished_others": kind["punished_others"],
        }
        for kind in e.get("kinds", ())
        if kind["kind"] in _SOFTPLAY_KINDS
    ]
    details.append(
        _(
            "机会：下家只剩两张牌以内、手里有可出的 +2、跳过、反转或 +4 时（惩罚）；对方的 +4 "
            "可以质疑时（质疑）；出 7 换牌、对方手牌比自己多时（换牌）。"
        )
    )
    return headline, details


def _together(flag: Flag, name: Names) -> tuple[str, list[str]]:
    e = flag.evidence
    partner = next(key for key in flag.player_keys if key != e["player"])
    headline = (
        _("%(player)s与%(partner)s同桌时，对陌生对手的战绩明显好于其他对局")
        if e["direction"] == "better"
        else _("%(player)s与%(partner)s同桌时，对陌生对手的战绩明显差于其他对局")
    ) % {"player": name(e["player"]), "partner": name(partner)}
    details = [
        _(
            "%(player)s：同桌 %(together)s 局，胜陌生对手 %(won_together)s 次、负 "
            "%(lost_together)s 次，同输时牌分多于陌生对手的比例 %(heavier_together)s；其他 "
            "%(apart)s 局，胜 %(won_apart)s 次、负 %(lost_apart)s 次，同输时 %(heavier_apart)s。"
        )
        % {
            "player": name(side["player"]),
            "together": side["together"],
            "won_together": side["won_together"],
            "lost_together": side["lost_together"],
            "heavier_together": percent(side.get("heavier_together")),
            "apart": side["apart"],
            "won_apart": side["won_apart"],
            "lost_apart": side["lost_apart"],
            "heavier_apart": percent(side.get("heavier_apart")),
        }
        for side in e["sides"]
    ]
    details.append(
        _(
            "每局与同桌的陌生对手比较（搭档和常一起排队的人不计）：比谁先出完（陌生对手的强弱按其审查期内的平均得分估计）；"
            "他没出完时，比他与没出完的陌生对手的剩余牌分（相同算一半）。"
        )
    )
    return headline, [*details, *_history_note(e)]


def _fed(flag: Flag, name: Names) -> tuple[str, list[str]]:
    e = flag.evidence
    account = name(e["account"])
    group = "、".join(name(key) for key in e["group"])
    headline = _(
        "%(account)s赢的 %(wins)s 局里，常和%(account)s一起排队的%(group)s平均剩 %(mean)s 分手牌；"
        "别人赢的 %(other)s 局里只剩 %(other_mean)s 分"
    ) % {
        "account": account,
        "group": group,
        "wins": e["wins"],
        "mean": decimal(e["group_in_wins"]),
        "other": e["other_wins"],
        "other_mean": decimal(e["group_in_other_wins"]),
    }
    if e.get("losers_apart") is None:
        apart = _(
            "%(account)s没有他们不在场时赢的局，无从比较%(account)s平时赢牌时输家剩多少。"
        ) % {"account": account}
    else:
        apart = _(
            "%(account)s在他们同桌时赢的局里，输家平均剩 %(losers)s 分；他们不在场时赢的 "
            "%(apart)s 局里，输家平均剩 %(losers_apart)s 分。"
        ) % {
            "account": account,
            "losers": decimal(e["losers_in_wins"]),
            "apart": e["apart_wins"],
            "losers_apart": decimal(e["losers_apart"]),
        }
    details = [
        apart,
        _(
            "检验：同一伙人在同一类牌桌上，%(account)s赢时的手牌与别人（同伙或陌生人）赢时"
            "比较（秩和检验），先减去 %(margin)s 分的余量：有的人赢牌本来就让输家剩得多，"
            "送分要比这更重才算。"
        )
        % {"account": account, "margin": e["margin"]},
        *_history_note(e),
    ]
    return headline, details


def _kept(flag: Flag, name: Names) -> tuple[str, list[str]]:
    e = flag.evidence
    feeder, partner = name(e["feeder"]), name(e["partner"])
    kept, expected = float(e["kept"]), float(e["expected"])
    words = {
        "feeder": feeder,
        "partner": partner,
        "games": e["games"],
        "kept": decimal(abs(kept)),
        "expected": decimal(abs(expected)),
    }
    if kept >= 0:
        kept_words = _("%(feeder)s平均比%(partner)s多剩 %(kept)s 张牌") % words
    else:
        kept_words = _("%(feeder)s平均比%(partner)s少剩 %(kept)s 张牌") % words
    if expected >= 0:
        expected_words = _("按两人的实力只该多 %(expected)s 张") % words
    else:
        expected_words = _("按两人的实力本该少剩 %(expected)s 张") % words
    headline = _("%(feeder)s与%(partner)s同桌都没出完的 %(games)s 局里，%(kept)s；%(expected)s") % {
        **words,
        "kept": kept_words,
        "expected": expected_words,
    }
    details = [
        _(
            "实力按各自对陌生对手的胜负估计；同一局里两个不一起排队的输家，实力每差一级，"
            "剩牌相差多少，由本周所有这样的输家算出。把搭档的牌接过去（喂色、替他摸牌），"
            "搭档剩得少、自己剩得多，却不必多赢一局。"
        ),
        *_style_note(e),
        *_history_note(e),
    ]
    return headline, details


def _style_note(evidence: Mapping[str, Any]) -> list[str]:
    """How far the players' own habits in the cards they keep differ, as the week's players
    showed it apart from their partners (none in flags older than ``kept-3``)."""
    if "style" not in evidence:
        return []
    style = float(evidence["style"])
    if not style:
        return [_("本周被检验的玩家不与搭档同桌时，剩牌与各自实力相符，看不出因人而异的留牌习惯。")]
    return [
        _(
            "每人也有自己的留牌习惯（有人爱攒万能牌）：本周被检验的玩家不与搭档同桌时，"
            "这种习惯因人而异，相差约 %(spread)s 张（标准差），判断时已留出这份余地。"
        )
        % {"spread": decimal(math.sqrt(style))}
    ]


def _generic(flag: Flag, name: Names) -> tuple[str, list[str]]:
    headline = _("%(players)s：统计量 %(statistic)s") % {
        "players": "、".join(name(key) for key in flag.player_keys),
        "statistic": decimal(flag.statistic),
    }
    return headline, [f"{key}: {value}" for key, value in sorted(flag.evidence.items())]


#: The presenter of each detector's flags: (headline without the q, evidence sentences).
PRESENTERS: dict[str, Callable[[Flag, Names], tuple[str, list[str]]]] = {
    "coseating": _coseating,
    "pointflow": _pointflow,
    "sessions": _sessions,
    "same_table": _same_table,
    "boosting": _boosting,
    "softplay": _softplay,
    "together": _together,
    "fed": _fed,
    "kept": _kept,
}


def flag_words(flag: Flag, name: Names) -> FlagWords:
    """The flag in words (module docstring); generic when its evidence is not the shape its
    detector's presenter knows."""
    present = PRESENTERS.get(flag.detector, _generic)
    try:
        headline, details = present(flag, name)
    except (KeyError, TypeError, ValueError, IndexError):
        headline, details = _generic(flag, name)
    return FlagWords(
        flag=flag,
        label=label(DETECTOR_LABELS, flag.detector),
        headline=_qualified(headline, flag.q_value),
        details=details,
    )


# --- the log ---------------------------------------------------------------------------------


def _measures(item: Mapping[str, Any]) -> str:
    parts = []
    if item.get("events"):
        parts.append(_("作废 %(events)s 的对局") % {"events": "、".join(item["events"])})
    if item.get("revocation"):
        parts.append(_("撤销头衔"))
    if item.get("suspend"):
        parts.append(_("停赛"))
    return "、".join(parts) or "—"


def log_details(event: CaseEvent, name: Names) -> list[str]:
    """What a step of the case's log did, in words."""
    data = event.data or {}
    if event.action in (CaseEvent.Action.OPENED, CaseEvent.Action.FLAGGED_AGAIN):
        return [
            _("审计 %(run)s：%(flags)s 个标记，评分 %(score)s")
            % {
                "run": data.get("run", "—"),
                "flags": data.get("flags", "—"),
                "score": decimal(data.get("score")),
            }
        ]
    if event.action == CaseEvent.Action.SANCTIONED:
        return [
            _("%(player)s（%(role)s）：%(measures)s")
            % {
                "player": name(item["player"]),
                "role": label(ROLE_LABELS, item["role"]),
                "measures": _measures(item),
            }
            for item in data.get("sanctions", [])
        ]
    if event.action == CaseEvent.Action.APPEALED and data.get("player"):
        return [_("申诉人：%(player)s") % {"player": name(data["player"])}]
    if event.action == CaseEvent.Action.REVERSED:
        return [
            _("恢复：%(players)s")
            % {"players": "、".join(name(item["player"]) for item in data.get("restored", []))}
        ]
    return []


# --- the case page ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CaseRow:
    """A case in the queue: its players (with their roles) and the events that flagged it."""

    case: Case
    players: list[CasePlayer]
    events: list[str]
    families: list[str]


def queue_rows(cases: list[Case]) -> list[CaseRow]:
    """The page of the queue: each case with its players, events and families in words."""
    codes = selectors.case_event_codes([case.pk for case in cases])
    return [
        CaseRow(
            case=case,
            players=sorted(case.caseplayer_set.all(), key=lambda cp: cp.player.external_id),
            events=codes.get(case.pk, []),
            families=[label(FAMILY_LABELS, family) for family in case.families],
        )
        for case in cases
    ]


@dataclass(frozen=True)
class Candidate:
    """A player of the case as the sanction form offers them: their role so far, title now,
    the events a sanction may void, and whether a sanction of theirs is in force."""

    player: Player
    role: str
    title: str
    events: list[Event]
    sanctioned: bool
    appealing: bool


@dataclass(frozen=True)
class SeatRow:
    seat: int
    key: str
    name: str
    hand: str
    hand_points: int
    score: int
    ip: str | None
    device: str
    in_case: bool


@dataclass(frozen=True)
class GameRow:
    record_id: str
    ended_at: datetime
    event: str
    has_log: bool
    seats: list[SeatRow]


@dataclass
class CasePage:
    """Everything the case page shows (module docstring)."""

    case: Case
    window: tuple[datetime | None, datetime | None]
    names: dict[str, str]
    candidates: list[Candidate]
    flags: list[FlagWords]
    pairs: list[dict[str, Any]]
    matrix: dict[str, Any]
    identifiers: list[dict[str, Any]]
    games: list[GameRow]
    log: list[tuple[CaseEvent, list[str]]]
    sanctions: list[Sanction]
    appeals: list[Appeal]
    linked: int = 0
    chart: dict[str, Any] = field(default_factory=dict)
    #: The shared identifiers as the graph's data (:func:`identifier_graph`).
    graph: dict[str, Any] = field(default_factory=dict)

    def name(self, key: str) -> str:
        return self.names.get(key, key)

    @property
    def appealable(self) -> list[Candidate]:
        """Players with a sanction in force and no pending appeal (who may appeal now)."""
        return [c for c in self.candidates if c.sanctioned and not c.appealing]

    @property
    def pending_appeals(self) -> list[Appeal]:
        return [appeal for appeal in self.appeals if appeal.status == Appeal.Status.PENDING]


def _matrix(keys: list[str], flows: list[dict[str, Any]], name: Names) -> dict[str, Any]:
    """The flow matrix: one row per feeder, one column per beneficiary (the case's players
    in id order), each cell the beneficiary's wins with the feeder at the table and the
    feeder's hand points in them; and the heat map's data (cells ``[column, row, wins,
    points, heaviest]``)."""
    cell = {(row["feeder"], row["beneficiary"]): row for row in flows}
    index = {key: i for i, key in enumerate(keys)}
    rows = [
        {"feeder": name(feeder), "cells": [cell.get((feeder, b)) for b in keys]} for feeder in keys
    ]
    data = [
        [
            index[row["beneficiary"]],
            index[row["feeder"]],
            row["wins"],
            row["points"],
            row["heaviest"],
        ]
        for row in flows
    ]
    return {"players": [name(key) for key in keys], "rows": rows, "data": data}


#: Identifiers longer than this are shortened on the graph (:func:`short_identifier`).
SHORT_IDENTIFIER = 16


def short_identifier(value: str) -> str:
    """An identifier as a graph's node says it: whole up to :data:`SHORT_IDENTIFIER`
    characters, else its first 8 and last 4 (``0f3a9c2e…77b1``): both ends, so two long
    fingerprints that share a prefix still read apart. The list under the graph has it whole."""
    if len(value) <= SHORT_IDENTIFIER:
        return value
    return f"{value[:8]}…{value[-4:]}"


def identifier_graph(
    keys: list[str], identifiers: list[dict[str, Any]], name: Names
) -> dict[str, Any]:
    """The shared devices and addresses as a graph (ECharts ``graph`` series): a node per
    player of the case (``keys``, in that order, by name; one who shares nothing stands
    alone) and per identifier (in ``identifiers``' order, labelled by kind and
    :func:`short_identifier`, the whole one kept as ``full``), a link from each player to
    each identifier they used in the window. Categories: 0 players, then one per
    identifier kind (devices, IP addresses, then any other kind as it comes)."""
    kinds = list(IDENTIFIER_LABELS)
    kinds += sorted({item["kind"] for item in identifiers} - set(kinds))
    others = sorted({key for item in identifiers for key in item["players"]} - set(keys))
    nodes: list[dict[str, Any]] = [
        {"id": f"player:{key}", "name": name(key), "category": 0} for key in keys + others
    ]
    links = []
    for item in identifiers:
        node = f"{item['kind']}:{item['identifier']}"
        words = f"{label(IDENTIFIER_LABELS, item['kind'])} {short_identifier(item['identifier'])}"
        nodes.append(
            {
                "id": node,
                "name": words,
                "full": item["identifier"],
                "category": kinds.index(item["kind"]) + 1,
            }
        )
        links += [{"source": f"player:{key}", "target": node} for key in item["players"]]
    categories = [{"name": _("选手")}] + [{"name": label(IDENTIFIER_LABELS, k)} for k in kinds]
    return {"nodes": nodes, "links": links, "categories": categories}


def _games(games: list[dict[str, Any]], keys: set[str], name: Names) -> list[GameRow]:
    details = selectors.linked_games([game["game"] for game in games])
    rows = []
    for game in games:
        linked = details.get(game["game"])
        rows.append(
            GameRow(
                record_id=game["game"],
                ended_at=game["ended_at"],
                event=linked.event if linked else "—",
                has_log=bool(linked and linked.has_log),
                seats=[
                    SeatRow(
                        seat=seat["seat"],
                        key=seat["player"],
                        name=name(seat["player"]),
                        hand=linked.hands.get(seat["seat"], "") if linked else "",
                        hand_points=seat["hand_points"],
                        score=seat["score"],
                        ip=seat["ip"],
                        device=seat["device"],
                        in_case=seat["player"] in keys,
                    )
                    for seat in game["seats"]
                ],
            )
        )
    return rows


def case_page(*, case: Case) -> CasePage:
    """Read the case's evidence (``integrity.selectors.case_evidence``) and put it in words."""
    evidence = selectors.case_evidence(case=case)
    keys = sorted(cp.player.external_id for cp in evidence.players)
    seated = {seat["player"] for game in evidence.games for seat in game["seats"]}
    names = dict(
        Player.objects.filter(external_id__in=seated | set(keys)).values_list("external_id", "name")
    )

    def name(key: str) -> str:
        return names.get(key, key)

    sanctions = list(
        case.sanctions.select_related("player", "decided_by")
        .prefetch_related(Prefetch("events", queryset=Event.objects.order_by("starts_at")))
        .order_by("player__external_id", "id")
    )
    appeals = list(case.appeals.select_related("player", "decided_by").order_by("filed_at", "id"))
    in_force = {s.player_id for s in sanctions if s.reversed_at is None}
    appealing = {a.player_id for a in appeals if a.status == Appeal.Status.PENDING}
    titles = dict(
        PlayerTitle.objects.filter(player__in=[cp.player for cp in evidence.players]).values_list(
            "player_id", "status"
        )
    )
    events = selectors.case_player_events(case=case, window=evidence.window)
    candidates = [
        Candidate(
            player=cp.player,
            role=cp.role,
            title=titles.get(cp.player_id, "none"),
            events=events.get(cp.player_id, []),
            sanctioned=cp.player_id in in_force,
            appealing=cp.player_id in appealing,
        )
        for cp in evidence.players
    ]
    pairs = [
        {
            "a": name(pair["players"][0]),
            "b": name(pair["players"][1]),
            "together": pair["together"],
            "apart": pair["apart"],
            "expected": decimal(pair["expected"]),
        }
        for pair in evidence.pairs
    ]
    identifiers = [
        {
            "kind": label(IDENTIFIER_LABELS, item["kind"]),
            "identifier": item["identifier"],
            "players": "、".join(name(key) for key in item["players"]),
        }
        for item in evidence.identifiers
    ]
    matrix = _matrix(keys, evidence.flows, name)
    return CasePage(
        case=case,
        window=evidence.window,
        names=names,
        candidates=candidates,
        flags=[flag_words(flag, name) for flag in evidence.flags],
        pairs=pairs,
        matrix=matrix,
        identifiers=identifiers,
        games=_games(evidence.games, set(keys), name),
        log=[(event, log_details(event, name)) for event in evidence.events],
        sanctions=sanctions,
        appeals=appeals,
        linked=len(evidence.games),
        graph=identifier_graph(keys, evidence.identifiers, name),
        chart={
            "players": matrix["players"],
            "data": matrix["data"],
            "labels": {
                "feeder": _("输分者"),
                "beneficiary": _("受益者"),
                "wins": _("同桌赢局"),
                "points": _("输出分数"),
            },
        },
    )


# --- a sanction's plan -----------------------------------------------------------------------

#: Title history kinds a plan may add beyond ``web.templatetags.tour.CHANGE_KIND_LABELS``.
HISTORY_LABELS = {
    "ignored": gettext_lazy("资格未带来头衔"),
    "retracted": gettext_lazy("撤回"),
}


def _title_words(state: tuple[str, date | None, date | None]) -> str:
    status, until, since = state
    text = title_status_label(status)
    if status == "master" and until:
        text += _("（有效期至 %(date)s）") % {"date": until.isoformat()}
    if status == "lifetime" and since:
        text += _("（%(date)s 起）") % {"date": since.isoformat()}
    return text


def _history(kind: str) -> str:
    return str(HISTORY_LABELS[kind]) if kind in HISTORY_LABELS else change_kind_label(kind)


def plan_title_lines(plan: SanctionPlan, name: Names) -> list[str]:
    """The titles a sanction's plan changes, in words: each player's title before → after,
    then the title history it adds (a retraction names what it takes back)."""
    lines = [
        f"{name(key)}：{_title_words(before)} → {_title_words(after)}"
        for key, before, after in plan.titles
    ]
    for key, kind, on, retracted in plan.changes:
        change = _history(kind)
        if kind == "retracted" and retracted:
            change = _("撤回此前的“%(change)s”") % {"change": _history(retracted)}
        lines.append(
            _("%(player)s：%(change)s（%(on)s）")
            % {"player": name(key), "change": change, "on": on.isoformat()}
        )
    return lines


def _names(keys: Iterable[str], name: Names) -> str:
    return "、".join(name(key) for key in keys) or "—"


def plan_step_lines(diff: Mapping[str, Any], name: Names) -> list[str]:
    """A correction's diff (``tournaments.services.corrections``) in words, players by name:
    the seats voided, the champion, who advances, the fed event's entries, then what
    ``web.templatetags.tour.diff_lines`` says of the standings, the fed event and the
    champion's qualification."""
    lines = []
    if isinstance(diff.get("seats"), int):
        lines.append(_("作废 %(n)s 个座位的成绩") % {"n": diff["seats"]})
    champion = diff.get("champion") or {}
    if champion and champion.get("before") != champion.get("after"):
        lines.append(
            _("冠军：%(before)s → %(after)s")
            % {
                "before": name(champion["before"]) if champion.get("before") else "—",
                "after": name(champion["after"]) if champion.get("after") else "—",
            }
        )
    for key, title in (("advanced", _("晋级")), ("entries", _("下游赛事名单"))):
        moved = diff.get(key) or {}
        if moved.get("added") or moved.get("removed"):
            lines.append(
                _("%(what)s：加入 %(added)s，移出 %(removed)s")
                % {
                    "what": title,
                    "added": _names(moved.get("added", []), name),
                    "removed": _names(moved.get("removed", []), name),
                }
            )
    rest: dict[str, Any] = {}
    for key, value in diff.items():
        if key in ("seats", "champion", "advanced", "entries") and (
            key != "seats" or isinstance(value, int)
        ):
            continue
        if key == "standings":
            value = [{**row, "player": name(row["player"])} for row in value]
        elif key == "standings_removed":
            value = [name(player) for player in value]
        elif key == "qualifications":
            value = {k: name(v) if v else v for k, v in value.items()}
        rest[key] = value
    return lines + diff_lines(rest)


#: The corrections a sanction logs (``tournaments.models.Correction.Action``), in words.
CORRECTION_LABELS = {
    "void_player": gettext_lazy("作废该选手的对局"),
    "restore_player": gettext_lazy("恢复该选手的对局"),
}


def plan_names(plan: SanctionPlan, known: Mapping[str, str]) -> Names:
    """Names for every player a sanction's plan mentions (``known`` first, the rest read in
    one query)."""
    keys = {key for key, _before, _after in plan.titles}
    keys |= {key for key, *_rest in plan.changes}
    for step in plan.steps:
        diff = step["diff"]
        keys.add(step["player"])
        keys |= {row["player"] for row in diff.get("standings", [])}
        keys |= set(diff.get("standings_removed", []))
        for part in ("champion", "qualifications"):
            keys |= {v for v in (diff.get(part) or {}).values() if isinstance(v, str)}
        for part in ("advanced", "entries"):
            moved = diff.get(part) or {}
            keys |= set(moved.get("added", [])) | set(moved.get("removed", []))
    names = dict(known)
    missing = sorted(keys - set(names))
    names.update(Player.objects.filter(external_id__in=missing).values_list("external_id", "name"))
    return lambda key: names.get(key, key)


def plan_steps(plan: SanctionPlan, name: Names) -> list[dict[str, Any]]:
    """Each correction of a sanction's plan: event, player, what it does and its lines."""
    return [
        {
            "event": step["event"],
            "player": name(step["player"]),
            "action": label(CORRECTION_LABELS, step["action"]),
            "lines": plan_step_lines(step["diff"], name),
        }
        for step in plan.steps
    ]


# --- a game's moves --------------------------------------------------------------------------


def _cards(play: Any) -> str:
    return " ".join(play) if isinstance(play, list) else str(play)


def _move(move: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    """One move of a move log v1 (SPEC §9) in words."""
    if "flip" in move:
        return _("翻开 %(card)s") % {"card": move["flip"]}
    if "play" in move:
        text = _("%(who)s出 %(cards)s") % {
            "who": who(move.get("seat")),
            "cards": _cards(move["play"]),
        }
        if move.get("color"):
            text += " " + _("选%(colour)s色") % {"colour": label(COLOUR_LABELS, move["color"])}
        if "swap" in move:
            text += " " + _("与%(other)s换牌") % {"other": who(move["swap"])}
        return text
    if "draw" in move:
        return _("%(who)s摸 %(n)s 张") % {"who": who(move.get("seat")), "n": move["draw"]}
    if move.get("pass"):
        return _("%(who)s过") % {"who": who(move.get("seat"))}
    if move.get("challenge"):
        return _("%(who)s质疑 +4") % {"who": who(move.get("seat"))}
    if move.get("uno"):
        return _("%(who)s喊 UNO") % {"who": who(move.get("seat"))}
    if "catch" in move:
        return _("%(who)s抓%(other)s没喊 UNO") % {
            "who": who(move.get("seat")),
            "other": who(move["catch"]),
        }
    if "reshuffle" in move:
        return _("弃牌堆洗成新牌堆（%(n)s 张）") % {"n": len(move["reshuffle"])}
    if "end" in move:
        return _("时间到，本局结束") if move["end"] == "time" else str(move["end"])
    return ", ".join(f"{key}={value}" for key, value in move.items() if key != "t")


@dataclass(frozen=True)
class MoveRow:
    number: int
    at: str
    words: str
    auto: bool


def move_rows(game: Game) -> list[MoveRow]:
    """The game's move log, one row a move: its number, time since the start (m:ss.s), what
    happened, and whether the server made it for a player whose timer ran out."""
    seats = {seat.seat: seat.player.name for seat in game.seats.all()}

    def who(seat: Any) -> str:
        return seats.get(seat, _("%(n)s 号座") % {"n": seat})

    log = game.log if isinstance(game.log, dict) else {}
    rows = []
    for number, move in enumerate(log.get("moves", []), start=1):
        millis = int(move.get("t", 0))
        at = f"{millis // 60000}:{millis % 60000 / 1000:04.1f}"
        rows.append(MoveRow(number, at, _move(move, who), bool(move.get("auto"))))
    return rows


def dealt(game: Game) -> dict[int, str]:
    """Each seat's dealt hand from the game's move log (by seat number)."""
    log = game.log if isinstance(game.log, dict) else {}
    return {i: " ".join(hand) for i, hand in enumerate(log.get("deal", []))}
