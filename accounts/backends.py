"""Sign-in lockout (django-axes): after ``AXES_FAILURE_LIMIT`` failed password sign-ins for
one username from one address, that pair is locked out for ``AXES_COOLOFF_TIME``.

:class:`LockoutBackend` is axes' standalone backend, first in ``AUTHENTICATION_BACKENDS``.
Axes counts failures per request (username and client address), so an ``authenticate()``
call without a request — a management command, ``Client.login`` in tests — has nothing to
count and is passed on to the next backend instead of being refused."""

from typing import Any

from axes.backends import AxesStandaloneBackend
from django.http import HttpRequest


class LockoutBackend(AxesStandaloneBackend):  # type: ignore[misc] # axes has no types
    def authenticate(self, request: HttpRequest | None, *args: Any, **kwargs: Any) -> None:
        """Refuse (raise) a locked-out sign-in; never signs anyone in itself."""
        if request is not None:
            super().authenticate(request, *args, **kwargs)
