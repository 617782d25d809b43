"""Leaderboard reads: national and provincial pages, a player's own rank, "why am I in or
out", and the rankings the finalisation and the exports need (SPEC §4, §5).

The order is the season's tie-break order (``tournaments.domain.leaderboard.TIEBREAKS``,
resolved with ``resolve_order``): eligible rows first (games ≥ the minimum), then the
others, each part in that order. For the default order (total, games, best, reached_at,
player) the ORDER BY is exactly the column order of the indexes ``standing_rank_idx`` /
``standing_province_rank_idx`` under an equality on ``eligible``, so a page is an index
range scan. There the databases' own NULL placement is used, and that is exact: ``best``
and ``reached_at`` are NULL only for a row with 0 games, and ``games`` is compared before
them, so a NULL is only ever compared with another NULL. Any other order names
``NULLS LAST`` explicitly as the registry says.

Rank numbers are positions in that order, for a live and a finalised event alike: a
finalised event accepts no new games and a correction re-runs its finalisation, so its order
is its frozen ranking (``Standing.rank`` / ``province_rank`` are kept only on the rows that
advanced, as the basis of their entry; nothing here reads them).

* A page numbers its rows by position: the national rank on a national page, the province
  rank on a province page. A finalised event's page also gives each row the other rank:
  on a national page from each province's count of rows above the page, on a province page
  from the count of rows above its first row and a window over the national rows it spans.
* A player's own ranks are 1 + the number of eligible rows strictly better, counted on the
  index (``live_ranks``).
* ``leaderboard_top`` ranks the national top X and each province's top Y with one window
  query that leaves the rest of the board in the database (``event_finalise``);
  ``leaderboard_ranks`` streams both ranks of a whole board (exports). Both are the rank
  windows of ``tournaments.sql``, re-exported here.

Queries do not grow with the rows shown: a count, then one or two slices, and for a
finalised event one or two more. The count is cached under the event's
``leaderboard_version`` (``core.cache``; the pages that show a board cache what they built
from it the same way), so a standings write, which bumps the version, is seen by the next
read. What the version does not cover, a player's new name, shows within
``board_cache_seconds``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, overload

from django.db import connection
from django.db.models import Count, F, OrderBy, Q, QuerySet, Window
from django.db.models.functions import RowNumber
from django.http import HttpRequest

from accounts.models import Player
from core.cache import cached_by_version, snapshot
from tournaments.domain.advancement import Verdict, explain
from tournaments.models import Event, EventStatus, Standing
from tournaments.selectors.events import event_minimum_games, event_quota, window_is_open
from tournaments.sql import (
    RankedStanding,
    event_tiebreaks,
    leaderboard_ranks,
    leaderboard_top,
    order_column,
    ranking_order_sql,
)

__all__ = [
    "Advancement",
    "Leaderboard",
    "LeaderboardRow",
    "RankedStanding",
    "advancement_explain",
    "leaderboard_player",
    "leaderboard_ranks",
    "leaderboard_rows",
    "leaderboard_top",
    "live_ranks",
    "ranking_order",
    "ranking_order_sql",
]


def ranking_order(event: Event) -> list[OrderBy]:
    """The ORDER BY of a leaderboard part (within eligible or within ineligible rows), in the
    event's tie-break order."""
    tiebreaks, default = event_tiebreaks(event)
    order = []
    for tiebreak in tiebreaks:
        nulls_last = True if tiebreak.nulls_last and not default else None
        column = F(order_column(tiebreak))
        order.append(
            column.desc(nulls_last=nulls_last)
            if tiebreak.descending
            else column.asc(nulls_last=nulls_last)
        )
    return order


def _better_than(standing: Standing, event: Event) -> Q:
    """Rows strictly before ``standing`` in the event's order (NULLs last). Every order
    starts with ``total`` descending (``resolve_order``), so the leading ``total >=`` adds
    nothing but an index range."""
    tiebreaks, _ = event_tiebreaks(event)
    better = Q(pk__in=[])
    equal = Q()
    for tiebreak in tiebreaks:
        column = order_column(tiebreak)
        value = getattr(standing, column)
        if value is None:
            ahead = Q(**{f"{column}__isnull": False})
            same = Q(**{f"{column}__isnull": True})
        else:
            lookup = "gt" if tiebreak.descending else "lt"
            ahead = Q(**{f"{column}__{lookup}": value})
            same = Q(**{column: value})
        better |= equal & ahead
        equal &= same
    return Q(total__gte=standing.total) & better


def live_ranks(standing: Standing, event: Event) -> tuple[int | None, int | None]:
    """(national rank, province rank) of an eligible standing: right now while the event is
    live, its frozen ranks once it is finalised; (None, None) when it is not eligible."""
    if not standing.eligible:
        return None, None
    ahead = Standing.objects.filter(event=event, eligible=True).filter(
        _better_than(standing, event)
    )
    counts = ahead.aggregate(
        national=Count("pk"), province=Count("pk", filter=Q(province=standing.province))
    )
    return counts["national"] + 1, counts["province"] + 1


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    rank: int | None
    province_rank: int | None
    player: str
    name: str
    province: str
    total: int
    games: int
    best: int | None
    eligible: bool
    advanced: bool


def _row(standing: Standing, rank: int | None, province_rank: int | None) -> LeaderboardRow:
    return LeaderboardRow(
        rank=rank,
        province_rank=province_rank,
        player=standing.player_key,
        name=standing.player.name,
        province=standing.province,
        total=standing.total,
        games=standing.games,
        best=standing.best,
        eligible=standing.eligible,
        advanced=standing.advanced,
    )


#: How long a live board's cached count and pages live, in seconds (the staleness bound of
#: what ``leaderboard_version`` does not cover: player names).
BOARD_LIVE_SECONDS = 60
#: The same for a finalised board: its rows change only with a correction, which bumps the
#: version.
BOARD_FINAL_SECONDS = 24 * 60 * 60


def board_cache_seconds(event: Event) -> int:
    """How long a cached part of ``event``'s board lives."""
    return BOARD_FINAL_SECONDS if event.is_finalised else BOARD_LIVE_SECONDS


def board_response_key(
    request: HttpRequest, code: str, **kwargs: Any
) -> tuple[tuple[object, ...], int] | None:
    """What a public answer about event ``code``'s board is cached under
    (``core.cache.cached_response``): its ``leaderboard_version``, status and whether its
    window is open, read at most ``READ_STALE_SECONDS`` ago. None for an unknown code (the
    404 is built each time)."""
    state = snapshot(
        ("board", code),
        lambda: (
            Event.objects.filter(code=code)
            .values_list("leaderboard_version", "status", "starts_at", "ends_at")
            .first()
        ),
    )
    if state is None:
        return None
    version, status, starts_at, ends_at = state
    live = window_is_open(status, starts_at, ends_at)
    final = status == EventStatus.FINALISED
    return ("board", code, version, status, live), (
        BOARD_FINAL_SECONDS if final else BOARD_LIVE_SECONDS
    )


class Leaderboard:
    """A lazy, sliceable leaderboard (what Django's Paginator pages): ``count()`` is one
    query, a slice one or two more, and one or two more again for a finalised event's
    other rank (``_other_ranks``). The count is cached under the event's
    ``leaderboard_version``, read with the event."""

    def __init__(self, event: Event, *, province: str | None = None) -> None:
        self.event = event
        self.province = province
        self._counts: dict[str, int] | None = None

    def _rows(self) -> QuerySet[Standing]:
        rows = Standing.objects.filter(event=self.event).select_related("player")
        if self.province:
            rows = rows.filter(province=self.province)
        return rows

    def _count_rows(self) -> dict[str, int]:
        if self._counts is None:
            self._counts = cached_by_version(
                ("board-count", self.event.pk, self.event.code, self.province or ""),
                self.event.leaderboard_version,
                lambda: self._rows().aggregate(
                    rows=Count("pk"), eligible=Count("pk", filter=Q(eligible=True))
                ),
                board_cache_seconds(self.event),
            )
        return self._counts

    def count(self) -> int:
        return self._count_rows()["rows"]

    def __len__(self) -> int:
        return self.count()

    @overload
    def __getitem__(self, key: int) -> LeaderboardRow: ...

    @overload
    def __getitem__(self, key: slice) -> list[LeaderboardRow]: ...

    def __getitem__(self, key: int | slice) -> Any:
        if isinstance(key, int):
            return self[key : key + 1][0]
        start = key.start or 0
        stop = self.count() if key.stop is None else key.stop
        if start < 0 or stop < 0 or key.step not in (None, 1):
            raise ValueError("a leaderboard slices forward from 0")
        eligible = self._count_rows()["eligible"]
        order = ranking_order(self.event)
        rows: list[LeaderboardRow] = []
        if start < eligible:
            ranked = list(
                self._rows().filter(eligible=True).order_by(*order)[start : min(stop, eligible)]
            )
            other = self._other_ranks(ranked) if self.event.is_finalised else {}
            for i, standing in enumerate(ranked):
                position, also = start + i + 1, other.get(standing.player_key)
                if self.province:
                    rows.append(_row(standing, also, position))
                else:
                    rows.append(_row(standing, position, also))
        if stop > eligible:
            part = (
                self._rows()
                .filter(eligible=False)
                .order_by(*order)[max(start - eligible, 0) : stop - eligible]
            )
            rows.extend(_row(standing, None, None) for standing in part)
        return rows

    def _other_ranks(self, ranked: list[Standing]) -> dict[str, int]:
        """The rank a page does not number itself, by player: the province ranks of a
        national page's rows, the national ranks of a province page's rows."""
        if not ranked:
            return {}
        event = self.event
        board = Standing.objects.filter(event=self.event, eligible=True)
        first, last = ranked[0], ranked[-1]
        if not self.province:
            # Rows of the same province keep their order on the national board: count each
            # province's rows above the page, then go on counting down the page.
            above = dict(
                board.filter(province__in={s.province for s in ranked})
                .filter(_better_than(first, event))
                .values_list("province")
                .annotate(rows=Count("pk"))
                .order_by()
            )
            ranks = {}
            for standing in ranked:
                above[standing.province] = above.get(standing.province, 0) + 1
                ranks[standing.player_key] = above[standing.province]
            return ranks
        # The national rows from the page's first row to its last, numbered by a window and
        # offset by the count of rows above the first; only the page's rows are returned.
        offset = board.filter(_better_than(first, event)).count()
        span = (
            board.exclude(_better_than(first, event))
            .filter(_better_than(last, event) | Q(player_key=last.player_key))
            .annotate(
                page_key=F("player_key"),
                position=Window(RowNumber(), order_by=ranking_order(event)),
            )
            .values_list("page_key", "position")
        )
        sql, params = span.query.sql_with_params()
        keys = [standing.player_key for standing in ranked]
        marks = ", ".join(["%s"] * len(keys))
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT * FROM ({sql}) AS span WHERE page_key IN ({marks})",  # noqa: S608
                [*params, *keys],
            )
            return {key: offset + position for key, position in cursor.fetchall()}


def leaderboard_rows(event: Event, *, province: str | None = None) -> Leaderboard:
    """The event's leaderboard, national or for one province, ready to be paged."""
    return Leaderboard(event, province=province)


def leaderboard_player(
    event: Event, *, player: str, province: str | None = None
) -> list[LeaderboardRow]:
    """One player's row (external id) with both ranks (``live_ranks``); [] when they have
    none."""
    rows = Standing.objects.filter(event=event, player__external_id=player).select_related("player")
    if province:
        rows = rows.filter(province=province)
    standing = rows.first()
    if standing is None:
        return []
    return [_row(standing, *live_ranks(standing, event))]


@dataclass(frozen=True, slots=True)
class _ExplainRow:
    player: str
    province: str
    rank: int | None
    province_rank: int | None
    games: int


@dataclass(frozen=True, slots=True)
class Advancement:
    """The verdict for one player in one event, and whether it is final or "if it ended now"."""

    verdict: Verdict
    finalised: bool
    feeds: str | None


def advancement_explain(*, event: Event, player: Player) -> Advancement:
    """Why a player is in or out of the event the ``event`` feeds (domain ``explain``), from
    the player's ranks (``live_ranks``: frozen once the event is finalised)."""
    standing = Standing.objects.filter(event=event, player=player).first()
    if standing is None:
        row = _ExplainRow(player.external_id, player.province, None, None, 0)
    else:
        rank, province_rank = live_ranks(standing, event)
        row = _ExplainRow(
            standing.player_key, standing.province, rank, province_rank, standing.games
        )
    verdict = explain(row, event_quota(event), minimum_games=event_minimum_games(event))
    return Advancement(
        verdict=verdict,
        finalised=event.is_finalised,
        feeds=event.feeds.code if event.feeds is not None else None,
    )
