"""The organiser's console (issue 26).

* ``/manage/``: the season at a glance, what needs the organiser now, a new season.
* ``/manage/events/<code>/``: one event's console — its live board (whose cut-off line
  previews who would advance now); uploading a results file (``.jsonl`` or ``.jsonl.gz``,
  one transaction, with a summary and a rejects file to download, fix and upload again);
  finalising (a job, whose panel follows it); voiding a game with the downstream plan shown
  before it is confirmed; moving or cancelling the event; for a seated final, seating the
  next round (one game a table, or a match to a target) and entering each table's places,
  or each game's hands for a match, correcting a game with a reason; for a team event,
  seating its whole rotating-partners schedule and entering each game's hands.

Organisers only (``web.access.role_required``: anonymous visitors are sent to sign in,
other roles get 403). Every write is a POST with the CSRF token, goes through the same
services as the API, and on refusal shows the service's reason and writes nothing. The
reason is said in the page's language (``core.errors.said``: the service's ``say``, never
the API's English ``message`` when there is one), at the top of the console: the form it
came from may be gone by then (a finalised or cancelled event offers no form to change it),
and the form keeps what the organiser typed.
"""

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.models import Player
from accounts.roles import ORGANISER, signed_in
from core.errors import ServiceError, said
from core.jobs import job_progress_of
from core.models import Job
from flows.corrections import game_void, preview
from flows.ingest import games_import
from ratings.tasks import ratings_update_task
from tournaments.domain.matches import MatchFormat
from tournaments.models import (
    Correction,
    Entry,
    Event,
    EventStatus,
    Game,
    SeatedRound,
    SeatedTable,
    TableGame,
    Upload,
)
from tournaments.selectors.events import event_get
from tournaments.selectors.seated import seated_rounds
from tournaments.services.entries import entry_invite
from tournaments.services.events import event_cancel, event_move
from tournaments.services.finalise import event_finalise_check
from tournaments.services.ingest import reject_line, results_lines
from tournaments.services.seasons import season_create
from tournaments.services.seated import seated_result_enter, seated_round_create
from tournaments.services.table_games import table_game_correct, table_game_enter
from tournaments.services.teams import team_schedule_create
from tournaments.tasks import event_finalise_enqueue
from web import selectors
from web.access import role_required
from web.forms import (
    EventChangeForm,
    FinaliseForm,
    InviteForm,
    SeasonForm,
    SeatRoundForm,
    TableGameForm,
    TeamScheduleForm,
    UploadForm,
    VoidForm,
)
from web.views.events import season_chosen
from web.views.public import _board, _found

#: Uploads and corrections listed on an event's console.
CONSOLE_LOG = 10
#: A match's target when the form leaves it empty: the seeds' usual first to 500 (累积法).
DEFAULT_TARGET = 500


@dataclass(frozen=True, slots=True)
class EventRow:
    """An event on the dashboard: its state, and its activity while it is live or closed."""

    event: Event
    state: str
    activity: selectors.EventActivity | None


#: The states whose boards the dashboard counts (the others are settled or empty).
ACTIVE = ("live", "closed")


@role_required(ORGANISER)
def dashboard(request: HttpRequest) -> HttpResponse:
    """The season's events with their state (and, live or closed, their players, results and
    latest game); what needs the organiser now (events closed and not finalised, fields
    changed by a correction)."""
    season, seasons = season_chosen(request)
    rows: list[EventRow] = []
    needs: list[tuple[Event, str]] = []
    if season is not None:
        events = [(e, selectors.event_state(e)) for e in selectors.events_index(season=season)]
        activity = selectors.event_activity([e for e, state in events if state in ACTIVE])
        for event, state in events:
            rows.append(EventRow(event, state, activity.get(event.pk)))
            if event.field_changed_at is not None:
                needs.append((event, _("一项更正改变了已赛过的参赛名单：请决定重赛或保留结果")))
            elif state == "closed":
                needs.append((event, _("已结束，待定结果")))
    return render(
        request,
        "web/manage/dashboard.html",
        {"season": season, "seasons": seasons, "rows": rows, "needs": needs},
    )


def _console(request: HttpRequest, event: Event, **extra: Any) -> HttpResponse:
    """The event console, with ``extra`` in its context (a refused form, a void's plan)."""
    rounds = (
        list(seated_rounds(event=event).order_by("-number"))
        if event.format == Event.Format.SEATED
        else []
    )
    context = {
        **_board(request, event),
        "state": selectors.event_state(event),
        "activity": selectors.event_activity([event])[event.pk],
        "uploads": Upload.objects.filter(event=event).select_related("by")[:CONSOLE_LOG],
        "jobs": Job.objects.filter(subject=event.code).select_related("by")[:CONSOLE_LOG],
        "corrections": Correction.objects.filter(event=event)
        .select_related("by", "game")
        .order_by("-at", "-id")[:CONSOLE_LOG],
        "upload_form": UploadForm(),
        "finalise_form": FinaliseForm(),
        "void_form": VoidForm(),
        "seat_form": SeatRoundForm(),
        "team_form": TeamScheduleForm(),
        "invite_form": InviteForm(),
        "entries": Entry.objects.filter(event=event).count(),
        "rounds": selectors.with_table_games(rounds),
        "partners": any(seated.format == SeatedRound.Format.PARTNERS for seated in rounds),
        "change_form": EventChangeForm(
            initial={
                "starts_at": timezone.localtime(event.starts_at),
                "ends_at": timezone.localtime(event.ends_at),
            }
        ),
        **extra,
    }
    return render(request, "web/manage/event.html", context)


@role_required(ORGANISER)
def event(request: HttpRequest, code: str) -> HttpResponse:
    """One event's console."""
    return _console(request, _found(event_get, code=code))


@require_POST
@role_required(ORGANISER)
def upload(request: HttpRequest, code: str) -> HttpResponse:
    """Ingest a results file; the summary is logged as an ``Upload`` with its rejects."""
    shown = _found(event_get, code=code)
    form = UploadForm(request.POST, request.FILES)
    if not form.is_valid():
        return _console(request, shown, upload_form=form)
    file = form.cleaned_data["file"]
    rejects: list[str] = []
    try:
        with transaction.atomic():
            summary = games_import(
                lines=results_lines(file.name, file),
                by=signed_in(request.user),
                on_rejects=lambda rows: rejects.extend(reject_line(row) for row in rows),
            )
            done = Upload.objects.create(
                event=shown,
                by=signed_in(request.user),
                name=file.name[:200],
                lines=summary.lines,
                ingested=summary.ingested,
                duplicates=summary.duplicates,
                conflicts=summary.conflicts,
                rejected=summary.rejected,
                rejects="".join(rejects),
            )
            if summary.ingested:
                transaction.on_commit(ratings_update_task.delay, robust=True)
    except (OSError, EOFError) as exc:  # a truncated or corrupt .gz
        form.add_error("file", _("无法读取文件：%(error)s") % {"error": exc})
        return _console(request, shown, upload_form=form)
    messages.success(
        request,
        _(
            "%(name)s：%(lines)s 行，新增 %(ingested)s 局，重复 %(duplicates)s，冲突 "
            "%(conflicts)s，拒收 %(rejected)s。"
        )
        % {
            "name": done.name,
            "lines": done.lines,
            "ingested": done.ingested,
            "duplicates": done.duplicates,
            "conflicts": done.conflicts,
            "rejected": done.rejected,
        },
    )
    return redirect("web:manage-event", code=shown.code)


@role_required(ORGANISER)
def rejects(request: HttpRequest, pk: int) -> HttpResponse:
    """An upload's rejects file (JSON Lines), to fix and upload again."""
    done = get_object_or_404(Upload, pk=pk)
    response = HttpResponse(done.rejects, content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="upload-{done.pk}.rejects.jsonl"'
    return response


def _refusal(exc: ServiceError, event: Event) -> str:
    """Why the finalisation was refused, in the page's language (the service's own words,
    ``said``, when it is none of the known refusals)."""
    detail = exc.detail if isinstance(exc.detail, dict) else {}
    if "feeders" in detail:
        return _("须先确认 %(feeders)s 的结果。") % {"feeders": "、".join(detail["feeders"])}
    if "ends_at" in detail:
        ends = timezone.localtime(event.ends_at).strftime("%Y-%m-%d %H:%M")
        return _("赛事时段到 %(ends)s 才结束；如需提前确认，请勾选“赛事时段未结束也确认”。") % {
            "ends": ends
        }
    if event.status == EventStatus.CANCELLED:
        return _("本赛事已取消。")
    return said(exc)


@require_POST
@role_required(ORGANISER)
def finalise(request: HttpRequest, code: str) -> HttpResponse:
    """Queue the event's finalisation (``force`` before its window ends)."""
    shown = _found(event_get, code=code)
    form = FinaliseForm(request.POST)
    force = form.is_valid() and form.cleaned_data["force"]
    if shown.is_finalised:
        messages.info(request, _("本赛事已定，无需再次确认。"))
        return redirect("web:manage-event", code=shown.code)
    try:
        event_finalise_check(event=shown, force=force)
        job = event_finalise_enqueue(shown, by=signed_in(request.user), force=force)
    except ServiceError as exc:
        messages.error(request, _("未能确认结果：%(reason)s") % {"reason": _refusal(exc, shown)})
        return redirect("web:manage-event", code=shown.code)
    messages.success(request, _("已提交确认结果任务。"))
    return redirect(f"{reverse('web:manage-event', args=[shown.code])}?job={job.id}")


@role_required(ORGANISER)
def job(request: HttpRequest, pk: UUID) -> HttpResponse:
    """A job's panel (htmx polls it every 2 s until the job has finished)."""
    shown = get_object_or_404(Job, pk=pk)
    return render(
        request, "web/manage/_job.html", {"job": shown, "progress": job_progress_of(shown)}
    )


@require_POST
@role_required(ORGANISER)
def void(request: HttpRequest, code: str) -> HttpResponse:
    """Void a game: the first POST shows the plan (nothing written), the confirmed one
    writes it and logs the correction."""
    shown = _found(event_get, code=code)
    form = VoidForm(request.POST)
    if not form.is_valid():
        return _console(request, shown, void_form=form)
    game = Game.objects.filter(record_id=form.cleaned_data["game"], event=shown).first()
    if game is None:
        form.add_error("game", _("本赛事没有这一局。"))
        return _console(request, shown, void_form=form)
    reason = form.cleaned_data["reason"]
    by = signed_in(request.user)
    try:
        if not form.cleaned_data["confirm"]:
            plan = preview(lambda: game_void(game=game, by=by, reason=reason))
            return _console(request, shown, void_form=form, plan=plan)
        game_void(game=game, by=by, reason=reason)
    except ServiceError as exc:
        messages.error(request, said(exc))
        return _console(request, shown, void_form=form)
    messages.success(request, _("已作废 %(game)s。") % {"game": game.record_id})
    return redirect("web:manage-event", code=shown.code)


@role_required(ORGANISER)
def season_new(request: HttpRequest) -> HttpResponse:
    """Create a season and its whole calendar (SPEC §2) with its quotas."""
    form = SeasonForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            season = season_create(
                year=form.cleaned_data["year"],
                start=form.cleaned_data["start"],
                weeks=form.cleaned_data["weeks"],
                name=form.cleaned_data["name"],
                ruleset={"quotas": form.quotas(), "play_ruleset": form.play_ruleset()},
                by=signed_in(request.user),
            )
        except ServiceError as exc:
            form.add_error(None, said(exc))
        else:
            messages.success(
                request,
                _("已创建 %(year)s 赛季：%(n)s 项赛事。")
                % {"year": season.year, "n": season.events.count()},
            )
            return redirect(f"{reverse('web:manage')}?season={season.year}")
    return render(request, "web/manage/season_new.html", {"form": form})


@require_POST
@role_required(ORGANISER)
def change(request: HttpRequest, code: str) -> HttpResponse:
    """Move the event to a new window or cancel it, with the reason logged."""
    shown = _found(event_get, code=code)
    form = EventChangeForm(request.POST)
    if not form.is_valid():
        return _console(request, shown, change_form=form)
    by, reason = signed_in(request.user), form.cleaned_data["reason"]
    try:
        if form.cleaned_data["action"] == "cancel":
            event_cancel(event=shown, by=by, reason=reason)
            messages.success(request, _("已取消本赛事。"))
        else:
            event_move(
                event=shown,
                starts_at=form.cleaned_data["starts_at"],
                ends_at=form.cleaned_data["ends_at"],
                by=by,
                reason=reason,
            )
            messages.success(request, _("已改期。"))
    except ServiceError as exc:
        messages.error(request, said(exc))
        return _console(request, shown, change_form=form)
    return redirect("web:manage-event", code=shown.code)


@require_POST
@role_required(ORGANISER)
def seat_round(request: HttpRequest, code: str) -> HttpResponse:
    """Seat the next round of a seated final from its entries: round 1 a draw from the seed
    (given, or drawn and recorded), later rounds repeat-minimising by standings."""
    shown = _found(event_get, code=code)
    form = SeatRoundForm(request.POST)
    if not form.is_valid():
        return _console(request, shown, seat_form=form)
    chosen = form.cleaned_data["format"] or "game"
    target = form.cleaned_data["target"] or DEFAULT_TARGET
    match = None if chosen == "game" else MatchFormat(chosen, target)
    try:
        seated = seated_round_create(
            event=shown, by=signed_in(request.user), seed=form.cleaned_data["seed"], match=match
        )
    except ServiceError as exc:
        messages.error(request, said(exc))
        return _console(request, shown, seat_form=form)
    messages.success(
        request,
        _("已排第 %(n)s 轮（抽签种子 %(seed)s）。") % {"n": seated.number, "seed": seated.seed},
    )
    return redirect("web:manage-event", code=shown.code)


@require_POST
@role_required(ORGANISER)
def team_schedule(request: HttpRequest, code: str) -> HttpResponse:
    """Seat every round of a rotating-partners event from its entries (SPEC §4)."""
    shown = _found(event_get, code=code)
    form = TeamScheduleForm(request.POST)
    if not form.is_valid():
        return _console(request, shown, team_form=form)
    try:
        rounds = team_schedule_create(
            event=shown,
            by=signed_in(request.user),
            seed=form.cleaned_data["seed"],
            games_per_round=form.cleaned_data["games_per_round"],
        )
    except ServiceError as exc:
        messages.error(request, said(exc))
        return _console(request, shown, team_form=form)
    messages.success(
        request,
        _("已排轮换搭档赛程：%(n)s 轮（抽签种子 %(seed)s）。")
        % {"n": len(rounds), "seed": rounds[0].seed},
    )
    return redirect("web:manage-event", code=shown.code)


def _hands(request: HttpRequest, keys: list[str]) -> dict[str, list[str]]:
    """Each seat's hand from the form: card codes split on spaces or commas."""
    return {key: request.POST.get(f"hand-{key}", "").replace(",", " ").split() for key in keys}


@require_POST
@role_required(ORGANISER)
def table_game(request: HttpRequest, code: str, number: int, table: int) -> HttpResponse:
    """Enter the next game of a match or partners table, or correct game ``game`` with a
    reason: each seat's hand left, valued by the season's card table."""
    shown = _found(event_get, code=code)
    row = get_object_or_404(SeatedTable, round__event=shown, round__number=number, number=table)
    keys = list(row.seats.order_by("seat").values_list("player__external_id", flat=True))
    form = TableGameForm(request.POST)
    form.is_valid()
    hands = _hands(request, keys)
    by = signed_in(request.user)
    try:
        game_no = int(request.POST.get("game", ""))
        correcting = request.POST.get("correct") == "1"
        if correcting:
            game = get_object_or_404(TableGame, table=row, number=game_no)
            reason = form.cleaned_data.get("reason", "")
            table_game_correct(game=game, hands=hands, by=by, reason=reason)
        else:
            table_game_enter(table=row, number=game_no, hands=hands, by=by)
    except ValueError:
        messages.error(request, _("局号不对。"))
    except ServiceError as exc:
        messages.error(request, _("未能录入：%(reason)s") % {"reason": said(exc)})
    else:
        text = (
            _("已更正第 %(n)s 轮 %(t)s 号桌第 %(g)s 局。")
            if correcting
            else _("已录入第 %(n)s 轮 %(t)s 号桌第 %(g)s 局。")
        )
        messages.success(request, text % {"n": number, "t": table, "g": game_no})
    return redirect(f"{reverse('web:manage-event', args=[shown.code])}#r{number}-t{table}")


@require_POST
@role_required(ORGANISER)
def table_result(request: HttpRequest, code: str, number: int, table: int) -> HttpResponse:
    """Enter (or correct, until the next round is seated) a table's places."""
    shown = _found(event_get, code=code)
    row = get_object_or_404(SeatedTable, round__event=shown, round__number=number, number=table)
    keys = list(row.seats.order_by("seat").values_list("player__external_id", flat=True))
    try:
        places = {key: int(request.POST.get(f"place-{key}", "")) for key in keys}
        seated_result_enter(table=row, places=places, by=signed_in(request.user))
    except ValueError:
        messages.error(request, _("每位选手都要填名次（1 为最好）。"))
    except ServiceError as exc:
        messages.error(request, _("未能录入：%(reason)s") % {"reason": said(exc)})
    else:
        messages.success(request, _("已录入第 %(n)s 轮 %(t)s 号桌。") % {"n": number, "t": table})
    return redirect(f"{reverse('web:manage-event', args=[shown.code])}#r{number}-t{table}")


@require_POST
@role_required(ORGANISER)
def invite(request: HttpRequest, code: str) -> HttpResponse:
    """Invite players into the field of an event with a closed entry (a final, a seated
    final)."""
    shown = _found(event_get, code=code)
    if shown.open_entry:
        messages.error(request, _("本赛事对所有选手开放，无需邀请。"))
        return redirect("web:manage-event", code=shown.code)
    form = InviteForm(request.POST)
    if not form.is_valid():
        return _console(request, shown, invite_form=form)
    keys = form.ids()
    players = list(Player.objects.filter(external_id__in=keys))
    missing = sorted(set(keys) - {p.external_id for p in players})
    if missing:
        form.add_error("players", _("没有这些选手：%(ids)s") % {"ids": "、".join(missing)})
        return _console(request, shown, invite_form=form)
    try:
        added = entry_invite(
            event=shown,
            players=players,
            by=signed_in(request.user),
            reason=form.cleaned_data["reason"],
        )
    except ServiceError as exc:
        messages.error(request, said(exc))
        return _console(request, shown, invite_form=form)
    messages.success(request, _("已邀请 %(n)s 名选手。") % {"n": len(added)})
    return redirect("web:manage-event", code=shown.code)
