"""Production: PostgreSQL, Redis broker and cache, secure cookies. Refuses unsafe defaults."""

import os

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import env

DEBUG = False
SECRET_KEY = env.str("DJANGO_SECRET_KEY")
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS")
# The container's healthcheck asks http://127.0.0.1:8000/healthz from inside: answered from
# loopback before the host check and the https redirect (docs/decisions.md, issue 23 item 9).
MIDDLEWARE = ["core.middleware.LoopbackHealthzMiddleware", *MIDDLEWARE]  # noqa: F405

if not os.environ.get("DATABASE_URL"):
    raise ImproperlyConfigured(
        "DATABASE_URL is required in production: the local server's socket is not a default here."
    )
if not CELERY_BROKER_URL:
    raise ImproperlyConfigured(
        "CELERY_BROKER_URL is required in production: jobs never run in-process here."
    )
if not CREDENTIAL_SIGNING_KEY:  # noqa: F405
    raise ImproperlyConfigured(
        "CREDENTIAL_SIGNING_KEY is required in production: title credentials are signed with it"
        " (`manage.py credential_key` makes one; keep it secret, list retired public keys in"
        " CREDENTIAL_RETIRED_KEYS)."
    )
CREDENTIAL_ISSUER_URL = env.str("CREDENTIAL_ISSUER_URL", default=f"https://{ALLOWED_HOSTS[0]}")
CELERY_TASK_ALWAYS_EAGER = False
# Password-reset mail goes out by SMTP (EMAIL_URL, e.g. smtp+tls://USER:change-me@HOST:587).
globals().update(env.email_url("EMAIL_URL", default="smtp://localhost:25"))

CACHES["default"] = shared_cache("redis://127.0.0.1:6379/1")  # noqa: F405

STORAGES["staticfiles"] = {
    "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage",
}

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=60 * 60 * 24 * 365)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
X_FRAME_OPTIONS = "DENY"
