"""The reviewer's case console (issue 27; SPEC §7: "a reviewer decides (dismiss, or sanction:
void games, withhold or revoke titles of beneficiaries and helpers, suspend); a sanctioned
player may appeal; every step is logged").

* ``/review/cases/``: the cases ranked by score, filtered by state (open, taken, decided),
  detector family and event, paged.
* ``/review/cases/<id>/``: one case's evidence as a person reads it (``web.case_evidence``)
  and its actions: take; dismiss with a reason; sanction per player, the downstream plan
  shown first (``flows.sanctions.case_sanction_preview``, nothing written) and written once
  confirmed; record an appeal; decide it (another reviewer: four eyes). Each action is a
  POST at the case version the reviewer saw; a stale one is refused by the service
  (``ConflictError``) and said as a message, with nothing written. The case's log is the
  services' ``CaseEvent`` rows.
* ``/review/cases/<id>/games/<record id>/``: a linked game's seats and its move log.

Reviewers only (``web.access.role_required``: anonymous visitors are sent to sign in, other
roles get 403); the pages show IP addresses and devices, personal data.
"""

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.roles import REVIEWER, signed_in
from core.errors import ConflictError, ServiceError, said
from flows import sanctions
from integrity import selectors
from integrity.models import Appeal, Case
from integrity.services import cases as workflow
from integrity.services.cases import SameReviewerError
from web.access import role_required
from web.case_evidence import (
    CASE_STATUS_LABELS,
    CasePage,
    case_page,
    dealt,
    label,
    move_rows,
    plan_names,
    plan_steps,
    plan_title_lines,
    queue_rows,
)
from web.case_forms import (
    AppealDecideForm,
    AppealFileForm,
    CaseQueueForm,
    DismissForm,
    SanctionForm,
    VersionForm,
)

QUEUE_PAGE_SIZE = 20

reviewer_required = role_required(REVIEWER)


def _refusal(exc: ServiceError, seen: int | None) -> str:
    """Why a service refused the action, in the page's language (the service's own message
    when it is none of the known refusals)."""
    detail = exc.detail if isinstance(exc.detail, dict) else {}
    if detail.get("reason") == "stale":
        return _(
            "案件已有更新（您看到的是第 %(seen)s 版，现在是第 %(now)s 版）："
            "本次操作没有执行，请查看最新状态后再试。"
        ) % {"seen": seen, "now": detail.get("version")}
    if detail.get("reason") == "status":
        return _("案件现为“%(status)s”，不能执行此操作。") % {
            "status": label(CASE_STATUS_LABELS, detail.get("status", ""))
        }
    if isinstance(exc, SameReviewerError):
        return _("四眼原则：作出处罚的审核员不能裁决申诉，须由另一位审核员裁决。")
    if isinstance(exc, ConflictError) and "player" in detail:
        return _("该选手已有待裁决的申诉。")
    if isinstance(exc, ConflictError):
        return _("其他审核员已先作出决定，请查看最新状态。")
    return said(exc)


def _case(pk: int) -> Case:
    return get_object_or_404(
        selectors.case_list().select_related("assigned_to", "decided_by"), pk=pk
    )


def _back(case: Case, anchor: str = "") -> HttpResponse:
    return redirect(reverse("web:review-case", args=[case.pk]) + anchor)


@reviewer_required
def queue(request: HttpRequest) -> HttpResponse:
    """The cases, ranked by score, filtered."""
    form = CaseQueueForm(request.GET or None, events=list(selectors.case_queue_events()))
    cases = selectors.case_queue(**form.filters())
    page = Paginator(cases, QUEUE_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(
        request,
        "web/review/cases.html",
        {"form": form, "page": page, "rows": queue_rows(list(page.object_list))},
    )


def _render(
    request: HttpRequest, case: Case, shown: CasePage | None = None, **extra: object
) -> HttpResponse:
    """The case page, with ``extra`` in its context (a refused form, a sanction's plan)."""
    shown = shown or case_page(case=case)
    version = {"expected_version": case.version}
    context = {
        "page": shown,
        "case": case,
        "take_form": VersionForm(initial=version),
        "dismiss_form": DismissForm(initial=version),
        "sanction_form": SanctionForm(initial=version, candidates=shown.candidates),
        "appeal_form": AppealFileForm(initial=version, candidates=shown.appealable),
        "decide_form": AppealDecideForm(initial=version),
        **extra,
    }
    return render(request, "web/review/case.html", context)


@reviewer_required
def case(request: HttpRequest, pk: int) -> HttpResponse:
    """One case: its evidence, its actions and its log."""
    return _render(request, _case(pk))


@require_POST
@reviewer_required
def take(request: HttpRequest, pk: int) -> HttpResponse:
    """Take the case (or take it over from another reviewer)."""
    shown = _case(pk)
    form = VersionForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("表单无效：请重新载入页面后再试。"))
        return _back(shown)
    seen = form.cleaned_data["expected_version"]
    try:
        workflow.case_take(case=shown, by=signed_in(request.user), expected_version=seen)
    except ServiceError as exc:
        messages.error(request, _refusal(exc, seen))
    else:
        messages.success(request, _("已领取案件 #%(case)s。") % {"case": shown.pk})
    return _back(shown)


@require_POST
@reviewer_required
def dismiss(request: HttpRequest, pk: int) -> HttpResponse:
    """Close the case without a sanction, with a reason."""
    shown = _case(pk)
    form = DismissForm(request.POST)
    if not form.is_valid():
        return _render(request, shown, dismiss_form=form)
    seen = form.cleaned_data["expected_version"]
    try:
        workflow.case_dismiss(
            case=shown,
            by=signed_in(request.user),
            reason=form.cleaned_data["reason"],
            expected_version=seen,
        )
    except ServiceError as exc:
        messages.error(request, _refusal(exc, seen))
    else:
        messages.success(request, _("案件 #%(case)s 已结案，不予处罚。") % {"case": shown.pk})
    return _back(shown)


@require_POST
@reviewer_required
def sanction(request: HttpRequest, pk: int) -> HttpResponse:
    """Sanction players of the case: the first POST shows the plan (nothing written), the
    confirmed one writes it."""
    shown = _case(pk)
    page = case_page(case=shown)
    form = SanctionForm(request.POST, candidates=page.candidates)
    if not form.is_valid():
        return _render(request, shown, page, sanction_form=form)
    seen = form.cleaned_data["expected_version"]
    decisions = form.decisions()
    by, reason = signed_in(request.user), form.cleaned_data["reason"]
    try:
        if not form.cleaned_data["confirm"]:
            plan = sanctions.case_sanction_preview(
                case=shown, by=by, reason=reason, decisions=decisions, expected_version=seen
            )
            name = plan_names(plan, page.names)
            return _render(
                request,
                shown,
                page,
                sanction_form=form,
                plan=plan,
                plan_steps=plan_steps(plan, name),
                plan_titles=plan_title_lines(plan, name),
                carried=form.carried(),
                decided=decisions,
            )
        sanctions.case_sanction(
            case=shown, by=by, reason=reason, decisions=decisions, expected_version=seen
        )
    except ServiceError as exc:
        messages.error(request, _refusal(exc, seen))
        return _back(shown)
    players = "、".join(d.player.name for d in decisions)
    messages.success(
        request,
        _("已处罚（案件 #%(case)s）：%(players)s。") % {"case": shown.pk, "players": players},
    )
    return _back(shown)


@require_POST
@reviewer_required
def appeal_file(request: HttpRequest, pk: int) -> HttpResponse:
    """Record a sanctioned player's appeal."""
    shown = _case(pk)
    page = case_page(case=shown)
    form = AppealFileForm(request.POST, candidates=page.appealable)
    if not form.is_valid():
        return _render(request, shown, page, appeal_form=form)
    seen = form.cleaned_data["expected_version"]
    player = form.by_key[form.cleaned_data["player"]].player
    try:
        workflow.appeal_file(
            case=shown,
            player=player,
            statement=form.cleaned_data["statement"],
            by=signed_in(request.user),
            expected_version=seen,
        )
    except ServiceError as exc:
        messages.error(request, _refusal(exc, seen))
    else:
        messages.success(request, _("已记录%(player)s的申诉。") % {"player": player.name})
    return _back(shown)


@require_POST
@reviewer_required
def appeal_decide(request: HttpRequest, pk: int, appeal: int) -> HttpResponse:
    """Decide a pending appeal: upheld reverses every sanction of the case."""
    shown = _case(pk)
    decided = Appeal.objects.filter(pk=appeal, case=shown).first()
    if decided is None:
        raise Http404("no such appeal")
    form = AppealDecideForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("裁决须选择成立或驳回，并写明理由。"))
        return _back(shown, "#actions")
    seen = form.cleaned_data["expected_version"]
    upheld = form.cleaned_data["decision"] == "uphold"
    try:
        sanctions.appeal_decide(
            appeal=decided,
            by=signed_in(request.user),
            upheld=upheld,
            reason=form.cleaned_data["reason"],
            expected_version=seen,
        )
    except ServiceError as exc:
        messages.error(request, _refusal(exc, seen))
    else:
        done = (
            _("申诉成立：案件 #%(case)s 的处罚已全部撤销。")
            if upheld
            else _("申诉驳回：案件 #%(case)s 的处罚维持。")
        )
        messages.success(request, done % {"case": shown.pk})
    return _back(shown)


@reviewer_required
def game(request: HttpRequest, pk: int, record_id: str) -> HttpResponse:
    """A game where a player of the case sat: its seats (sessions included) and moves."""
    shown = _case(pk)
    found = selectors.case_game(case=shown, record_id=record_id)
    if found is None:
        raise Http404("no such game of the case")
    players = {cp.player_id for cp in shown.caseplayer_set.all()}
    deals = dealt(found)
    seats = [
        {"seat": seat, "dealt": deals.get(seat.seat, ""), "in_case": seat.player_id in players}
        for seat in sorted(found.seats.all(), key=lambda s: s.seat)
    ]
    return render(
        request,
        "web/review/game.html",
        {"case": shown, "game": found, "seats": seats, "moves": move_rows(found)},
    )
