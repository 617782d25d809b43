"""``Authorization: Token <raw>`` authentication against hashed, expiring ApiTokens, and the
browser's session once its second factor is satisfied."""

from datetime import timedelta
from typing import Any

from django.utils import timezone
from drf_spectacular.authentication import SessionScheme
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from accounts.models import ApiToken
from accounts.second_factor import otp_satisfied


class ApiTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Token"

    def authenticate(self, request: Request) -> tuple[Any, ApiToken] | None:
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Token header must be 'Token <token>'.")
        token = ApiToken.find(header[1].decode(errors="replace"))
        if token is None:
            raise exceptions.AuthenticationFailed("Unknown token.")
        if token.revoked_at is not None:
            raise exceptions.AuthenticationFailed("Token revoked.")
        now = timezone.now()
        if token.expires_at <= now:
            raise exceptions.AuthenticationFailed("Token expired.")
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive.")
        if token.last_used_at is None or now - token.last_used_at > timedelta(minutes=5):
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


class ApiTokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "accounts.authentication.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Token <token>`; tokens are issued by `manage.py issue_token`.",
        }


class VerifiedSessionAuthentication(authentication.SessionAuthentication):
    """The browser's session, admitted only once it satisfied the second factor of a person
    who needs one (accounts.second_factor); otherwise the request is anonymous."""

    def authenticate(self, request: Request) -> tuple[Any, None] | None:
        result: tuple[Any, None] | None = super().authenticate(request)
        if result is not None and not otp_satisfied(request._request.user):
            return None
        return result


class VerifiedSessionScheme(SessionScheme):  # type: ignore[no-untyped-call] # untyped base
    """The schema's ``cookieAuth`` for the session authentication above."""

    target_class = "accounts.authentication.VerifiedSessionAuthentication"
