"""The local default: the project-local PostgreSQL server (bin/pg), no broker (jobs run
in-process, explicitly), DEBUG on."""

from .base import *  # noqa: F403
from .base import env

DEBUG = env.bool("DJANGO_DEBUG", default=True)
# Explicit, documented mode: with no CELERY_BROKER_URL the local server runs jobs in-process.
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=not CELERY_BROKER_URL)
