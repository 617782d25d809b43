# Production image: gunicorn (web), celery worker and beat share it (docker-compose.yml).
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml requirements.lock README.md ./
COPY config ./config
COPY core ./core
COPY accounts ./accounts
COPY tournaments ./tournaments
COPY titles ./titles
COPY integrity ./integrity
COPY ratings ./ratings
COPY webhooks ./webhooks
RUN pip install -c requirements.lock .
COPY . .
RUN DJANGO_SETTINGS_MODULE=config.settings.production DJANGO_SECRET_KEY=build-only CREDENTIAL_SIGNING_KEY=build-only \
    DJANGO_ALLOWED_HOSTS=build CELERY_BROKER_URL=redis://build DATABASE_URL=postgres://build/build \
    python manage.py collectstatic --no-input \
    && useradd --system --uid 1000 tour && chown -R tour /app
USER tour
EXPOSE 8000
CMD ["gunicorn", "config.wsgi", "--bind", "0.0.0.0:8000", "--workers", "4", "--threads", "4", "--access-logfile", "-"]
