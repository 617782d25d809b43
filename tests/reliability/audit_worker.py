"""A real Celery worker (solo pool) for the fault test, whose audits can be made slow.

Run as ``python -m tests.reliability.audit_worker QUEUE``, with ``DATABASE_URL`` (the test
database), ``RELIABILITY_BROKER`` (Redis) and ``AUDIT_SLEEP`` (seconds the detectors take
longer than they need, 0 for none) in the environment. It is ``celery -A config.celery_app
worker -P solo -Q QUEUE`` with one difference made before the worker starts: each turn of
seat rows into observations in ``integrity.services.audits`` sleeps first, so a test can
kill the worker while an audit is surely running (its run row says ``running``). The
broker's visibility timeout is 5 s, so a message whose worker died is delivered again within
seconds.
"""

import os
import sys
import time
from typing import Any
from unittest import mock


def main(queue: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    import django

    django.setup()
    from config.celery_app import app
    from integrity.domain.audit import observations
    from integrity.services import audits

    pause = float(os.environ.get("AUDIT_SLEEP", "0"))

    def slow_observations(*args: Any, **kwargs: Any) -> Any:
        time.sleep(pause)
        return observations(*args, **kwargs)

    # The name the service calls (its own import of the domain's ``observations``), for good.
    mock.patch.object(audits, "observations", slow_observations).start()
    app.conf.update(
        broker_url=os.environ["RELIABILITY_BROKER"],
        task_always_eager=False,
        broker_transport_options={
            "visibility_timeout": 5,
            "unacked_restore_interval": 1,
            "unacked_restore_throttle": 1,
        },
        worker_prefetch_multiplier=1,
    )
    app.worker_main(
        ["worker", "-P", "solo", "-Q", queue, "-l", "INFO", "--without-gossip", "--without-mingle"]
    )


if __name__ == "__main__":
    main(sys.argv[1])
