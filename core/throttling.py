"""Throttling of writes: every POST, PUT, PATCH and DELETE to the API counts against one
budget per signed-in user (per client address for anonymous requests); reads are never
throttled here. The rate is ``API_WRITE_RATE`` (``"600/min"`` unless the environment says
otherwise), read on every request so a deployment or a test can change it. Over the budget
the API answers 429 with ``Retry-After``."""

from typing import Any

from django.conf import settings
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle


class WriteRateThrottle(SimpleRateThrottle):
    scope = "writes"

    def get_rate(self) -> str:
        return str(settings.API_WRITE_RATE)

    def allow_request(self, request: Request, view: Any) -> bool:
        if request.method in SAFE_METHODS:
            return True
        return super().allow_request(request, view)

    def get_cache_key(self, request: Request, view: Any) -> str:
        user = request.user
        ident = f"user:{user.pk}" if user.is_authenticated else f"ip:{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}
