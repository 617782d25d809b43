"""Reviewer screens (SPEC §1 title reviewers, §6 review): the queue of pending grants with
their evidence, approve / reject at the version the reviewer saw, one by one or several at
once, and the open integrity cases (each opens its page in the case console,
``web.views.cases``).

Each grant shows its evidence in words with links to the event, the player's results in it
and its integrity audit, who recorded it and at which version, and — before the reviewer
tries — why approving it would be refused (four eyes, a held player, an audit not cleared):
``web.grant_evidence``.

Signed-in reviewers only (``accounts.roles.REVIEWER``; superusers hold every role); anyone
else signed in gets 403, anonymous visitors the login page. Decisions go through
``flows.grants.qualification_approve`` / ``titles.services.qualification_reject``; a
conflict (someone decided first, a held player, an audit not cleared, four eyes) comes back
as a message on the queue. A bulk decision makes the same call for each chosen grant, at the
version the reviewer saw it, each in its own transaction: a refused grant writes nothing and
does not stop the others, and the message says what was decided and why each refused one
was. Bad input (nothing chosen, an unknown decision, a rejection without a reason) writes
nothing.
"""

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from accounts.roles import REVIEWER
from core.errors import ServiceError, said
from flows import grants
from flows.grants import review_items
from titles import services
from titles.models import Qualification
from titles.selectors import review_queue
from web import grant_evidence
from web.access import role_required
from web.forms import BulkDecisionForm, DecisionForm
from web.grant_evidence import REFUSALS
from web.selectors import cases_open

QUEUE_PAGE_SIZE = 20
CASES_SHOWN = 50


reviewer_required = role_required(REVIEWER)


@reviewer_required
def queue(request: HttpRequest) -> HttpResponse:
    queued = review_queue().select_related("created_by")
    page = Paginator(queued, QUEUE_PAGE_SIZE).get_page(request.GET.get("page"))
    cases = [
        (case, reverse("web:review-case", args=[case.pk])) for case in cases_open()[:CASES_SHOWN]
    ]
    items = grant_evidence.grants(review_items(list(page.object_list)), viewer_id=request.user.pk)
    return render(request, "web/review.html", {"page": page, "items": items, "cases": cases})


_DECISIONS = {
    "approve": grants.qualification_approve,
    "reject": services.qualification_reject,
}


@require_POST
@reviewer_required
def decide(request: HttpRequest, pk: int, decision: str) -> HttpResponse:
    qualification = Qualification.objects.select_related("player").filter(pk=pk).first()
    if qualification is None or decision not in _DECISIONS:
        raise Http404("no such qualification")
    form = DecisionForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("决定无效：请重新载入队列后再试。"))
        return redirect("web:review")
    try:
        _DECISIONS[decision](
            qualification=qualification,
            by=request.user,  # type: ignore[arg-type]
            reason=form.cleaned_data["reason"],
            expected_version=form.cleaned_data["expected_version"],
        )
    except ServiceError as exc:
        messages.error(request, f"{_named(qualification)}: {_refusal(exc)}")
    else:
        done = _("已批准") if decision == "approve" else _("已驳回")
        messages.success(request, f"{done}: {_named(qualification)}")
    return redirect("web:review")


def _named(qualification: Qualification) -> str:
    return f"{qualification.player.name} · {qualification.source}"


def _refusal(exc: ServiceError) -> str:
    """Why the service refused a decision, in words (its own message for any other)."""
    reason = exc.detail.get("reason") if isinstance(exc.detail, dict) else None
    return str(REFUSALS[reason]) if reason in REFUSALS else said(exc)


@require_POST
@reviewer_required
def bulk(request: HttpRequest) -> HttpResponse:
    """Approve or reject the chosen grants, each at the version the reviewer saw it and in
    its own transaction (module docstring)."""
    form = BulkDecisionForm(request.POST)
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, _("批量决定无效，未作任何改动：%(why)s") % {"why": error})
        return redirect("web:review")
    decision = form.cleaned_data["decision"]
    chosen: list[tuple[int, int]] = form.cleaned_data["items"]
    found = Qualification.objects.select_related("player").in_bulk([pk for pk, _version in chosen])
    decided: list[Qualification] = []
    refused: list[tuple[str, str]] = []
    for pk, expected_version in chosen:
        qualification = found.get(pk)
        if qualification is None:
            refused.append((f"#{pk}", _("没有这项头衔申请。")))
            continue
        try:
            _DECISIONS[decision](
                qualification=qualification,
                by=request.user,  # type: ignore[arg-type]
                reason=form.cleaned_data["reason"],
                expected_version=expected_version,
            )
        except ServiceError as exc:
            refused.append((_named(qualification), _refusal(exc)))
        else:
            decided.append(qualification)
    if decided:
        listed = "、".join(_named(q) for q in decided)
        done = (
            ngettext("已批准 %(n)s 项：%(items)s", "已批准 %(n)s 项：%(items)s", len(decided))
            if decision == "approve"
            else ngettext("已驳回 %(n)s 项：%(items)s", "已驳回 %(n)s 项：%(items)s", len(decided))
        )
        messages.success(request, done % {"n": len(decided), "items": listed})
    not_done = _("未批准") if decision == "approve" else _("未驳回")
    for named, why in refused:
        messages.error(request, f"{not_done} {named}: {why}")
    return redirect("web:review")
