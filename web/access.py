"""Who may open a staff page (SPEC §1): a page of one role admits a signed-in user holding it
(superusers hold every role) and, if the person needs one, whose session confirmed a second
factor (accounts.second_factor); anyone else signed in gets 403, anonymous visitors and
sessions without the second factor the sign-in page (``settings.LOGIN_URL``) with ``?next=``
back to where they were going."""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from accounts.roles import has_role
from accounts.second_factor import otp_satisfied

View = Callable[..., HttpResponse]


def role_required(role: str) -> Callable[[View], View]:
    """Decorate a page view so that only holders of ``role`` reach it."""

    def decorate(view: View) -> View:
        @login_required
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not has_role(request.user, role):
                raise PermissionDenied
            if not otp_satisfied(request.user):
                return redirect_to_login(request.get_full_path())
            return view(request, *args, **kwargs)

        return wrapped

    return decorate
