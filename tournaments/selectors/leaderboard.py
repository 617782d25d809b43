"""Leaderboard reads: national and provincial pages, a player's own rank, and "why am I in
or out" (SPEC §4, §5).

The order is the season's tie-break order (``tournaments.domain.leaderboard.TIEBREAKS``,
resolved with ``resolve_order``): eligible rows first (games ≥ the minimum), then the
others, each part in that order. For the default order (total, games, best, reached_at,
player) the ORDER BY is exactly the column order of the indexes ``standing_rank_idx`` /
``standing_province_rank_idx`` under an equality on ``eligible``, so a page is an index
range scan. There the databases' own NULL placement is used, and that is exact: ``best``
and ``reached_at`` are NULL only for a row with 0 games, and ``games`` is compared before
them, so a NULL is only ever compared with another NULL. Any other order names
``NULLS LAST`` explicitly as the registry says.

Rank numbers: a finalised event shows its frozen ranks (``Standing.rank`` /
``province_rank``, written by ``event_finalise``); a live one numbers rows by position — the
national rank on a national page, the province rank on a province page (the other rank is
known only when the event is finalised). A player's own live rank is 1 + the number of
eligible rows strictly better, counted on the index.

Queries do not grow with the rows shown: a count, then one or two slices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, overload

from django.db import connection
from django.db.models import Count, F, OrderBy, Q, QuerySet

from accounts.models import Player
from tournaments.domain.advancement import Verdict, explain
from tournaments.domain.leaderboard import DEFAULT_ORDER, TieBreak, resolve_order
from tournaments.models import Event, Season, Standing
from tournaments.selectors.events import event_minimum_games, event_quota


def _column(tiebreak: TieBreak) -> str:
    return "player_key" if tiebreak.column == "player" else tiebreak.column


def _tiebreaks(season: Season) -> tuple[tuple[TieBreak, ...], bool]:
    tiebreaks = resolve_order(season.tiebreak_order)
    return tiebreaks, tuple(t.name for t in tiebreaks) == DEFAULT_ORDER


def ranking_order(season: Season) -> list[OrderBy]:
    """The ORDER BY of a leaderboard part (within eligible or within ineligible rows)."""
    tiebreaks, default = _tiebreaks(season)
    order = []
    for tiebreak in tiebreaks:
        nulls_last = True if tiebreak.nulls_last and not default else None
        column = F(_column(tiebreak))
        order.append(
            column.desc(nulls_last=nulls_last)
            if tiebreak.descending
            else column.asc(nulls_last=nulls_last)
        )
    return order


def ranking_order_sql(season: Season) -> str:
    """The same order as SQL, for window functions (``event_finalise``)."""
    tiebreaks, default = _tiebreaks(season)
    parts = []
    for tiebreak in tiebreaks:
        part = connection.ops.quote_name(_column(tiebreak))
        part += " DESC" if tiebreak.descending else " ASC"
        if tiebreak.nulls_last and not default:
            part += " NULLS LAST"
        parts.append(part)
    return ", ".join(parts)


def _better_than(standing: Standing, season: Season) -> Q:
    """Rows strictly before ``standing`` in the season's order (NULLs last)."""
    tiebreaks, _ = _tiebreaks(season)
    better = Q(pk__in=[])
    equal = Q()
    for tiebreak in tiebreaks:
        column = _column(tiebreak)
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
    return better


def live_ranks(standing: Standing, event: Event) -> tuple[int | None, int | None]:
    """(national rank, province rank) of an eligible standing right now; (None, None) if not."""
    if not standing.eligible:
        return None, None
    ahead = Standing.objects.filter(event=event, eligible=True).filter(
        _better_than(standing, event.season)
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


class Leaderboard:
    """A lazy, sliceable leaderboard (what Django's Paginator pages): ``count()`` is one
    query, a slice one or two more."""

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
            self._counts = self._rows().aggregate(
                rows=Count("pk"), eligible=Count("pk", filter=Q(eligible=True))
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
        order = ranking_order(self.event.season)
        rows: list[LeaderboardRow] = []
        if start < eligible:
            part = self._rows().filter(eligible=True).order_by(*order)[start : min(stop, eligible)]
            rows.extend(self._numbered(standing, start + i + 1) for i, standing in enumerate(part))
        if stop > eligible:
            part = (
                self._rows()
                .filter(eligible=False)
                .order_by(*order)[max(start - eligible, 0) : stop - eligible]
            )
            rows.extend(_row(standing, None, None) for standing in part)
        return rows

    def _numbered(self, standing: Standing, position: int) -> LeaderboardRow:
        if self.event.is_finalised:
            return _row(standing, standing.rank, standing.province_rank)
        if self.province:
            return _row(standing, None, position)
        return _row(standing, position, None)


def leaderboard_rows(event: Event, *, province: str | None = None) -> Leaderboard:
    """The event's leaderboard, national or for one province, ready to be paged."""
    return Leaderboard(event, province=province)


def leaderboard_player(
    event: Event, *, player: str, province: str | None = None
) -> list[LeaderboardRow]:
    """One player's row (external id), with their live ranks; [] when they have none."""
    rows = Standing.objects.filter(event=event, player_key=player).select_related("player")
    if province:
        rows = rows.filter(province=province)
    standing = rows.first()
    if standing is None:
        return []
    if event.is_finalised:
        return [_row(standing, standing.rank, standing.province_rank)]
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
    """Why a player is in or out of the event the ``event`` feeds (domain ``explain``)."""
    standing = Standing.objects.filter(event=event, player=player).first()
    if standing is None:
        row = _ExplainRow(player.external_id, player.province, None, None, 0)
    elif event.is_finalised:
        row = _ExplainRow(
            standing.player_key,
            standing.province,
            standing.rank,
            standing.province_rank,
            standing.games,
        )
    else:
        rank, province_rank = live_ranks(standing, event)
        row = _ExplainRow(
            standing.player_key, standing.province, rank, province_rank, standing.games
        )
    verdict = explain(row, event_quota(event), minimum_games=event_minimum_games(event))
    return Advancement(
        verdict=verdict,
        finalised=event.is_finalised,
        feeds=event.feeds.code if event.feeds_id else None,
    )
