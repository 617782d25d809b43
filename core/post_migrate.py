"""Helpers for ``post_migrate`` handlers that seed data."""

from collections.abc import Mapping
from typing import Any


def migrated(signal_kwargs: Mapping[str, Any], *models: str) -> bool:
    """Whether the tables of ``models`` (``"app_label.Model"``) exist after this migrate run.

    ``post_migrate`` fires after every ``migrate``, also a partial one (``migrate tournaments
    0003``) that leaves other apps unmigrated; a handler seeding those apps' tables must then
    do nothing. Reads the project state the signal carries (``apps``)."""
    state = signal_kwargs.get("apps")
    if state is None:
        return True
    for label in models:
        try:
            state.get_model(label)
        except LookupError:
            return False
    return True
