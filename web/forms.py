"""Forms of the public pages and reviewer screens: query parameters, checked."""

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.provinces import PROVINCE_CHOICES
from tournaments.models.events import default_quotas
from web.templatetags.tour import EVENT_STATE_LABELS, kind_label

#: The registry's lists (SPEC §6): current holders, by title, and the history.
REGISTRY_VIEWS = [
    ("current", _("全部现任")),
    ("master", _("大师")),
    ("lifetime", _("终身大师")),
    ("lapsed", _("已失效")),
    ("revoked", _("已撤销")),
]


class DateInput(forms.DateInput):
    """A browser date picker: its value is always ISO (``YYYY-MM-DD``), whatever the
    language's date format."""

    input_type = "date"

    def __init__(self, attrs: dict[str, str] | None = None) -> None:
        super().__init__(attrs=attrs, format="%Y-%m-%d")


class AsOfForm(forms.Form):
    as_of = forms.DateField(label=_("查询日期"), widget=DateInput)


class ProvinceField(forms.ChoiceField):
    def __init__(self, **kwargs: object) -> None:
        super().__init__(
            choices=[("", _("全国")), *PROVINCE_CHOICES],
            required=False,
            label=_("省份"),
            **kwargs,  # type: ignore[arg-type]
        )


class BoardForm(forms.Form):
    """A leaderboard's tab (province) and player search (external id or name)."""

    province = ProvinceField()
    q = forms.CharField(required=False, max_length=64, label=_("搜索选手"))


class RegistryForm(forms.Form):
    province = ProvinceField(widget=forms.Select(attrs={"data-autosubmit": ""}))
    view = forms.ChoiceField(choices=REGISTRY_VIEWS, required=False)


class VerifyForm(forms.Form):
    code = forms.CharField(max_length=32, label=_("验证码"))


class DecisionForm(forms.Form):
    """A reviewer's decision at the version they saw (optimistic locking, SPEC §6)."""

    expected_version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    reason = forms.CharField(max_length=500, required=False, label=_("理由"))


#: An event's state (web.selectors.event_state) as the index's filter offers it.
EVENT_STATE_CHOICES = [("", _("全部状态")), *EVENT_STATE_LABELS.items()]


class EventIndexForm(forms.Form):
    """The event index's filters: kind and state."""

    kind = forms.ChoiceField(required=False, label=_("类型"))
    state = forms.ChoiceField(choices=EVENT_STATE_CHOICES, required=False, label=_("状态"))

    def __init__(self, *args: object, kinds: list[tuple[str, str]], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        kind: forms.ChoiceField = self.fields["kind"]  # type: ignore[assignment]
        kind.choices = [("", _("全部类型")), *kinds]


class SeatFindForm(forms.Form):
    """ "Where do I sit": a player's id or a part of their name."""

    q = forms.CharField(required=False, max_length=64, label=_("选手 ID 或昵称"))


#: The largest results file the console takes (bytes); bigger files go through
#: ``manage.py import_games``.
UPLOAD_MAX_BYTES = 50 * 1024 * 1024


class UploadForm(forms.Form):
    """A results file: game records v1, one a line (``.jsonl``), or gzipped (``.jsonl.gz``)."""

    file = forms.FileField(label=_("成绩文件（.jsonl 或 .jsonl.gz）"))

    def clean_file(self) -> object:
        file = self.cleaned_data["file"]
        if not file.name.endswith((".jsonl", ".jsonl.gz", ".gz")):
            raise forms.ValidationError(_("只接受 .jsonl 或 .jsonl.gz 文件。"))
        if file.size > UPLOAD_MAX_BYTES:
            limit = {"mb": UPLOAD_MAX_BYTES >> 20}
            raise forms.ValidationError(
                _("文件超过 %(mb)s MB：请用 import_games 命令导入。") % limit
            )
        return file


class FinaliseForm(forms.Form):
    force = forms.BooleanField(required=False, label=_("赛事时段未结束也确认"))


class VoidForm(forms.Form):
    """Void one game of the event, with the reason logged; ``confirm`` after the plan."""

    game = forms.CharField(max_length=64, label=_("对局 ID"))
    reason = forms.CharField(max_length=500, label=_("理由"))
    confirm = forms.BooleanField(required=False, widget=forms.HiddenInput)


class DateTimeInput(forms.DateTimeInput):
    """A browser date-and-time picker (``YYYY-MM-DDTHH:MM``), read in the tour's zone."""

    input_type = "datetime-local"

    def __init__(self, attrs: dict[str, str] | None = None) -> None:
        super().__init__(attrs=attrs, format="%Y-%m-%dT%H:%M")


#: The rules of play a season form offers (SPEC §3): each preset, and each switch with its
#: values, in words an organiser reads.
PRESET_LABELS = {
    "classic": _("经典（美泰规则）"),
    "yiqiyounuo": _("一起优诺（网易手游）"),
    "ubisoft": _("育碧 UNO"),
    "wango": _("WANGO"),
}
SWITCH_LABELS: dict[str, tuple[Any, dict[Any, Any]]] = {
    "deck": (
        _("牌组"),
        {
            "classic": _("经典 108 张"),
            "classic-double": _("经典双副 216 张"),
            "happy": _("欢乐场 120 张（同色全出、反弹）"),
            "happy-double": _("欢乐场双副 240 张"),
        },
    ),
    "challenge": (_("+4 质疑"), {True: _("可质疑"), False: _("不虚张声势（不可质疑）")}),
    "stacking": (
        _("叠加"),
        {
            "none": _("不可叠加"),
            "same": _("同类叠加（育碧）"),
            "seeds": _("+2/+4 叠 +2，+4 只叠 +4"),
            "forced": _("有牌必叠（一起优诺）"),
        },
    ),
    "seven_zero": (_("7-0 换牌"), {True: _("开"), False: _("关")}),
    "jump_in": (
        _("抢牌"),
        {
            "none": _("不可抢牌"),
            "identical_numbers": _("同色同数字可抢"),
            "all": _("任意相同牌可抢"),
        },
    ),
    "draw": (
        _("摸牌"),
        {
            "one": _("摸 1 张，可出牌或过"),
            "one_only": _("摸 1 张，只能出这张（WANGO）"),
            "until_playable": _("摸到能出为止（抓到匹配）"),
        },
    ),
    "forced_play": (_("强制出牌"), {True: _("开"), False: _("关")}),
    "multi_play": (_("叠牌（一次出多张）"), {True: _("开"), False: _("关")}),
    "last_card_number": (_("最后一张须为数字牌"), {True: _("开"), False: _("关")}),
    "two_player_reverse": (
        _("双人时的反转"),
        {"skip": _("视同跳过"), "reverse": _("只改方向")},
    ),
    "start_card": (
        _("首张牌"),
        {"mattel": _("美泰：+4 重翻，功能牌生效"), "number": _("翻到数字牌为止")},
    ),
}
SWITCH_NUMBERS = {
    "hand_size": _("起手张数"),
    "turn_seconds": _("每回合秒数"),
    "final_minute_turn_seconds": _("最后一分钟每回合秒数"),
    "game_seconds": _("每局时限（秒）"),
}


def _value_key(value: object) -> str:
    """A switch value as a form choice: "true"/"false" for a flag, else itself."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class SeasonForm(forms.Form):
    """A new season: its year, first Monday, name, weeks, its rules of play (a preset and
    any switch changed, SPEC §3) and the quotas of SPEC §2 (each kind: national and
    per-province places to the event it feeds), the defaults filled in."""

    year = forms.IntegerField(min_value=2000, max_value=2100, label=_("年份"))
    start = forms.DateField(widget=DateInput, label=_("第一周的星期一"))
    name = forms.CharField(max_length=100, required=False, label=_("名称"))
    weeks = forms.IntegerField(min_value=1, max_value=60, initial=52, label=_("周数"))
    preset = forms.ChoiceField(
        choices=list(PRESET_LABELS.items()), initial="classic", label=_("规则预设")
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        keep = [("", _("按预设"))]
        for switch, (label, values) in SWITCH_LABELS.items():
            choices = keep + [(_value_key(value), text) for value, text in values.items()]
            self.fields[f"rule_{switch}"] = forms.ChoiceField(
                choices=choices, required=False, label=label
            )
        for switch, label in SWITCH_NUMBERS.items():
            self.fields[f"rule_{switch}"] = forms.IntegerField(
                min_value=1, max_value=3600, required=False, label=label
            )
        for kind, places in default_quotas().items():
            for scope, label in (("national", _("全国名额")), ("per_province", _("各省名额"))):
                self.fields[f"quota_{kind}_{scope}"] = forms.IntegerField(
                    min_value=0,
                    initial=places[scope],
                    label=label,
                    widget=forms.NumberInput(attrs={"aria-label": f"{kind_label(kind)} {label}"}),
                )

    def rule_fields(self) -> list[forms.BoundField]:
        """The switch fields, in SPEC order, for the form's rules section."""
        return [self[f"rule_{switch}"] for switch in (*SWITCH_LABELS, *SWITCH_NUMBERS)]

    def play_ruleset(self) -> dict[str, Any]:
        """The rules of play chosen: the preset and the switches changed from it."""
        switches: dict[str, Any] = {}
        for switch, (_label, values) in SWITCH_LABELS.items():
            chosen = self.cleaned_data.get(f"rule_{switch}")
            if chosen:
                switches[switch] = next(v for v in values if _value_key(v) == chosen)
        for switch in SWITCH_NUMBERS:
            number = self.cleaned_data.get(f"rule_{switch}")
            if number is not None:
                switches[switch] = number
        return {"preset": self.cleaned_data["preset"], "switches": switches}

    def quota_rows(self) -> list[tuple[str, forms.BoundField, forms.BoundField]]:
        """(kind, national field, per-province field) for the form's quota table."""
        return [
            (kind, self[f"quota_{kind}_national"], self[f"quota_{kind}_per_province"])
            for kind in default_quotas()
        ]

    def quotas(self) -> dict[str, dict[str, int]]:
        return {
            kind: {
                scope: self.cleaned_data[f"quota_{kind}_{scope}"]
                for scope in ("national", "per_province")
            }
            for kind in default_quotas()
        }


class EventChangeForm(forms.Form):
    """Move an event to a new window, or cancel it; either way with the reason logged."""

    action = forms.ChoiceField(
        choices=[("move", _("改期")), ("cancel", _("取消赛事"))], label=_("操作")
    )
    starts_at = forms.DateTimeField(widget=DateTimeInput, required=False, label=_("开始"))
    ends_at = forms.DateTimeField(widget=DateTimeInput, required=False, label=_("结束"))
    reason = forms.CharField(max_length=500, label=_("理由"))

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        if data.get("action") == "move" and not (data.get("starts_at") and data.get("ends_at")):
            raise forms.ValidationError(_("改期需要新的开始和结束时间。"))
        return data


class SeatRoundForm(forms.Form):
    """Seat the next round; the draw's seed is recorded (drawn at random when left empty).
    Its tables play one game (places entered) or a match to a target, scored game by game
    from the hands (SPEC §4 "Matches at one table")."""

    seed = forms.IntegerField(
        min_value=0, max_value=2**63 - 1, required=False, label=_("抽签种子（留空则随机并记录）")
    )
    format = forms.ChoiceField(
        choices=[
            ("game", _("单局（录入名次）")),
            ("cumulative", _("累积法比赛（先到目标分者胜）")),
            ("elimination", _("淘汰法比赛（到目标分者出局）")),
        ],
        initial="game",
        required=False,
        label=_("每桌赛制"),
    )
    target = forms.IntegerField(
        min_value=1, max_value=100_000, initial=500, required=False, label=_("目标分")
    )


class TeamScheduleForm(forms.Form):
    """Seat every round of a rotating-partners team event (SPEC §4 "Team events")."""

    seed = forms.IntegerField(
        min_value=0, max_value=2**63 - 1, required=False, label=_("抽签种子（留空则随机并记录）")
    )
    games_per_round = forms.IntegerField(min_value=1, max_value=20, initial=4, label=_("每轮局数"))


class TableGameForm(forms.Form):
    """One game of a match or partners table: each seat's hand left, as card codes."""

    reason = forms.CharField(max_length=500, required=False, label=_("更正理由"))


class InviteForm(forms.Form):
    """Invite players into an event with a closed entry: their ids, with the reason logged."""

    players = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}), label=_("选手 ID（空格或逗号分隔）")
    )
    reason = forms.CharField(max_length=500, label=_("理由"))

    def ids(self) -> list[str]:
        return [key for key in self.cleaned_data["players"].replace(",", " ").split() if key]


#: The most grants one bulk decision takes (a queue page shows 20).
BULK_MOST = 100


class VersionedItemsField(forms.Field):
    """Chosen grants as ``"<id>:<version>"`` values (a checkbox each): ``[(id, version)]``,
    each grant once, at the version the reviewer saw it."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value: Any) -> list[tuple[int, int]]:
        if not value:
            return []
        values = value if isinstance(value, list | tuple) else [value]
        items: dict[int, int] = {}
        for raw in values:
            pk, colon, version = str(raw).partition(":")
            if not (colon and pk.isdigit() and version.isdigit()):
                raise forms.ValidationError(_("所选项目无效，请重新载入队列后再试。"))
            if int(pk) in items and items[int(pk)] != int(version):
                raise forms.ValidationError(_("同一项头衔申请选了两个版本，请重新载入队列。"))
            items[int(pk)] = int(version)
        return list(items.items())

    def validate(self, value: list[tuple[int, int]]) -> None:
        if not value:
            raise forms.ValidationError(_("请至少勾选一项头衔申请。"))
        if len(value) > BULK_MOST:
            raise forms.ValidationError(_("一次最多决定 %(most)s 项。") % {"most": BULK_MOST})


class BulkDecisionForm(forms.Form):
    """Approve or reject several grants, each at the version the reviewer saw (SPEC §6);
    a rejection needs a reason."""

    items = VersionedItemsField(label=_("所选头衔申请"))
    decision = forms.ChoiceField(
        choices=[("approve", _("批准")), ("reject", _("驳回"))],
        label=_("决定"),
        error_messages={
            "required": _("请选择批准或驳回。"),
            "invalid_choice": _("未知的决定“%(value)s”。"),
        },
    )
    reason = forms.CharField(max_length=500, required=False, label=_("理由"))

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("decision") == "reject" and not data.get("reason", "").strip():
            self.add_error("reason", _("驳回须填写理由。"))
        return data
