"""Settings for the test suite: fast hashing, in-process jobs, the database from DATABASE_URL."""

import os

from titles.domain.credentials import ED25519_SECRET, multikey_encode

from .base import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = True
CACHES["default"] = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}  # noqa: F405
READ_STALE_SECONDS = 0  # exact reads; tests/web/test_cache.py sets a bound to see it held
ALLOWED_HOSTS = ["testserver", "127.0.0.1", "localhost"]
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
LOGGING["root"]["level"] = "WARNING"  # noqa: F405
# Far above what the suite sends in a minute (the throttle's history lives in the shared
# local-memory cache); tests/reliability lowers it to see the 429.
API_WRITE_RATE = "100000/min"
# Title tests decide grants without running audits; tests/integrity/test_grant_audit.py
# turns the requirement on and checks it.
TITLES_REQUIRE_EVENT_AUDIT = False
# A test that drops a half-read ``.iterator()`` leaves a server-side cursor that psycopg closes
# at garbage collection, inside a later test's transaction, where the cursor no longer exists:
# that aborts the later test. Client-side cursors stream the same rows.
DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True  # noqa: F405
# The suite makes its own credential signing key, a new one each run (titles.credentials).
CREDENTIAL_SIGNING_KEY = multikey_encode(ED25519_SECRET, os.urandom(32))
CREDENTIAL_ISSUER_URL = "https://tour.example.org"
