"""Forms of the public pages and reviewer screens: query parameters, checked."""

from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.provinces import PROVINCE_CHOICES
from tournaments.models.events import default_quotas
from web.templatetags.tour import EVENT_STATE_LABELS

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


class SeasonForm(forms.Form):
    """A new season: its year, first Monday, name, weeks and the quotas of SPEC §2 (each kind:
    national and per-province places to the event it feeds), the defaults filled in."""

    year = forms.IntegerField(min_value=2000, max_value=2100, label=_("年份"))
    start = forms.DateField(widget=DateInput, label=_("第一周的星期一"))
    name = forms.CharField(max_length=100, required=False, label=_("名称"))
    weeks = forms.IntegerField(min_value=1, max_value=60, initial=52, label=_("周数"))

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        for kind, places in default_quotas().items():
            for scope, label in (("national", _("全国名额")), ("per_province", _("各省名额"))):
                self.fields[f"quota_{kind}_{scope}"] = forms.IntegerField(
                    min_value=0, initial=places[scope], label=label
                )

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
    """Seat the next round; the draw's seed is recorded (drawn at random when left empty)."""

    seed = forms.IntegerField(
        min_value=0, max_value=2**63 - 1, required=False, label=_("抽签种子（留空则随机并记录）")
    )


class InviteForm(forms.Form):
    """Invite players into an event with a closed entry: their ids, with the reason logged."""

    players = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}), label=_("选手 ID（空格或逗号分隔）")
    )
    reason = forms.CharField(max_length=500, label=_("理由"))

    def ids(self) -> list[str]:
        return [key for key in self.cleaned_data["players"].replace(",", " ").split() if key]
