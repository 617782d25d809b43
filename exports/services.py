"""Monthly registry snapshots (SPEC §6 registry, §8 "every job is idempotent").

``registry_snapshot_take`` keeps the Master registry as it stands today under the current
tour month (Asia/Shanghai). The beat job runs it on the 1st, after the night's expiry sweep
(``titles.expire``), so a month's snapshot is the registry at the start of that month. One
snapshot per month, enforced by the unique ``month``: a second run in the same month, or
two runs at once, keep the first snapshot and write nothing.
"""

from django.db import IntegrityError, transaction

from core.clock import tour_today
from exports.models import RegistrySnapshot
from exports.selectors import registry_export


def registry_snapshot_take() -> tuple[RegistrySnapshot, bool]:
    """This month's snapshot, taken now if it does not exist yet; returns it and whether it
    was written."""
    today = tour_today()
    month = f"{today:%Y-%m}"
    existing = RegistrySnapshot.objects.filter(month=month).first()
    if existing is not None:
        return existing, False
    rows = list(registry_export())
    try:
        with transaction.atomic():
            snapshot = RegistrySnapshot.objects.create(
                month=month, taken_on=today, count=len(rows), rows=rows
            )
    except IntegrityError:
        return RegistrySnapshot.objects.get(month=month), False
    return snapshot, True
