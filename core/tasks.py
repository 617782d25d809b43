"""Tasks of the core app."""

from celery import shared_task


@shared_task(name="core.ping")
def ping() -> str:
    """Answer ``pong``: proves a worker consumes from the broker (used by the health drills)."""
    return "pong"
