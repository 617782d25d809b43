"""Forms of the public pages and reviewer screens: query parameters, checked."""

from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.provinces import PROVINCE_CHOICES
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
