"""Authentication failures as structured log lines (logger ``unotour.auth``, core.logs).

* ``login_failed`` — a password sign-in failed (Django's ``user_login_failed``: the admin
  and reviewer sign-in form): username tried, client address, path. The password is never
  logged.
* ``locked_out`` — django-axes locked a username + address out after too many failures.
* ``token_refused`` — an API request carried a bad, expired or revoked token, or the
  signed-in user is inactive (logged by ``core.api.exception_handler``).

Receivers are connected in ``core.apps.CoreConfig.ready``."""

import logging
from typing import Any

from django.http import HttpRequest

from core.clientip import client_ip
from core.logs import log_event

logger = logging.getLogger("unotour.auth")


def client_address(request: HttpRequest | None) -> str | None:
    return client_ip(request) if request is not None else None


def on_login_failed(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **kwargs: Any
) -> None:
    log_event(
        logger,
        logging.WARNING,
        "login_failed",
        username=credentials.get("username"),
        ip=client_address(request),
        path=request.path if request is not None else None,
    )


def on_locked_out(
    sender: Any,
    request: HttpRequest | None,
    username: str | None,
    ip_address: str | None,
    **kwargs: Any,
) -> None:
    log_event(logger, logging.WARNING, "locked_out", username=username, ip=ip_address)


def on_token_refused(request: Any, reason: str) -> None:
    log_event(
        logger,
        logging.WARNING,
        "token_refused",
        reason=reason,
        ip=client_address(getattr(request, "_request", request)),
        path=getattr(request, "path", None),
        method=getattr(request, "method", None),
    )
