"""Who needs a second factor (django-otp, TOTP): reviewers and superusers must confirm a
one-time code from their authenticator after their password; organisers and other staff
sign in with the password alone."""

from django.contrib.auth.models import AnonymousUser
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.models import User
from accounts.roles import REVIEWER, has_role


def needs_otp(user: User | AnonymousUser) -> bool:
    return isinstance(user, User) and (user.is_superuser or has_role(user, REVIEWER))


def otp_satisfied(user: User | AnonymousUser) -> bool:
    """True unless the user needs a second factor and this request's session has not
    confirmed one (``OTPMiddleware`` gives the user ``is_verified``)."""
    if not needs_otp(user):
        return True
    is_verified = getattr(user, "is_verified", None)
    return bool(is_verified and is_verified())


def confirmed_device(user: User) -> TOTPDevice | None:
    return TOTPDevice.objects.devices_for_user(user, confirmed=True).first()
