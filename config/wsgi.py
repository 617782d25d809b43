"""WSGI entry point (gunicorn config.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
# A web request's statements stop after 30 s (config/settings/base.py).
os.environ.setdefault("DATABASE_STATEMENT_TIMEOUT", "30")

application = get_wsgi_application()
