"""The local default: the project-local PostgreSQL server (bin/pg), no broker (jobs run
in-process, explicitly), DEBUG on."""

import os

from titles.domain.credentials import ED25519_SECRET, multikey_encode

from .base import *  # noqa: F403
from .base import CREDENTIAL_SIGNING_KEY, VAR_DIR, env

DEBUG = env.bool("DJANGO_DEBUG", default=True)
# Explicit, documented mode: with no CELERY_BROKER_URL the local server runs jobs in-process.
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=not CELERY_BROKER_URL)

# A local signing key for the title credentials, made once and kept in var/ (never production).
if not CREDENTIAL_SIGNING_KEY:
    _key_file = VAR_DIR / "credential-signing-key"
    if not _key_file.exists():
        _key_file.write_text(multikey_encode(ED25519_SECRET, os.urandom(32)))
        _key_file.chmod(0o600)
    CREDENTIAL_SIGNING_KEY = _key_file.read_text().strip()
