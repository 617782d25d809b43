"""Reviewer screens (SPEC §1 title reviewers, §6 review): the queue of pending grants with
their evidence, approve / reject at the version the reviewer saw, and the open integrity
cases (each opens its page in the case console, ``web.views.cases``).

Signed-in reviewers only (``accounts.roles.REVIEWER``; superusers hold every role); anyone
else signed in gets 403, anonymous visitors the login page. Decisions go through
``titles.services.qualification_approve`` / ``qualification_reject``; a conflict (someone
decided first, a held player, an audit not cleared) comes back as a message on the queue.
"""

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from accounts.roles import REVIEWER
from core.errors import ServiceError
from flows import grants
from flows.grants import review_items
from titles import services
from titles.models import Qualification
from titles.selectors import review_queue
from web.access import role_required
from web.forms import DecisionForm
from web.selectors import cases_open

QUEUE_PAGE_SIZE = 20
CASES_SHOWN = 50

#: ``ConflictError.detail["reason"]`` of ``titles.services`` decisions, said to the reviewer.
CONFLICTS = {
    "held": gettext_lazy("该选手有未结的诚信案件，其头衔申请暂缓审核。"),
    "audit": gettext_lazy("该赛事的诚信审计尚未通过，暂不能批准。"),
    "stale": gettext_lazy("其他审核员已先作出决定（409），请查看最新状态。"),
    "four_eyes": gettext_lazy("四眼原则：此资格由您录入，须由另一位审核员批准。"),
}


reviewer_required = role_required(REVIEWER)


@reviewer_required
def queue(request: HttpRequest) -> HttpResponse:
    page = Paginator(review_queue(), QUEUE_PAGE_SIZE).get_page(request.GET.get("page"))
    cases = [
        (case, reverse("web:review-case", args=[case.pk])) for case in cases_open()[:CASES_SHOWN]
    ]
    return render(
        request,
        "web/review.html",
        {"page": page, "items": review_items(list(page.object_list)), "cases": cases},
    )


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
        reason = exc.detail.get("reason") if isinstance(exc.detail, dict) else None
        text = CONFLICTS.get(reason, exc.message) if reason else exc.message
        messages.error(request, f"{qualification.player.name} · {qualification.source}: {text}")
    else:
        done = _("已批准") if decision == "approve" else _("已驳回")
        messages.success(request, f"{done}: {qualification.player.name} · {qualification.source}")
    return redirect("web:review")
