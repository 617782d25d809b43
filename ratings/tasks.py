"""Rating jobs (SPEC §8). Both are idempotent, so a redelivered task is harmless."""

from celery import shared_task
from django.db import transaction

from ratings.services import ratings_replay, ratings_update


@shared_task(name="ratings.update", acks_late=True)
def ratings_update_task() -> int:
    """Rate the games not yet rated (enqueued on commit of each ingest)."""
    return ratings_update()


@shared_task(name="ratings.replay", acks_late=True)
def ratings_replay_task() -> int:
    """Recompute every rating in strict time order (nightly)."""
    return ratings_replay()


def ratings_replay_on_commit() -> None:
    """Replay the ratings once the current transaction commits: a correction (a voided or
    restored game or player, a fixed score) changed which games count, which the
    incremental update never revisits. Called by ``flows.corrections``."""
    transaction.on_commit(ratings_replay_task.delay)
