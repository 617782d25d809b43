"""Game ingest with the suspension check (SPEC §7 sanctions, §9 game record v1).

``tournaments.services.ingest`` validates, scores and stores games; whether a player may
play is integrity's: a suspension in force is an unreversed ``integrity.Sanction`` with
``suspend`` set, from its ``effective_on`` day (a tour day, Asia/Shanghai). These flows hand
the tournaments ingest those suspensions, asked once per batch, so a game of a suspended
player that started on or after that day is rejected at the seat, naming the case, and a
suspension reversed on appeal stops refusing at once. Callers (the games API, the
``import_games`` command, the simulations and the demo) call these.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from accounts.models import User
from integrity.models import Sanction
from tournaments.services import ingest
from tournaments.services.ingest import IMPORT_BATCH, ImportSummary, IngestReport, Suspension

__all__ = ["games_import", "games_ingest", "suspensions_in_force"]


def suspensions_in_force() -> Mapping[str, Suspension]:
    """Every suspension in force by player key, the earliest of a player's if several (a few
    at most, against thousands of players in a batch)."""
    suspended: dict[str, Suspension] = {}
    for key, since, case in (
        Sanction.objects.filter(suspend=True, reversed_at__isnull=True)
        .order_by("effective_on", "pk")
        .values_list("player__external_id", "effective_on", "case_id")
    ):
        suspended.setdefault(key, Suspension(since=since, ground=f"integrity case {case}"))
    return suspended


def games_ingest(
    *,
    records: Sequence[object],
    by: User | None = None,
    source: str = "api",
    indexes: Sequence[int] | None = None,
) -> IngestReport:
    """Ingest a batch of game records v1 (``tournaments.services.ingest.games_ingest``),
    refusing suspended players' games."""
    return ingest.games_ingest(
        records=records, by=by, source=source, indexes=indexes, suspensions=suspensions_in_force
    )


def games_import(
    *,
    lines: Iterable[str | bytes],
    by: User | None = None,
    batch_size: int = IMPORT_BATCH,
    on_rejects: Callable[[list[dict[str, Any]]], None],
    on_batch: Callable[[ImportSummary], None] | None = None,
) -> ImportSummary:
    """Ingest a JSON Lines file (``tournaments.services.ingest.games_import``), refusing
    suspended players' games."""
    return ingest.games_import(
        lines=lines,
        by=by,
        batch_size=batch_size,
        on_rejects=on_rejects,
        on_batch=on_batch,
        suspensions=suspensions_in_force,
    )
