"""Rows of the exports (SPEC §5, §6): a whole leaderboard, a season's station champions and
the Master registry, as flat dicts with stable English keys (the API's field names).

A leaderboard export streams every row with both its ranks, for a live board as for a final
one: the eligible rows read with ``.iterator()`` in the season's ranking order
(``tournaments.selectors.leaderboard.ranking_order``) side by side with their ranks from
``leaderboard_ranks`` (one window query, the same order: it ends on the unique player key),
then the ineligible rows, unranked. Three queries and flat memory however large the board.
"""

from collections.abc import Iterator
from typing import Any
from zoneinfo import ZoneInfo

from titles.models import PlayerTitle
from titles.selectors import registry
from tournaments.models import Event, Season, Standing
from tournaments.selectors.events import station_list
from tournaments.selectors.leaderboard import leaderboard_ranks, ranking_order

CHUNK = 2000

LEADERBOARD_FIELDS = (
    "rank",
    "province_rank",
    "player",
    "name",
    "province",
    "total",
    "games",
    "best",
    "eligible",
    "advanced",
    "by_national",
    "by_province",
)
CHAMPION_FIELDS = (
    "station",
    "city",
    "date",
    "kind",
    "event",
    "status",
    "champion",
    "champion_name",
    "champion_province",
)
REGISTRY_FIELDS = ("player", "name", "province", "status", "valid_until", "lifetime_since", "code")

_STANDING_COLUMNS = (
    "player_key",
    "player__name",
    "province",
    "total",
    "games",
    "best",
    "advanced",
    "by_national",
    "by_province",
)


def _standing_row(
    values: tuple[Any, ...], rank: int | None, province_rank: int | None, *, eligible: bool
) -> dict[str, Any]:
    key, name, province, total, games, best, advanced, by_national, by_province = values
    return {
        "rank": rank,
        "province_rank": province_rank,
        "player": key,
        "name": name,
        "province": province,
        "total": total,
        "games": games,
        "best": best,
        "eligible": eligible,
        "advanced": advanced,
        "by_national": by_national,
        "by_province": by_province,
    }


def leaderboard_export(*, event: Event, province: str | None = None) -> Iterator[dict[str, Any]]:
    """Every row of the event's board (national, or one province's), eligible rows first."""
    rows = Standing.objects.filter(event=event)
    if province:
        rows = rows.filter(province=province)
    order = ranking_order(event)
    ranked = rows.filter(eligible=True).order_by(*order).values_list(*_STANDING_COLUMNS)
    ranks = leaderboard_ranks(event, province=province, chunk=CHUNK)
    for values, (_, rank, province_rank) in zip(ranked.iterator(CHUNK), ranks, strict=True):
        yield _standing_row(values, rank, province_rank, eligible=True)
    others = rows.filter(eligible=False).order_by(*order).values_list(*_STANDING_COLUMNS)
    for values in others.iterator(CHUNK):
        yield _standing_row(values, None, None, eligible=False)


def champions_export(*, season: Season) -> Iterator[dict[str, Any]]:
    """The season's stations in number order with their champions (none yet: empty)."""
    zone = ZoneInfo(season.time_zone)
    for event in station_list(season=season).iterator(CHUNK):
        champion = event.champion
        yield {
            "station": event.station,
            "city": event.city,
            "date": event.starts_at.astimezone(zone).date().isoformat(),
            "kind": event.kind,
            "event": event.code,
            "status": event.status,
            "champion": champion.external_id if champion else None,
            "champion_name": champion.name if champion else None,
            "champion_province": champion.province if champion else None,
        }


def registry_row(title: PlayerTitle) -> dict[str, Any]:
    return {
        "player": title.player.external_id,
        "name": title.player.name,
        "province": title.player.province,
        "status": title.status,
        "valid_until": title.valid_until.isoformat() if title.valid_until else None,
        "lifetime_since": title.lifetime_since.isoformat() if title.lifetime_since else None,
        "code": title.terms[-1]["code"] if title.terms else None,
    }


def registry_export(
    *, province: str | None = None, status: str | None = None
) -> Iterator[dict[str, Any]]:
    """Current Masters and Lifetime Masters (``titles.selectors.registry``) as rows."""
    for title in registry(province=province, status=status).iterator(CHUNK):
        yield registry_row(title)
