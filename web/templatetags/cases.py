"""Template labels of the reviewer's case console (SPEC §7), translated: a case's status (and
whether a reviewer has taken it), players' roles, log steps and appeals."""

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext

from integrity.models import Case
from web.case_evidence import (
    ACTION_LABELS,
    APPEAL_STATUS_LABELS,
    CASE_STATUS_LABELS,
    ROLE_LABELS,
    label,
)

register = template.Library()


@register.filter
def role_label(role: str) -> str:
    return label(ROLE_LABELS, role)


@register.filter
def action_label(action: str) -> str:
    return label(ACTION_LABELS, action)


@register.filter
def appeal_status_label(status: str) -> str:
    return label(APPEAL_STATUS_LABELS, status)


@register.simple_tag
def case_status_badge(case: Case) -> SafeString:
    """The case's status as a badge; an open case a reviewer took says so."""
    if case.status == Case.Status.OPEN and case.assigned_to_id is not None:
        text = gettext("处理中")
    else:
        text = label(CASE_STATUS_LABELS, case.status)
    return format_html('<span class="badge case-status case-{}">{}</span>', case.status, text)
