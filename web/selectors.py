"""Reads the public pages need that the apps' selectors do not offer (SPEC §5, §6).

Everything else the pages show comes from the apps' own selectors
(``tournaments.selectors.events`` / ``leaderboard``, ``titles.selectors``,
``ratings.selectors``); what is here is page-shaped: the home page's lists, a player's
events and best finishes, the advancement basis of one leaderboard page, name search on a
leaderboard, and the registry's lapsed and revoked history. Public reads never touch the
seats' sessions (IP, device, client) nor integrity evidence.

Every function runs a fixed number of queries whatever the number of rows, except those
that rank rows one by one (ranks are read from the index, not stored): ``leaderboard_search``
(at most ``SEARCH_LIMIT`` matches) and ``player_events`` (at most ``PLAYER_EVENTS_SHOWN``),
and ``with_table_games`` (a few a table, for the match and partners tables of a live final).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Prefetch, Q, QuerySet, Sum
from django.utils import timezone

from accounts.models import Player
from core.clock import tour_today
from integrity.models import Case
from titles.models import ChangeKind, PlayerTitle, Revocation, TermState, TitleChange, TitleTerm
from tournaments.models import Event, EventStatus, Game, Season, SeatedRound, Standing, TableSeat
from tournaments.selectors.events import event_list, window_is_open
from tournaments.selectors.leaderboard import LeaderboardRow, leaderboard_player, live_ranks
from tournaments.selectors.seated import GameHandRow, SeatState, table_games

#: Name matches ranked on a leaderboard search (each costs one count on the rank index).
SEARCH_LIMIT = 10
#: Players listed by the site-wide player search.
PLAYER_SEARCH_LIMIT = 20
#: Events listed (and ranked) on a player's page.
PLAYER_EVENTS_SHOWN = 30


# --- seasons and events ----------------------------------------------------------------------

#: An event's state as the public and the organiser see it, from its status and the clock.
EVENT_STATES = ("upcoming", "live", "closed", "finalised", "cancelled")


def event_state(event: Event, now: datetime | None = None) -> str:
    """upcoming (window not begun), live (open now), closed (window over, not yet
    finalised), finalised or cancelled."""
    if event.status != EventStatus.SCHEDULED:
        return str(event.status)
    moment = now or timezone.now()
    if moment < event.starts_at:
        return "upcoming"
    return "live" if moment <= event.ends_at else "closed"


def events_index(
    *, season: Season, kind: str = "", state: str = "", now: datetime | None = None
) -> QuerySet[Event]:
    """The season's events, weekly qualifiers included, by start then code; ``kind`` and
    ``state`` (one of ``EVENT_STATES``) narrow them."""
    moment = now or timezone.now()
    rows = Event.objects.filter(season=season).select_related("champion", "season")
    if kind:
        rows = rows.filter(kind=kind)
    scheduled = Q(status=EventStatus.SCHEDULED)
    by_state = {
        "upcoming": scheduled & Q(starts_at__gt=moment),
        "live": scheduled & Q(starts_at__lte=moment, ends_at__gte=moment),
        "closed": scheduled & Q(ends_at__lt=moment),
        "finalised": Q(status=EventStatus.FINALISED),
        "cancelled": Q(status=EventStatus.CANCELLED),
    }
    if state:
        rows = rows.filter(by_state[state])
    return rows.order_by("starts_at", "code")


@dataclass(frozen=True, slots=True)
class EventActivity:
    """An event's board at a glance: its players, the game results they have counted (the
    sum of their standings' games: one a player a game) and when its latest game ended."""

    players: int
    results: int
    last_game: datetime | None


def event_activity(events: Sequence[Event]) -> dict[int, EventActivity]:
    """``EventActivity`` of each event, by id: one grouped query over their standings and
    one probe of the (event, ended_at) index an event, so a board of a million players
    costs one pass over its standings, never one over its games."""
    totals = {
        row["event"]: row
        for row in Standing.objects.filter(event__in=events)
        .values("event")
        .annotate(players=Count("id"), results=Sum("games"))
    }
    activity = {}
    for event in events:
        last = (
            Game.objects.filter(event=event)
            .order_by("-ended_at")
            .values_list("ended_at", flat=True)
        ).first()
        row = totals.get(event.pk, {})
        activity[event.pk] = EventActivity(row.get("players", 0), row.get("results") or 0, last)
    return activity


@dataclass(frozen=True, slots=True)
class TableFound:
    """Where a player sits: the round, the table and the seat."""

    round: int
    table: int
    seat: int
    player: Player


def seat_find(*, event: Event, query: str) -> list[TableFound]:
    """ "Where do I sit": the latest round's seats of the players whose id is ``query`` or
    whose name holds it (case-insensitive), by table and seat; at most ``SEARCH_LIMIT``."""
    latest = event.seated_rounds.order_by("-number").values_list("number", flat=True).first()
    if latest is None or not query:
        return []
    seats = (
        TableSeat.objects.filter(table__round__event=event, table__round__number=latest)
        .filter(Q(player__external_id=query) | Q(player__name__icontains=query))
        .select_related("player", "table")
        .order_by("table__number", "seat")[:SEARCH_LIMIT]
    )
    return [TableFound(latest, s.table.number, s.seat, s.player) for s in seats]


def season_current() -> Season | None:
    """The season running today (the latest one that has started), else the latest one."""
    today = tour_today()
    return (
        Season.objects.filter(starts_on__lte=today).order_by("-year").first()
        or Season.objects.order_by("-year").first()
    )


def event_is_live(event: Event, now: datetime | None = None) -> bool:
    """Whether the event's window is open now (and it is not finalised or cancelled)."""
    return window_is_open(event.status, event.starts_at, event.ends_at, now)


def events_open(*, now: datetime | None = None) -> QuerySet[Event]:
    """Events whose window is open now, earliest first."""
    moment = now or timezone.now()
    return event_list(status=EventStatus.SCHEDULED).filter(
        starts_at__lte=moment, ends_at__gte=moment
    )


def champions_latest(*, limit: int = 8) -> QuerySet[Event]:
    """The most recently decided stations that have a champion."""
    return (
        event_list(status=EventStatus.FINALISED)
        .filter(station__isnull=False, champion__isnull=False)
        .order_by("-ends_at", "-pk")[:limit]
    )


# --- leaderboards ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AdvancementBasis:
    by_national: bool
    by_province: bool


def leaderboard_bases(*, event: Event, players: list[str]) -> dict[str, AdvancementBasis]:
    """For a finalised event: on what basis each advancing player of ``players`` (external
    ids, one page of the board) advanced. ``LeaderboardRow`` carries only ``advanced``."""
    rows = Standing.objects.filter(event=event, player_key__in=players, advanced=True)
    return {
        key: AdvancementBasis(by_national=national, by_province=province)
        for key, national, province in rows.values_list("player_key", "by_national", "by_province")
    }


@dataclass(frozen=True, slots=True)
class AdvancementSummary:
    advanced: int
    by_national: int
    by_province: int


def advancement_summary(*, event: Event) -> AdvancementSummary:
    """How many advanced from a finalised event, and on which list (a player on both lists
    counts in both)."""
    counts = Standing.objects.filter(event=event, advanced=True).aggregate(
        advanced=Count("pk"),
        by_national=Count("pk", filter=Q(by_national=True)),
        by_province=Count("pk", filter=Q(by_province=True)),
    )
    return AdvancementSummary(**counts)


def leaderboard_search(
    *, event: Event, query: str, province: str | None = None
) -> list[LeaderboardRow]:
    """Rows of the event's board for a player searched by external id (exact) or by name
    (contains, at most ``SEARCH_LIMIT``), each with both its ranks (``leaderboard_player``)."""
    query = query.strip()
    if not query:
        return []
    exact = leaderboard_player(event, player=query, province=province)
    if exact:
        return exact
    matches = Standing.objects.filter(event=event, player__name__icontains=query)
    if province:
        matches = matches.filter(province=province)
    keys = matches.order_by("player_key").values_list("player_key", flat=True)[:SEARCH_LIMIT]
    return [row for key in keys for row in leaderboard_player(event, player=key)]


# --- players ---------------------------------------------------------------------------------


def player_search(*, query: str) -> QuerySet[Player]:
    """Players whose external id or name contains ``query``, ignoring case, by external id
    (the caller pages them, ``PLAYER_SEARCH_LIMIT`` a page)."""
    query = query.strip()
    if not query:
        return Player.objects.none()
    return Player.objects.filter(
        Q(external_id__icontains=query) | Q(name__icontains=query)
    ).order_by("external_id")


def player_exact(*, query: str) -> Player | None:
    """The one player whose external id is ``query``, ignoring case; None if none is."""
    found = list(Player.objects.filter(external_id__iexact=query.strip())[:2])
    return found[0] if len(found) == 1 else None


@dataclass(frozen=True, slots=True)
class PlayerEvent:
    """The player's row in one event with both ranks (None while not eligible)."""

    standing: Standing
    rank: int | None
    province_rank: int | None


def player_events(*, player: Player, limit: int = PLAYER_EVENTS_SHOWN) -> list[PlayerEvent]:
    """The player's rows in their ``limit`` most recent events, newest first, with both
    ranks. Ranks are not stored on the board (``tournaments.selectors.leaderboard``): each
    eligible row costs one count on the rank index (``live_ranks``), so ``limit`` bounds it."""
    standings = (
        Standing.objects.filter(player=player)
        .exclude(event__status=EventStatus.CANCELLED)
        .select_related("event", "event__season")
        .order_by("-event__starts_at", "-event_id")[:limit]
    )
    return [PlayerEvent(s, *live_ranks(s, s.event)) for s in standings]


@dataclass(frozen=True, slots=True)
class BestFinish:
    kind: str
    events: int
    advanced: int
    best_rank: int | None


def player_best_finishes(*, player: Player, recent: list[PlayerEvent]) -> list[BestFinish]:
    """Per event kind: events played and times advanced (all of them, one aggregate query),
    and the best national rank among the ``recent`` finalised ones (SPEC §5 "events reached
    and best finishes")."""
    best: dict[str, int] = {}
    for row in recent:
        kind = row.standing.event.kind
        if row.standing.event.is_finalised and row.rank is not None:
            best[kind] = min(best.get(kind, row.rank), row.rank)
    counts = (
        Standing.objects.filter(player=player)
        .exclude(event__status=EventStatus.CANCELLED)
        .values("event__kind")
        .annotate(events=Count("pk"), advanced=Count("pk", filter=Q(advanced=True)))
        .order_by("event__kind")
    )
    return [
        BestFinish(
            kind=row["event__kind"],
            events=row["events"],
            advanced=row["advanced"],
            best_rank=best.get(row["event__kind"]),
        )
        for row in counts
    ]


def player_championships(*, player: Player) -> QuerySet[Event]:
    """The finalised events the player won, newest first."""
    return event_list(status=EventStatus.FINALISED).filter(champion=player).order_by("-ends_at")


def player_terms(*, player: Player) -> QuerySet[TitleTerm]:
    """The player's Master terms that were held (current, lapsed or revoked), oldest first;
    terms a later replay voided are left out — they never counted."""
    return TitleTerm.objects.filter(player=player).exclude(state=TermState.VOID).order_by("start")


#: History entries shown publicly: what happened to the title, never who decided or why.
PUBLIC_CHANGE_KINDS = (
    ChangeKind.GRANTED,
    ChangeKind.EXTENDED,
    ChangeKind.LAPSED,
    ChangeKind.LIFETIME,
    ChangeKind.REVOKED,
    ChangeKind.RESTORED,
)


def player_title_changes(*, player: Player) -> QuerySet[TitleChange]:
    """The player's title history that still holds (retracted entries left out), newest
    first."""
    return TitleChange.objects.filter(
        player=player, kind__in=PUBLIC_CHANGE_KINDS, retraction__isnull=True
    ).order_by("-on", "-id")


# --- Master registry history -----------------------------------------------------------------


def registry_lapsed(*, province: str | None = None) -> QuerySet[TitleTerm]:
    """Master terms that ended without renewal (lapsed, or past their last day and not yet
    swept), latest end first."""
    today = tour_today()
    terms = TitleTerm.objects.filter(
        Q(state=TermState.LAPSED) | Q(state=TermState.CURRENT, valid_until__lt=today)
    ).select_related("player")
    if province:
        terms = terms.filter(player__province=province)
    return terms.order_by("-valid_until", "player__external_id")


def registry_revoked(*, province: str | None = None) -> QuerySet[Revocation]:
    """Revocations in force (not reversed on appeal), latest first. Only the player and the
    date are public: the reason and the case reference stay with the reviewers."""
    rows = Revocation.objects.filter(restored_at__isnull=True).select_related("player")
    if province:
        rows = rows.filter(player__province=province)
    return rows.order_by("-on", "-id")


def player_title(*, player: Player) -> PlayerTitle | None:
    return PlayerTitle.objects.filter(player=player).first()


# --- reviewers -------------------------------------------------------------------------------


def cases_open() -> QuerySet[Case]:
    """Open integrity cases, highest score first, with their players (reviewers only)."""
    return (
        Case.objects.filter(status=Case.Status.OPEN)
        .prefetch_related(Prefetch("players", queryset=Player.objects.order_by("external_id")))
        .order_by("-score", "id")
    )


@dataclass(frozen=True)
class GridRow:
    """A seat of a match or partners table and, per game entered, its hand (None: the seat
    was out of the match by then)."""

    seat: SeatState
    cells: list[GameHandRow | None]


def with_table_games(rounds: list[SeatedRound]) -> list[SeatedRound]:
    """Give each table of a match or partners round its games (``table.played``) and the
    grid of seats by games the console draws (``table.grid``)."""
    for seated in rounds:
        if seated.format == SeatedRound.Format.GAME:
            continue
        for table in seated.tables.all():
            played = table_games(table=table)
            by_game = [{row.player: row for row in game.hands} for game in played.games]
            table.played = played  # type: ignore[attr-defined]
            table.grid = [  # type: ignore[attr-defined]
                GridRow(seat, [hands.get(seat.player) for hands in by_game])
                for seat in played.seats
            ]
    return rounds
