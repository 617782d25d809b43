"""Game ingest (SPEC §3, §4, §9): a batch of records (``batch``: ``games_ingest``, the
outcomes and guarantees), their players (``players``), and JSON Lines files (``lines``:
``games_import``). Callers outside tournaments go through ``flows.ingest``, which supplies
the suspensions in force.
"""

from tournaments.services.ingest.batch import (
    Conflict,
    IngestReport,
    Rejection,
    Suspension,
    Suspensions,
    games_ingest,
)
from tournaments.services.ingest.lines import (
    IMPORT_BATCH,
    ImportSummary,
    games_import,
    reject_line,
    results_lines,
)

__all__ = [
    "IMPORT_BATCH",
    "Conflict",
    "ImportSummary",
    "IngestReport",
    "Rejection",
    "Suspension",
    "Suspensions",
    "games_import",
    "games_ingest",
    "reject_line",
    "results_lines",
]
