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

import segno
from django.core.paginator import Page, Paginator
from django.db.models import Count, Sum
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from accounts.models import Player
from accounts.provinces import PROVINCES
from core.cache import CachedPage, cached_by_version, cached_page, cached_response, snapshot
from core.clock import tour_today
from core.errors import NotFoundError
from notices.selectors import player_notices
from notices.texts import notice_text
from ratings.models import Rating
from ratings.selectors import rating_history_points
from titles.credentials.keys import issuer_url
from titles.models import TermState
from titles.selectors import (
    TitlesOn,
    current_lifetime_title,
    lifetime_by_code,
    player_titles_on,
    registry,
    term_by_code,
)
from tournaments.models import Event, Standing
from tournaments.selectors.events import (
    event_get,
    event_quota,
    season_get,
    season_list,
    station_list,
)
from tournaments.selectors.leaderboard import (
    LeaderboardRow,
    board_cache_seconds,
    board_response_key,
    leaderboard_rows,
)
from web import selectors
from web.forms import REGISTRY_VIEWS, AsOfForm, BoardForm, RegistryForm, VerifyForm
from web.templatetags.tour import TERM_STATE_LABELS

T = TypeVar("T")

BOARD_PAGE_SIZE = 50
REGISTRY_PAGE_SIZE = 50
#: The live board re-loads itself this often (htmx ``every``), in seconds.
REFRESH_SECONDS = 10
#: How stale a registry page can be, in seconds (titles have no version to key it on).
REGISTRY_CACHE_SECONDS = 30
#: How stale a player's titles, rating and name can be on their page, in seconds (their
#: events' results are keyed on the events' ``leaderboard_version``).
PLAYER_CACHE_SECONDS = 30


def _found(read: Callable[..., T], **kwargs: Any) -> T:
    try:
        return read(**kwargs)
    except NotFoundError as exc:
        raise Http404(exc.message) from None


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


def _board_rows(
    event: Event, rows: list[LeaderboardRow], *, province: str | None, query: str, cut_at: int
) -> SafeString:
    """The board's table (or its empty note), rendered: each row with the cut-off line under
    rank ``cut_at`` (not on a search) and, once finalised, the list it advanced on."""
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
    context = {
        "event": event,
        "province": province,
        "query": query,
        "cut_at": cut_at,
        "rows": board_rows,
    }
    return render_to_string("web/_board_rows.html", context)


def _board(request: HttpRequest, event: Event) -> dict[str, Any]:
    """The board's context. A page's table is cached under the event's
    ``leaderboard_version`` and the language (``core.cache``): a repeated page renders only
    around it, and a standings write (which bumps the version) is seen by the next read."""
    form = BoardForm(request.GET)
    filters = form.cleaned_data if form.is_valid() else {"province": "", "q": ""}
    province = filters["province"] or None
    query = filters["q"].strip()
    quota = event_quota(event)
    cut_at = quota.per_province if province else quota.national
    page: Page[Any] | None = None
    if query:
        found = selectors.leaderboard_search(event=event, query=query, province=province)
        table = _board_rows(event, found, province=province, query=query, cut_at=cut_at)
    else:
        board = leaderboard_rows(event, province=province)

        def build() -> CachedPage:
            # Leaderboard is sliceable with count(): what Paginator pages.
            pages: Paginator[LeaderboardRow] = Paginator(board, BOARD_PAGE_SIZE)  # type: ignore[arg-type]
            shown = pages.get_page(request.GET.get("page"))
            rows = list(shown.object_list)
            html = _board_rows(event, rows, province=province, query="", cut_at=cut_at)
            return CachedPage(shown.number, pages.count, BOARD_PAGE_SIZE, html)

        cached = cached_page(
            ("board-html", event.pk, event.code, province or "", get_language()),
            event.leaderboard_version,
            request.GET.get("page"),
            build,
            board_cache_seconds(event),
        )
        table, page = cached.shown, cached.page()
    return {
        "event": event,
        "live": selectors.event_is_live(event),
        "refresh_seconds": REFRESH_SECONDS,
        "province": province,
        "provinces": PROVINCES,
        "query": query,
        "quota": quota,
        "cut_at": cut_at,
        "table": table,
        "page": page,
    }


@cached_response(board_response_key)
def event(request: HttpRequest, code: str) -> HttpResponse:
    """The event's leaderboard: live while its window is open, final once finalised."""
    shown = _found(event_get, code=code)
    context = _board(request, shown)
    if shown.is_finalised:
        context["summary"] = selectors.advancement_summary(event=shown)
    return render(request, "web/event.html", context)


@cached_response(board_response_key)
def event_board(request: HttpRequest, code: str) -> HttpResponse:
    """The board alone (htmx refresh); 204 when the version shown is still current."""
    shown = _found(event_get, code=code)
    if request.GET.get("v") == str(shown.leaderboard_version):
        return HttpResponse(status=204)
    return render(request, "web/_board.html", _board(request, shown))


# --- players ---------------------------------------------------------------------------------


def players(request: HttpRequest) -> HttpResponse:
    """Find players by a part of their id or name, ignoring case, a page at a time; an
    exact id (in any case) goes straight to the player's page."""
    query = request.GET.get("q", "").strip()[:64]
    exact = selectors.player_exact(query=query) if query else None
    if exact is not None:
        return redirect("web:player", external_id=exact.external_id)
    pages: Paginator[Player] = Paginator(
        selectors.player_search(query=query), selectors.PLAYER_SEARCH_LIMIT
    )
    shown = pages.get_page(request.GET.get("page"))
    context = {"query": query, "players": shown.object_list, "page": shown}
    return render(request, "web/players.html", context)


def _titles_on(
    request: HttpRequest, player: Player, today: TitlesOn | None = None
) -> dict[str, Any]:
    """The "as of a day" form and its answer; ``today`` is the answer for today (the form's
    default) when the caller has read it. An ``as_of`` that is not a date gets no answer
    but ``as_of_error`` (the view answers 400), never today's answer in its place."""
    form = AsOfForm(request.GET if "as_of" in request.GET else None)
    if form.is_bound and not form.is_valid():
        return {
            "as_of_form": form,
            "titles_on": None,
            "as_of_error": _("查询日期无效：请按 YYYY-MM-DD 填写。"),
        }
    day: date = form.cleaned_data["as_of"] if form.is_bound else tour_today()
    if not form.is_bound:
        form = AsOfForm(initial={"as_of": day})
    if today is not None and day == today.day:
        return {"as_of_form": form, "titles_on": today}
    return {"as_of_form": form, "titles_on": player_titles_on(player=player, day=day)}


def _as_of_status(context: dict[str, Any]) -> int:
    return 400 if "as_of_error" in context else 200


def _chart_points(player: Player) -> list[list[Any]]:
    return [
        [moment.isoformat(), round(ordinal, 2)]
        for moment, ordinal in rating_history_points(player_id=player.pk)
    ]


def _player_data(player: Player, today: date) -> dict[str, Any]:
    """What a player's page shows, read (``player``'s page cache holds it)."""
    events = selectors.player_events(player=player)
    return {
        "events": events,
        "finishes": selectors.player_best_finishes(player=player, recent=events),
        "championships": list(selectors.player_championships(player=player)),
        "rating": Rating.objects.filter(player=player).first(),
        "rating_points": _chart_points(player),
        "title": selectors.player_title(player=player),
        "terms": list(selectors.player_terms(player=player)),
        "changes": list(selectors.player_title_changes(player=player)[:50]),
        "titles_today": player_titles_on(player=player, day=today),
        "notices": list(player_notices(player=player)),
    }


def _boards_of(external_id: str) -> tuple[int, int]:
    """How many boards the player is on, and the sum of their ``leaderboard_version``."""
    boards = Standing.objects.filter(player__external_id=external_id).aggregate(
        events=Count("pk"), versions=Sum("event__leaderboard_version")
    )
    return boards["events"], boards["versions"] or 0


def _player_key(request: HttpRequest, external_id: str) -> tuple[tuple[object, ...], int]:
    boards = snapshot(("player-boards", external_id), lambda: _boards_of(external_id))
    return ("player", external_id, *boards, tour_today()), PLAYER_CACHE_SECONDS


@cached_response(_player_key)
def player(request: HttpRequest, external_id: str) -> HttpResponse:
    """A player's events and best results, rating history, titles timeline, the title
    status on any day, and their notices (newest first, in the page's language).

    What the page reads is cached under the sum of the ``leaderboard_version`` of the
    player's events (one query): their ranks and results are never stale past a standings
    write (past ``READ_STALE_SECONDS`` for an anonymous visitor's whole page). Their titles,
    rating, name and notices have no version: those show within ``PLAYER_CACHE_SECONDS``."""
    shown = get_object_or_404(Player, external_id=external_id)
    today = tour_today()
    events, versions = _boards_of(external_id)
    data = cached_by_version(
        ("player", shown.pk, shown.external_id, events, today.isoformat()),
        versions,
        lambda: _player_data(shown, today),
        PLAYER_CACHE_SECONDS,
    )
    title, terms = data["title"], data["terms"]
    context = {
        **data,
        "feed": [
            {
                "at": notice.created_at,
                "kind": notice.kind,
                "text": notice_text(notice.kind, notice.params),
            }
            for notice in data["notices"]
        ],
        "player": shown,
        "events_shown": selectors.PLAYER_EVENTS_SHOWN,
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
            "today": today.isoformat(),
        },
        "chart_labels": {
            "rating": _("评分"),
            "master": _("大师"),
            "lifetime": _("终身大师"),
            "today": _("今天"),
            "states": {state: str(label) for state, label in TERM_STATE_LABELS.items()},
        },
        **_titles_on(request, shown, today=data["titles_today"]),
    }
    return render(request, "web/player.html", context, status=_as_of_status(context))


def player_titles(request: HttpRequest, external_id: str) -> HttpResponse:
    """The "as of a day" answer alone (htmx target of the date form, which pushes this URL
    to the address bar); opened as a page — a shared link — it is the player's page with
    the same ``?as_of=``."""
    if not request.headers.get("HX-Request"):
        query = request.GET.urlencode()
        target = reverse("web:player", args=[external_id])
        return redirect(f"{target}?{query}" if query else target)
    player = get_object_or_404(Player, external_id=external_id)
    context = _titles_on(request, player)
    return render(request, "web/_titles_on.html", context, status=_as_of_status(context))


# --- titles ----------------------------------------------------------------------------------


def _registry_key(request: HttpRequest) -> tuple[tuple[object, ...], int]:
    return ("registry", tour_today()), REGISTRY_CACHE_SECONDS


@cached_response(_registry_key)
def masters(request: HttpRequest) -> HttpResponse:
    """The Master registry: current Masters and Lifetime Masters, the lapsed and the
    revoked, by province. A page is cached for ``REGISTRY_CACHE_SECONDS`` (titles have no
    version): a grant, lapse or revocation shows within that."""
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
    today = tour_today()

    def build() -> CachedPage:
        shown = Paginator(rows, REGISTRY_PAGE_SIZE).get_page(request.GET.get("page"))
        return CachedPage(
            shown.number, shown.paginator.count, REGISTRY_PAGE_SIZE, list(shown.object_list)
        )

    # No version covers titles: a page is cached for REGISTRY_CACHE_SECONDS.
    cached = cached_page(
        ("registry", view, province or "", today.isoformat()),
        0,
        request.GET.get("page"),
        build,
        REGISTRY_CACHE_SECONDS,
    )
    page = cached.page()
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
            "today": today,
        },
    )


def verify(request: HttpRequest) -> HttpResponse:
    """Title verification: a form for the code printed on a certificate."""
    form = VerifyForm(request.GET or None)
    if form.is_valid():
        return redirect("web:verify-code", code=form.cleaned_data["code"].strip())
    return render(request, "web/verify.html", {"form": form})


def verify_code(request: HttpRequest, code: str) -> HttpResponse:
    """What a third party checks: whose term (or Lifetime title), its first and last day, and
    its state; a QR code of this page's public address, the term's (and a Lifetime title's)
    verifiable credential to download, and a printable certificate (the page's print style)."""
    term = term_by_code(code=code)
    lifetime = current_lifetime_title(player=term.player) if term else lifetime_by_code(code=code)
    context: dict[str, Any] = {
        "form": VerifyForm(initial={"code": term.code if term else code}),
        "code": code,
        "term": term,
        "today": tour_today(),
        "lifetime": lifetime,
    }
    found_code = term.code if term else lifetime.code if lifetime else None
    if term is not None:
        context["title"] = selectors.player_title(player=term.player)
        context["valid"] = term.state == TermState.CURRENT and term.valid_until >= context["today"]
    elif lifetime is not None:
        context["valid"] = lifetime.state == TermState.CURRENT
    if found_code is not None:
        page_url = issuer_url() + reverse("web:verify-code", args=[found_code])
        context["page_url"] = page_url
        context["qr"] = SafeString(  # segno's own markup (it escapes the title)
            segno.make(page_url, error="m").svg_inline(scale=4, title=str(_("扫码核验此头衔")))
        )
    response = render(request, "web/verify.html", context)
    if found_code is None:
        response.status_code = 404
    return response
