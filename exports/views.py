"""Downloads (SPEC §5, §6): any leaderboard (national or one province's), a season's station
champions and the Master registry, as CSV or JSON; and the monthly registry snapshots.

Both formats stream (``StreamingHttpResponse`` over the selectors' iterators), so a board
of a million rows costs flat memory and a fixed number of queries. CSV is UTF-8 with a BOM
so Excel opens the Chinese names correctly, and text that a spreadsheet would take for a
formula is neutralised (``exports.spreadsheet``); columns are the stable English keys of
``exports.selectors``. JSON is an object holding what was exported and its ``rows``.
"""

import csv
import json
from collections.abc import Iterable, Iterator
from typing import Any

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils.http import content_disposition_header

from accounts.provinces import PROVINCE_SET
from core.clock import tour_today
from core.errors import NotFoundError
from exports import selectors
from exports.models import RegistrySnapshot
from exports.spreadsheet import safe_row
from titles.models import TitleStatus
from tournaments.selectors.events import event_get, season_get

FORMATS = ("csv", "json")
BOM = "\ufeff"
SNAPSHOTS_PAGE_SIZE = 24


class _Line:
    """A file-like object whose ``write`` returns the line (Django's streaming CSV recipe)."""

    def write(self, value: str) -> str:
        return value


def _csv(fields: tuple[str, ...], rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    writer = csv.DictWriter(_Line(), fieldnames=fields)
    yield BOM + writer.writeheader()
    for row in rows:
        yield writer.writerow(safe_row(row))


def _json(meta: dict[str, Any], rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    head = json.dumps({**meta, "rows": []}, ensure_ascii=False)
    yield head[: -len("[]}")] + "["
    for i, row in enumerate(rows):
        yield ("," if i else "") + json.dumps(row, ensure_ascii=False)
    yield "]}"


def _stream(
    fmt: str,
    name: str,
    fields: tuple[str, ...],
    meta: dict[str, Any],
    rows: Iterable[dict[str, Any]],
) -> StreamingHttpResponse:
    if fmt not in FORMATS:
        raise Http404(f"no format {fmt!r}")
    if fmt == "json":
        return StreamingHttpResponse(_json(meta, rows), content_type="application/json")
    response = StreamingHttpResponse(_csv(fields, rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = content_disposition_header(True, f"{name}.csv") or ""
    return response


def _province(request: HttpRequest) -> str | None:
    province = request.GET.get("province") or None
    if province is not None and province not in PROVINCE_SET:
        raise Http404(f"no province {province!r}")
    return province


def leaderboard(request: HttpRequest, code: str, fmt: str) -> StreamingHttpResponse:
    try:
        event = event_get(code=code)
    except NotFoundError as exc:
        raise Http404(exc.message) from None
    province = _province(request)
    meta = {
        "event": event.code,
        "province": province,
        "finalised": event.is_finalised,
        "leaderboard_version": event.leaderboard_version,
    }
    name = f"{event.code}-leaderboard" + (f"-{province}" if province else "")
    rows = selectors.leaderboard_export(event=event, province=province)
    return _stream(fmt, name, selectors.LEADERBOARD_FIELDS, meta, rows)


def champions(request: HttpRequest, year: int, fmt: str) -> StreamingHttpResponse:
    try:
        season = season_get(year=year)
    except NotFoundError as exc:
        raise Http404(exc.message) from None
    rows = selectors.champions_export(season=season)
    meta = {"season": season.year}
    return _stream(fmt, f"{season.year}-champions", selectors.CHAMPION_FIELDS, meta, rows)


def masters(request: HttpRequest, fmt: str) -> StreamingHttpResponse:
    province = _province(request)
    status = request.GET.get("status") or None
    if status not in (None, TitleStatus.MASTER, TitleStatus.LIFETIME):
        raise Http404(f"no registry status {status!r}")
    rows = selectors.registry_export(province=province, status=status)
    meta = {"as_of": tour_today().isoformat(), "province": province, "status": status}
    name = f"masters-{meta['as_of']}" + (f"-{province}" if province else "")
    return _stream(fmt, name, selectors.REGISTRY_FIELDS, meta, rows)


def snapshots(request: HttpRequest) -> HttpResponse:
    """The monthly registry snapshots, newest first, with their downloads."""
    listed = RegistrySnapshot.objects.defer("rows")
    page = Paginator(listed, SNAPSHOTS_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "exports/snapshots.html", {"page": page})


def snapshot(request: HttpRequest, month: str, fmt: str) -> StreamingHttpResponse:
    kept = RegistrySnapshot.objects.filter(month=month).first()
    if kept is None:
        raise Http404(f"no snapshot for {month!r}")
    meta = {"month": kept.month, "taken_on": kept.taken_on.isoformat(), "count": kept.count}
    return _stream(fmt, f"masters-{kept.month}", selectors.REGISTRY_FIELDS, meta, kept.rows)
