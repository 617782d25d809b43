"""Forms of the reviewer's case console (SPEC §7): the queue's filters and each action on a
case, every action at the case version the reviewer saw (``expected_version``)."""

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from integrity.models import CasePlayer
from integrity.services.cases import Decision
from tournaments.models import Event
from web.case_evidence import FAMILY_LABELS, Candidate

#: The queue's states (``integrity.selectors.QUEUE_STATES``); empty means ``pending``.
STATE_CHOICES = [
    ("", _("未决（待领取与处理中）")),
    ("open", _("待领取")),
    ("taken", _("处理中")),
    ("decided", _("已决定")),
    ("all", _("全部")),
]


class CaseQueueForm(forms.Form):
    """The queue's filters: state, detector family, event."""

    state = forms.ChoiceField(choices=STATE_CHOICES, required=False, label=_("状态"))
    family = forms.ChoiceField(required=False, label=_("检测类别"))
    event = forms.ChoiceField(required=False, label=_("赛事"))

    def __init__(self, *args: Any, events: list[Event], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        family: forms.ChoiceField = self.fields["family"]  # type: ignore[assignment]
        family.choices = [("", _("全部类别")), *FAMILY_LABELS.items()]
        event: forms.ChoiceField = self.fields["event"]  # type: ignore[assignment]
        event.choices = [("", _("全部赛事")), *((e.code, e.code) for e in events)]

    def filters(self) -> dict[str, Any]:
        """The selector's arguments (``integrity.selectors.case_queue``); none when invalid."""
        if not self.is_valid():
            return {"state": "pending"}
        data = self.cleaned_data
        return {
            "state": data["state"] or "pending",
            "family": data["family"] or None,
            "event": data["event"] or None,
        }


class VersionForm(forms.Form):
    """An action at the case version the reviewer saw: take."""

    expected_version = forms.IntegerField(min_value=0, widget=forms.HiddenInput)


class DismissForm(VersionForm):
    reason = forms.CharField(max_length=500, label=_("结案理由"))


class AppealFileForm(VersionForm):
    """A sanctioned player's appeal, recorded by a reviewer."""

    player = forms.ChoiceField(label=_("申诉人"))
    statement = forms.CharField(
        max_length=4000, widget=forms.Textarea(attrs={"rows": 3}), label=_("申诉陈述")
    )

    def __init__(self, *args: Any, candidates: list[Candidate], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.by_key = {c.player.external_id: c for c in candidates}
        player: forms.ChoiceField = self.fields["player"]  # type: ignore[assignment]
        player.choices = [(key, f"{c.player.name}（{key}）") for key, c in self.by_key.items()]


class AppealDecideForm(VersionForm):
    """Uphold (every sanction of the case reversed) or reject an appeal."""

    decision = forms.ChoiceField(choices=[("uphold", _("成立")), ("reject", _("驳回"))])
    reason = forms.CharField(max_length=500, label=_("裁决理由"))


#: The roles a sanction gives (SPEC §7 beneficiaries and helpers); empty: not sanctioned.
ROLE_CHOICES = [
    ("", _("不处罚")),
    (CasePlayer.Role.BENEFICIARY, _("受益者")),
    (CasePlayer.Role.HELPER, _("协助者")),
]


class SanctionForm(VersionForm):
    """A sanction: per player of the case a role (or none), the events whose games are voided,
    titles revoked, suspension; one reason. ``confirm`` is set once the plan was shown."""

    reason = forms.CharField(max_length=500, label=_("处罚理由"))
    confirm = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args: Any, candidates: list[Candidate], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.candidates = candidates
        for c in candidates:
            key = c.player.external_id
            self.fields[f"role-{key}"] = forms.ChoiceField(
                choices=ROLE_CHOICES, required=False, label=_("身份")
            )
            self.fields[f"events-{key}"] = forms.MultipleChoiceField(
                choices=[(e.code, e.code) for e in c.events],
                required=False,
                widget=forms.CheckboxSelectMultiple,
                label=_("作废这些赛事中的对局"),
            )
            self.fields[f"revoke-{key}"] = forms.BooleanField(required=False, label=_("撤销头衔"))
            self.fields[f"suspend-{key}"] = forms.BooleanField(required=False, label=_("停赛"))

    def rows(self) -> list[dict[str, Any]]:
        """Per player: the candidate and its role, events, revoke and suspend fields."""
        return [
            {
                "candidate": c,
                **{
                    name: self[f"{name}-{c.player.external_id}"]
                    for name in ("role", "events", "revoke", "suspend")
                },
            }
            for c in self.candidates
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        named = 0
        for c in self.candidates:
            key = c.player.external_id
            measures = [data.get(f"{name}-{key}") for name in ("events", "revoke", "suspend")]
            if not data.get(f"role-{key}"):
                if any(measures):
                    self.add_error(f"role-{key}", _("请选择身份：受益者或协助者。"))
                continue
            named += 1
            if not any(measures):
                self.add_error(f"role-{key}", _("请至少选择一项处罚：作废对局、撤销头衔或停赛。"))
        if not named:
            raise forms.ValidationError(_("请至少为一名选手选择身份和处罚。"))
        return data

    def decisions(self) -> list[Decision]:
        """The checked decisions, in the case's player order (valid forms only)."""
        data, chosen = self.cleaned_data, []
        for c in self.candidates:
            key = c.player.external_id
            if not data.get(f"role-{key}"):
                continue
            codes = set(data.get(f"events-{key}", []))
            chosen.append(
                Decision(
                    player=c.player,
                    role=data[f"role-{key}"],
                    void_games=bool(codes),
                    events=tuple(e for e in c.events if e.code in codes),
                    revoke_titles=bool(data.get(f"revoke-{key}")),
                    suspend=bool(data.get(f"suspend-{key}")),
                )
            )
        return chosen

    def carried(self) -> list[tuple[str, Any]]:
        """The checked input as (name, value) pairs, for the confirmation's hidden fields."""
        data = self.cleaned_data
        pairs: list[tuple[str, Any]] = [
            ("expected_version", data["expected_version"]),
            ("reason", data["reason"]),
        ]
        for c in self.candidates:
            key = c.player.external_id
            if not data.get(f"role-{key}"):
                continue
            pairs.append((f"role-{key}", data[f"role-{key}"]))
            pairs += [(f"events-{key}", code) for code in data.get(f"events-{key}", [])]
            for name in ("revoke", "suspend"):
                if data.get(f"{name}-{key}"):
                    pairs.append((f"{name}-{key}", "on"))
        return pairs
