"""Export jobs (SPEC §8), thin and idempotent."""

from celery import shared_task

from exports.services import registry_snapshot_take


@shared_task(name="exports.snapshot_registry", acks_late=True)
def snapshot_registry() -> int:
    """On the 1st of each month: keep the registry as it stands (1 if written, else 0)."""
    _, written = registry_snapshot_take()
    return int(written)
