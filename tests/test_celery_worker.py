"""A real Celery worker consumes from Redis (not eager mode)."""

import pytest


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_real_worker_runs_a_task_through_redis(celery_worker_app: object) -> None:
    from core.tasks import ping

    result = ping.delay()
    assert result.get(timeout=20) == "pong"
