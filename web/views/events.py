"""The event index and a seated event's tables (SPEC §4, §5).

``/events/``: a season's events, weekly qualifiers included, by start; filtered by kind and
state (upcoming, live, closed awaiting finalisation, finalised, cancelled), a page at a time.

``/events/<code>/tables/``: a seated event's rounds, tables, seats and results, latest round
first; "where do I sit" finds a player's table in the latest round by id or a part of the
name. While the event is live the tables re-load themselves (htmx, every
``REFRESH_SECONDS``). Fixed queries whatever the size: the rounds, tables and seats in three.
"""

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from tournaments.models import Event, EventKind, Season
from tournaments.selectors.events import event_get, season_list
from tournaments.selectors.seated import seated_rounds
from web import selectors
from web.forms import EventIndexForm, SeatFindForm
from web.templatetags.tour import KIND_LABELS
from web.views.public import REFRESH_SECONDS, _found

EVENTS_PAGE_SIZE = 50


def season_chosen(request: HttpRequest) -> tuple[Season | None, list[Season]]:
    """The season ``?season=`` names (a year; 404 when there is none), else the current
    one; and every season, for the page's season tabs."""
    seasons = list(season_list())
    chosen = request.GET.get("season", "")
    season = next((s for s in seasons if str(s.year) == chosen), None)
    if season is None and chosen:
        raise Http404(f"no season {chosen!r}")
    return season or selectors.season_current(), seasons


def events(request: HttpRequest) -> HttpResponse:
    """The season's events (``?season=`` a year, default the current season)."""
    season, seasons = season_chosen(request)
    kinds = [(value, str(KIND_LABELS.get(value, label))) for value, label in EventKind.choices]
    form = EventIndexForm(request.GET, kinds=kinds)
    filters = form.cleaned_data if form.is_valid() else {"kind": "", "state": ""}
    page = None
    if season is not None:
        rows = selectors.events_index(season=season, kind=filters["kind"], state=filters["state"])
        page = Paginator(rows, EVENTS_PAGE_SIZE).get_page(request.GET.get("page"))
        for event in page.object_list:
            event.state = selectors.event_state(event)
    return render(
        request,
        "web/events.html",
        {"season": season, "seasons": seasons, "form": form, "filters": filters, "page": page},
    )


def tables(request: HttpRequest, code: str) -> HttpResponse:
    """A seated event's rounds and tables, and where a player sits."""
    event: Event = _found(event_get, code=code)
    if event.format != Event.Format.SEATED:
        raise Http404(f"{event.code} is not played at seated tables")
    form = SeatFindForm(request.GET)
    query = form.cleaned_data["q"].strip() if form.is_valid() else ""
    context = {
        "event": event,
        "rounds": selectors.with_table_games(list(seated_rounds(event=event).order_by("-number"))),
        "query": query,
        "found": selectors.seat_find(event=event, query=query),
        "live": selectors.event_is_live(event),
        "refresh_seconds": REFRESH_SECONDS,
    }
    template = "web/_tables.html" if request.headers.get("HX-Request") else "web/tables.html"
    return render(request, template, context)
