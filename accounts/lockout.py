"""Sign-in lockout limits (django-axes handler): a username at one address is locked out after
``AXES_FAILURE_LIMIT`` failures, one address after ``AXES_ADDRESS_FAILURE_LIMIT`` failures
over any usernames, one username after ``AXES_USERNAME_FAILURE_LIMIT`` failures from any
addresses; each for ``AXES_COOLOFF_TIME``.

Axes compares one count with one limit, the most of its lockout parameters' counts. Here
each parameter's count is shifted by the gap between its own limit and
``AXES_FAILURE_LIMIT``, so whichever parameter reaches its own limit first locks."""

from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from django.conf import settings
from django.db.models import Sum
from django.http import HttpRequest

#: ``AXES_LOCKOUT_PARAMETERS`` in order (config/settings/base.py), each with its limit's setting.
LIMIT_SETTINGS = (
    (("username", "ip_address"), "AXES_FAILURE_LIMIT"),
    (("ip_address",), "AXES_ADDRESS_FAILURE_LIMIT"),
    (("username",), "AXES_USERNAME_FAILURE_LIMIT"),
)


class LockoutHandler(AxesDatabaseHandler):  # type: ignore[misc] # axes has no types
    def get_failures(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> int:
        """The failures counted against ``AXES_FAILURE_LIMIT``: the most, over the lockout
        parameters, of the parameter's failures less its limit's excess over that one."""
        base = settings.AXES_FAILURE_LIMIT
        shifted: list[int] = []
        for attempts, (_, name) in zip(
            self.get_user_attempts(request, credentials), LIMIT_SETTINGS, strict=True
        ):
            count: int = attempts.aggregate(total=Sum("failures_since_start"))["total"] or 0
            shifted.append(count - (getattr(settings, name) - base))
        return max(shifted)
