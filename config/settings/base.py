"""Settings shared by every environment, read from the environment (django-environ).

The local default needs nothing but the project-local PostgreSQL server of ``bin/pg`` (its
socket in ``var/postgres/``, started by ``bin/run`` and ``bin/test``); jobs run in-process
(``CELERY_TASK_ALWAYS_EAGER`` set explicitly by ``local`` and ``test``), local-memory cache.
``DATABASE_URL=postgres://…`` names the PostgreSQL server (psycopg 3);
``CELERY_BROKER_URL=redis://…`` a real broker.
"""

from datetime import timedelta
from pathlib import Path
from typing import Any

import django_stubs_ext
import environ
from celery.schedules import crontab
from csp.constants import NONE, SELF, UNSAFE_INLINE
from django.utils.translation import gettext_lazy as _

django_stubs_ext.monkeypatch()  # ModelAdmin[Event] and friends at run time (pyproject.toml)

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = BASE_DIR / "var"
VAR_DIR.mkdir(exist_ok=True)

env = environ.Env()
env.read_env(BASE_DIR / ".env", overwrite=False)

SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="insecure-local-key-change-me")
DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])

INSTALLED_APPS = [
    "config.admin_app.StaffAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "simple_history",
    "axes",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "core",
    "accounts",
    "tournaments",
    "titles",
    "integrity",
    "ratings",
    "webhooks",
    "notices",
    "web",
    "exports",
    "flows",
    "demo",
    "bench",
]

MIDDLEWARE = [
    # First: anonymous GETs of cached public answers are served whole from here (core.edge).
    "core.edge.EdgeCacheMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "core.middleware.RejectNulMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_otp.middleware.OTPMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "csp.middleware.CSPMiddleware",
    "core.middleware.DatabaseUnavailableMiddleware",
    # Last, as django-axes asks: turns a locked-out sign-in into its 429 answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database ------------------------------------------------------------------------------
# PostgreSQL only. Unset, DATABASE_URL is the project-local server's socket in var/postgres/
# (bin/pg; bin/run and bin/test start it and export its URL). libpq's unix-socket form,
# postgres://user@/db?host=/dir&port=N, names the socket in the query: Django reads HOST/PORT.
DATABASES = {
    "default": env.db(
        "DATABASE_URL", default=f"postgres://postgres@/unotour?host={VAR_DIR / 'postgres'}"
    ),
}
for _key in ("host", "port"):
    if _key in DATABASES["default"].get("OPTIONS", {}):
        DATABASES["default"][_key.upper()] = DATABASES["default"]["OPTIONS"].pop(_key)
DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DATABASE_CONN_MAX_AGE", default=60))
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# Seconds to wait for PostgreSQL to accept a connection (libpq connect_timeout): a server that
# accepts and never answers then fails the request (503) instead of holding its thread.
DATABASES["default"].setdefault("OPTIONS", {})["connect_timeout"] = env.int(
    "DATABASE_CONNECT_TIMEOUT", default=3
)
# Seconds a statement may run (PostgreSQL statement_timeout; 0: no limit). The web process sets
# it (config/wsgi.py: 30 s) so a runaway query cannot hold a request thread; jobs and
# commands, whose statements may rightly run long, keep no limit unless told.
_STATEMENT_TIMEOUT = env.int("DATABASE_STATEMENT_TIMEOUT", default=0)
if _STATEMENT_TIMEOUT:
    DATABASES["default"]["OPTIONS"]["options"] = f"-c statement_timeout={_STATEMENT_TIMEOUT}s"

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "accounts.User"

# Argon2id first (new and re-hashed passwords); the others still verify older hashes.
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
]

# Sign-in lockout (django-axes, accounts.backends, accounts.lockout): 5 failures of one
# username from one address, 30 from one address over any usernames, or 20 of one username
# from any addresses lock that out for an hour (the answer is 429). The parameters' order
# matches accounts.lockout.LIMIT_SETTINGS.
AUTHENTICATION_BACKENDS = [
    "accounts.backends.LockoutBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_HANDLER = "accounts.lockout.LockoutHandler"
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_ADDRESS_FAILURE_LIMIT = env.int("AXES_ADDRESS_FAILURE_LIMIT", default=30)
AXES_USERNAME_FAILURE_LIMIT = env.int("AXES_USERNAME_FAILURE_LIMIT", default=20)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address", "username"]
AXES_COOLOFF_TIME = timedelta(hours=env.float("AXES_COOLOFF_HOURS", default=1.0))
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "web/signin/locked.html"
AXES_VERBOSE = False  # failures and lockouts are logged as JSON by core.authlog instead
# The client's address: REMOTE_ADDR, or X-Forwarded-For only when REMOTE_ADDR is one of these
# proxies (addresses or CIDR networks, comma-separated in the environment): core.clientip.
TRUSTED_PROXIES = env.list("TRUSTED_PROXIES", default=[])
AXES_CLIENT_IP_CALLABLE = "core.clientip.client_ip"

# Staff sign-in (web.views.signin): the site's page, a TOTP second factor (django-otp) for
# reviewers and superusers; the admin's login sends people there.
LOGIN_URL = "web:signin"
LOGOUT_REDIRECT_URL = "web:home"
OTP_TOTP_ISSUER = "UNO Tour"
PASSWORD_RESET_TIMEOUT = env.int("PASSWORD_RESET_TIMEOUT", default=60 * 60 * 3)

# --- E-mail (password reset): EMAIL_URL, e.g. smtp+tls://USER:change-me@HOST:587 ---------------
# Unset, mail is written to the console (production.py defaults to SMTP on localhost instead).
globals().update(env.email_url("EMAIL_URL", default="consolemail://"))
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="UNO Tour <noreply@localhost>")

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- Time and language (SPEC §6: calendar days in Asia/Shanghai) -------------------------------
TIME_ZONE = "Asia/Shanghai"
USE_TZ = True
USE_I18N = True
LANGUAGE_CODE = "zh-hans"
LANGUAGES = [("zh-hans", _("简体中文")), ("en", _("English"))]
LOCALE_PATHS = [BASE_DIR / "locale"]

# --- Static files (vendored, no CDN) -----------------------------------------------------------
STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# --- Cache -------------------------------------------------------------------------------------
# Seconds to wait for Redis (cache and broker): connecting, then each answer. A Redis that
# accepts and never answers then fails fast, and the cache fails soft (core.redis_cache).
REDIS_CONNECT_TIMEOUT = env.float("REDIS_CONNECT_TIMEOUT", default=1.0)
REDIS_SOCKET_TIMEOUT = env.float("REDIS_SOCKET_TIMEOUT", default=1.0)


def shared_cache(url_default: str) -> dict[str, Any]:
    """``CACHE_URL``'s cache; a Redis one fails soft and has the timeouts above."""
    config: dict[str, Any] = env.cache("CACHE_URL", default=url_default)
    if config["BACKEND"] == "django.core.cache.backends.redis.RedisCache":
        config["BACKEND"] = "core.redis_cache.FailSoftRedisCache"
        config["OPTIONS"] = {
            "socket_connect_timeout": REDIS_CONNECT_TIMEOUT,
            "socket_timeout": REDIS_SOCKET_TIMEOUT,
        }
    return config


CACHES = {
    "default": shared_cache("locmemcache://unotour"),
    # Each process's own copies of cached public answers (core.cache.cached_response).
    "local": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "answers",
        "OPTIONS": {"MAX_ENTRIES": 2000},
    },
}
# How stale a public board, leaderboard API answer or player page may be, in whole seconds: a
# board's version is read at most this often, shared by all processes through the cache
# (core.cache.snapshot). 0: every request reads it. 3 s: well inside a live board's own 10 s
# refresh, and each board is rebuilt at most once per 3 s under a stream of games
# (docs/performance.md: at 1 s the rebuilds alone held the read budget out of reach).
READ_STALE_SECONDS = env.int("READ_STALE_SECONDS", default=3)

# --- REST API ----------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.ApiTokenAuthentication",
        "accounts.authentication.VerifiedSessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_SCHEMA_CLASS": "core.schema.AutoSchema",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "core.pagination.DefaultPagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "core.api.exception_handler",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["core.parsers.StrictJSONParser"],
    "DEFAULT_THROTTLE_CLASSES": ["core.throttling.WriteRateThrottle"],
}
# Writes per user (or per address when anonymous): core.throttling; 429 beyond it.
API_WRITE_RATE = env.str("API_WRITE_RATE", default="600/min")
# Ingest plausibility (tournaments.services.ingest_validation): a game may start at most this
# many seconds after the server's now (clocks drift), and last the game limit (SPEC §3:
# 3 minutes) plus a tolerance for the end-of-game screens.
TOUR_INGEST_CLOCK_SKEW = env.int("TOUR_INGEST_CLOCK_SKEW", default=300)
TOUR_GAME_TIME_LIMIT = env.int("TOUR_GAME_TIME_LIMIT", default=180)
TOUR_GAME_TIME_TOLERANCE = env.int("TOUR_GAME_TIME_TOLERANCE", default=30)
# Request bodies: a batch of 1,000 game records with sessions is about 1 MB; 8 MB leaves
# room for move logs. Larger: 413 (core.api), nothing written.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=8 * 1024 * 1024)
API_TOKEN_TTL_DAYS = env.int("API_TOKEN_TTL_DAYS", default=90)

SPECTACULAR_SETTINGS = {
    "TITLE": "UNO Tour API",
    "DESCRIPTION": "China UNO Online Tour: events, game ingest, leaderboards and Master titles.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Two choice sets are named "format": an event's and a seated round's.
    "ENUM_NAME_OVERRIDES": {
        "EventFormatEnum": "tournaments.models.events.Event.Format",
        "RoundFormatEnum": "tournaments.models.seated.SeatedRound.Format",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.schema.postprocess_partial_times",
        "core.schema.postprocess_errors",
        "core.schema.postprocess_request_text",
        "core.schema.postprocess_empty_query",
    ],
}

# --- Celery (config/celery_app.py reads every CELERY_* setting) ---------------------------------
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="")
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", default="") or None
CELERY_TIMEZONE = TIME_ZONE
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=30 * 60)
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=25 * 60)
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A job is acknowledged when it finishes, and redelivered when its worker dies: Redis hands an
# unacknowledged job to another worker after the visibility timeout, set just above the hard
# time limit (the longest job's ceiling), so a job that is still running is never doubled.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": CELERY_TASK_TIME_LIMIT + 5 * 60,
    "socket_connect_timeout": REDIS_CONNECT_TIMEOUT,
    "socket_timeout": 5.0,
}
CELERY_BROKER_CONNECTION_TIMEOUT = 2.0
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# Jobs run in-process only when a settings module says so explicitly (local, test); production
# refuses to start without a broker (config/settings/production.py).
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_TASK_EAGER_PROPAGATES = True

# --- Logging -----------------------------------------------------------------------------------
LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "core.logs.JsonFormatter"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain"},
        "json": {"class": "logging.StreamHandler", "formatter": "json"},
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    # Security events (auth failures, lockouts) as one JSON object a line: core.logs.
    "loggers": {"unotour": {"handlers": ["json"], "level": "INFO", "propagate": False}},
}


# --- Content Security Policy (django-csp) -------------------------------------------------------
# Scripts only from this origin: the pages have no inline script (data travels in
# json_script blocks, which do not execute). Styles also allow inline: ECharts tooltips,
# htmx's indicator style and Redoc inject them. An inline script would need
# ``nonce="{{ request.csp_nonce }}"`` and NONCE in script-src. docs/reliability.md.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, UNSAFE_INLINE],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "worker-src": [SELF, "blob:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

# --- Tournaments (SPEC §4, §8) -----------------------------------------------------------------
# An online event is finalised by the beat job this long after its window closed.
TOUR_AUTO_FINALISE_GRACE = timedelta(
    minutes=env.int("TOUR_AUTO_FINALISE_GRACE_MINUTES", default=30)
)

# --- Ratings (ratings.services) -----------------------------------------------------------------
# A rating stays provisional until its player has played this many rated games.
RATING_PROVISIONAL_GAMES = env.int("RATING_PROVISIONAL_GAMES", default=20)

# --- Integrity (SPEC §7; integrity.conf turns the detector parameters into AuditParams) -------
# The Benjamini-Hochberg level of co-seating, boosting and soft play.
INTEGRITY_Q = env.float("INTEGRITY_Q", default=0.01)
# The level of the pair tests read from results (point flow, "better together", the fed
# account): under the global null BH holds each family's chance of any flag on an honest week
# to it. What a stricter level costs the farms and pairs found: docs/decisions.md.
INTEGRITY_PAIR_Q = env.float("INTEGRITY_PAIR_Q", default=0.01)
# Accounts above which a device or an address is shared infrastructure (carrier NAT, a campus)
# and links nobody.
INTEGRITY_DEGREE_CAP = env.int("INTEGRITY_DEGREE_CAP", default=8)
# Who enters the co-seating family: games in the window, hours played alongside.
INTEGRITY_MIN_GAMES = env.int("INTEGRITY_MIN_GAMES", default=10)
INTEGRITY_MIN_COMMON_HOURS = env.int("INTEGRITY_MIN_COMMON_HOURS", default=2)
# Shared wins an ordered pair needs to enter the point-flow family.
INTEGRITY_MIN_SHARED_WINS = env.int("INTEGRITY_MIN_SHARED_WINS", default=5)
# The boosting scan: the shortest segment, the rolling window, the least shift of play hours.
INTEGRITY_BOOST_MIN_SEGMENT = env.int("INTEGRITY_BOOST_MIN_SEGMENT", default=10)
INTEGRITY_BOOST_WINDOW = env.int("INTEGRITY_BOOST_WINDOW", default=10)
INTEGRITY_BOOST_MIN_HOUR_SHIFT = env.float("INTEGRITY_BOOST_MIN_HOUR_SHIFT", default=6.0)
# Days before an audit's window it reads as history (0: none): boosting's owner baseline, and
# more games of the pairs the window's point flow, "better together" and fed accounts test.
INTEGRITY_HISTORY_DAYS = env.int("INTEGRITY_HISTORY_DAYS", default=7)
# Rows fetched per round trip when an audit streams seats.
INTEGRITY_CHUNK_SIZE = env.int("INTEGRITY_CHUNK_SIZE", default=20_000)
# PostgreSQL parallel workers per audit statement (max_parallel_workers_per_gather). The audit
# already keeps two connections busy; on two cores extra workers only crowd them
# (docs/performance.md). Raise it on a database server with cores to spare.
INTEGRITY_AUDIT_PARALLEL_WORKERS = env.int("INTEGRITY_AUDIT_PARALLEL_WORKERS", default=0)
# When the season audit runs (CELERY_BEAT_SCHEDULE below): Tuesdays 04:00 Asia/Shanghai, after
# Monday's weekly final.
INTEGRITY_SEASON_AUDIT_CRONTAB = {"minute": "0", "hour": "4", "day_of_week": "2"}

# --- Titles (SPEC §6, §8) ------------------------------------------------------------------------
# Approve clean pending grants this many days after they were recorded (None: off).
TITLES_AUTO_APPROVE_AFTER_DAYS = env.int("TITLES_AUTO_APPROVE_AFTER_DAYS", default=None)
# A grant from an event is decidable only once the event's integrity audit has completed.
TITLES_REQUIRE_EVENT_AUDIT = env.bool("TITLES_REQUIRE_EVENT_AUDIT", default=True)

# --- Title credentials (SPEC §6 Credentials, titles.credentials) ---------------------------------
# The tour's public base URL: credential URLs, and the issuer did:web of its host.
CREDENTIAL_ISSUER_URL = env.str("CREDENTIAL_ISSUER_URL", default="http://localhost:8000")
# The Ed25519 signing key, a secret Multikey (z3u2…: `manage.py credential_key`). Required in
# production; local runs keep one in var/credential-signing-key, tests make their own.
CREDENTIAL_SIGNING_KEY = env.str("CREDENTIAL_SIGNING_KEY", default="")
# Public Multikeys (z6Mk…) of earlier signing keys: still in the DID document, so credentials
# signed before a rotation keep verifying.
CREDENTIAL_RETIRED_KEYS = env.list("CREDENTIAL_RETIRED_KEYS", default=[])

# --- Players' notices (issue #27) ----------------------------------------------------------------
# A title change dated more than this many days before the tour day is history, not news: it
# writes no notice (a bulk import of an old ledger tells no one).
NOTICES_TITLE_NEWS_DAYS = env.int("NOTICES_TITLE_NEWS_DAYS", default=90)

# Beat schedule (Asia/Shanghai, CELERY_TIMEZONE); the DatabaseScheduler syncs it into the DB.
CELERY_BEAT_SCHEDULE = {
    "tournaments-auto-finalise": {
        "task": "tournaments.events_auto_finalise",
        "schedule": crontab(minute="*/5"),
    },
    "titles-expire": {"task": "titles.expire", "schedule": crontab(minute=5, hour=0)},
    "titles-remind": {"task": "titles.remind", "schedule": crontab(minute=0, hour=9)},
    "titles-expiring-notices": {
        "task": "titles.expiring_notices",
        "schedule": crontab(minute=5, hour=9),
    },
    "titles-auto-approve": {"task": "titles.auto_approve", "schedule": crontab(minute=30, hour=0)},
    "titles-world-cup-snapshot": {
        "task": "titles.world_cup_snapshot",
        "schedule": crontab(minute=15, hour=0, day_of_month=1),
    },
    "integrity-season-audit": {
        "task": "integrity.audit_season",
        "schedule": crontab(**INTEGRITY_SEASON_AUDIT_CRONTAB),
    },
    "integrity-audit-runs-sweep": {
        "task": "integrity.audit_runs_sweep",
        "schedule": crontab(minute="*/15"),
    },
    "ratings-update": {"task": "ratings.update", "schedule": crontab(minute="*/10")},
    "ratings-replay": {"task": "ratings.replay", "schedule": crontab(minute=0, hour=4)},
    "exports-snapshot-registry": {
        "task": "exports.snapshot_registry",
        "schedule": crontab(minute=45, hour=0, day_of_month=1),
    },
}
