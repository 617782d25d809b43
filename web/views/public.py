"""The public pages (SPEC §5, §6): home, season calendar, event leaderboards, players, the
Master registry and title verification.

Pages read through the apps' selectors; a list page runs a fixed number of queries however
many rows it shows. Nothing personal beyond a player's id, name and province is shown: no
session (IP, device, client) and no integrity detail.

Leaderboards (SPEC §4): the national board or one province's, paged; while the event's
window is open the table re-loads itself every 10 s (htmx), and the server answers 204
when ``Event.leaderboard_version`` has not moved since the shown version. The cut-off line
is drawn under the last rank inside the season's quota for the event's kind: the national
quota on the national board, the province quota on a province's board.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any, TypeVar

from django.core.paginator import Page, Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from accounts.models import Player
from accounts.provinces import PROVINCES
from core.errors import NotFoundError
from ratings.models import Rating
from ratings.selectors import rating_history_points
from titles.models import TermState
from titles.recompute import tour_today
from titles.selectors import player_titles_on, registry, term_by_code
from tournaments.models import Event
from tournaments.selectors.events import (
    event_get,
    event_quota,
    season_get,
    season_list,
    station_list,
)
from tournaments.selectors.leaderboard import LeaderboardRow, leaderboard_rows
from web import selectors
from web.forms import REGISTRY_VIEWS, AsOfForm, BoardForm, RegistryForm, VerifyForm
from web.templatetags.tour import TERM_STATE_LABELS

T = TypeVar("T")

BOARD_PAGE_SIZE = 50
REGISTRY_PAGE_SIZE = 50
#: The live board re-loads itself this often (htmx ``every``), in seconds.
REFRESH_SECONDS = 10


def _found(read: Callable[..., T], **kwargs: Any) -> T:
    try:
        return read(**kwargs)
    except NotFoundError as exc:
        raise Http404(exc.message) from None


def _player(external_id: str) -> Player:
    player = Player.objects.filter(external_id=external_id).first()
    if player is None:
        raise Http404(f"no player {external_id!r}")
    return player


# --- home and calendar -----------------------------------------------------------------------


def home(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "web/home.html",
        {
            "season": selectors.season_current(),
            "open_events": selectors.events_open(),
            "champions": selectors.champions_latest(),
        },
    )


def calendar_current(request: HttpRequest) -> HttpResponse:
    season = selectors.season_current()
    if season is None:
        return render(request, "web/calendar.html", {"season": None, "stations": []})
    return redirect("web:calendar", year=season.year)


def calendar(request: HttpRequest, year: int) -> HttpResponse:
    """Every station of the season: number, city, date, kind, champion."""
    season = _found(season_get, year=year)
    return render(
        request,
        "web/calendar.html",
        {
            "season": season,
            "seasons": season_list(),
            "stations": station_list(season=season),
        },
    )


# --- events ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BoardRow:
    row: LeaderboardRow
    cut: bool
    by_national: bool
    by_province: bool


def _board(request: HttpRequest, event: Event) -> dict[str, Any]:
    form = BoardForm(request.GET)
    filters = form.cleaned_data if form.is_valid() else {"province": "", "q": ""}
    province = filters["province"] or None
    query = filters["q"].strip()
    quota = event_quota(event)
    cut_at = quota.per_province if province else quota.national
    page: Page[LeaderboardRow] | None = None
    if query:
        rows = selectors.leaderboard_search(event=event, query=query, province=province)
    else:
        board = leaderboard_rows(event, province=province)
        # Leaderboard is sliceable with count(): what Paginator pages.
        pages: Paginator[LeaderboardRow] = Paginator(board, BOARD_PAGE_SIZE)  # type: ignore[arg-type]
        page = pages.get_page(request.GET.get("page"))
        rows = list(page.object_list)
    bases = {}
    if event.is_finalised and any(row.advanced for row in rows):
        bases = selectors.leaderboard_bases(
            event=event, players=[row.player for row in rows if row.advanced]
        )
    board_rows = []
    for row in rows:
        rank = row.province_rank if province else row.rank
        basis = bases.get(row.player)
        board_rows.append(
            BoardRow(
                row=row,
                cut=not query and cut_at > 0 and rank == cut_at,
                by_national=bool(basis and basis.by_national),
                by_province=bool(basis and basis.by_province),
            )
        )
    return {
        "event": event,
        "live": selectors.event_is_live(event),
        "refresh_seconds": REFRESH_SECONDS,
        "province": province,
        "provinces": PROVINCES,
        "query": query,
        "quota": quota,
        "cut_at": cut_at,
        "rows": board_rows,
        "page": page,
    }


def event(request: HttpRequest, code: str) -> HttpResponse:
    """The event's leaderboard: live while its window is open, final once finalised."""
    shown = _found(event_get, code=code)
    context = _board(request, shown)
    if shown.is_finalised:
        context["summary"] = selectors.advancement_summary(event=shown)
    return render(request, "web/event.html", context)


def event_board(request: HttpRequest, code: str) -> HttpResponse:
    """The board alone (htmx refresh); 204 when the version shown is still current."""
    shown = _found(event_get, code=code)
    if request.GET.get("v") == str(shown.leaderboard_version):
        return HttpResponse(status=204)
    return render(request, "web/_board.html", _board(request, shown))


# --- players ---------------------------------------------------------------------------------


def players(request: HttpRequest) -> HttpResponse:
    """Find a player by external id or name; an exact id goes straight to their page."""
    query = request.GET.get("q", "").strip()[:64]
    found = selectors.player_search(query=query)
    if len(found) == 1 and found[0].external_id == query:
        return redirect("web:player", external_id=query)
    return render(request, "web/players.html", {"query": query, "players": found})


def _titles_on(request: HttpRequest, player: Player) -> dict[str, Any]:
    form = AsOfForm(request.GET if "as_of" in request.GET else None)
    day: date = form.cleaned_data["as_of"] if form.is_valid() else tour_today()
    if not form.is_bound:
        form = AsOfForm(initial={"as_of": day})
    return {"as_of_form": form, "titles_on": player_titles_on(player=player, day=day)}


def _chart_points(player: Player) -> list[list[Any]]:
    return [
        [moment.isoformat(), round(ordinal, 2)]
        for moment, ordinal in rating_history_points(player_id=player.pk)
    ]


def player(request: HttpRequest, external_id: str) -> HttpResponse:
    """A player's events and best results, rating history, titles timeline and the title
    status on any day."""
    shown = _player(external_id)
    title = selectors.player_title(player=shown)
    terms = list(selectors.player_terms(player=shown))
    events = selectors.player_events(player=shown)
    context = {
        "player": shown,
        "events": events,
        "events_shown": selectors.PLAYER_EVENTS_SHOWN,
        "finishes": selectors.player_best_finishes(player=shown, recent=events),
        "championships": selectors.player_championships(player=shown),
        "rating": Rating.objects.filter(player=shown).first(),
        "rating_points": _chart_points(shown),
        "title": title,
        "terms": terms,
        "timeline": {
            "terms": [
                {
                    "start": term.start.isoformat(),
                    "valid_until": term.valid_until.isoformat(),
                    "state": term.state,
                    "code": term.code,
                }
                for term in terms
            ],
            "lifetime_since": (
                title.lifetime_since.isoformat() if title and title.lifetime_since else None
            ),
            "today": tour_today().isoformat(),
        },
        "changes": selectors.player_title_changes(player=shown)[:50],
        "chart_labels": {
            "rating": _("评分"),
            "master": _("大师"),
            "lifetime": _("终身大师"),
            "today": _("今天"),
            "states": {state: str(label) for state, label in TERM_STATE_LABELS.items()},
        },
        **_titles_on(request, shown),
    }
    return render(request, "web/player.html", context)


def player_titles(request: HttpRequest, external_id: str) -> HttpResponse:
    """The "as of a day" answer alone (htmx target of the date form)."""
    return render(request, "web/_titles_on.html", _titles_on(request, _player(external_id)))


# --- titles ----------------------------------------------------------------------------------


def masters(request: HttpRequest) -> HttpResponse:
    """The Master registry: current Masters and Lifetime Masters, the lapsed and the
    revoked, by province."""
    form = RegistryForm(request.GET)
    filters = form.cleaned_data if form.is_valid() else {"province": "", "view": ""}
    province = filters["province"] or None
    view = filters["view"] or "current"
    if view == "lapsed":
        rows: Any = selectors.registry_lapsed(province=province)
    elif view == "revoked":
        rows = selectors.registry_revoked(province=province)
    else:
        rows = registry(province=province, status=None if view == "current" else view)
    page = Paginator(rows, REGISTRY_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(
        request,
        "web/masters.html",
        {
            "form": form,
            "province": province,
            "view": view,
            "views": REGISTRY_VIEWS,
            "registry_status": view if view in ("master", "lifetime") else None,
            "page": page,
            "today": tour_today(),
        },
    )


def verify(request: HttpRequest) -> HttpResponse:
    """Title verification: a form for the code printed on a certificate."""
    form = VerifyForm(request.GET or None)
    if form.is_valid():
        return redirect("web:verify-code", code=form.cleaned_data["code"].strip())
    return render(request, "web/verify.html", {"form": form})


def verify_code(request: HttpRequest, code: str) -> HttpResponse:
    """What a third party checks: whose term, its first and last day, and its state."""
    term = term_by_code(code=code)
    context: dict[str, Any] = {
        "form": VerifyForm(initial={"code": term.code if term else code}),
        "code": code,
        "term": term,
        "today": tour_today(),
    }
    if term is not None:
        context["title"] = selectors.player_title(player=term.player)
        context["valid"] = term.state == TermState.CURRENT and term.valid_until >= context["today"]
    response = render(request, "web/verify.html", context)
    if term is None:
        response.status_code = 404
    return response
