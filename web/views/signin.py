"""Staff sign-in (issue 24, 26): the password on the site's own page (django-axes counts the
failures), then, for reviewers and superusers, a TOTP code (accounts.second_factor). Until
the code is confirmed nobody is signed in: the session only remembers who passed the
password, for ``PENDING_SECONDS``. Someone with no authenticator yet enrols one on the way in
(docs/decisions.md). Signed in, a person lands on ``next`` when it is safe, else by role
(:func:`landing_url`)."""

import time
from base64 import b32encode
from typing import Any

import segno
from django import forms
from django.contrib.auth import login
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext_lazy as _
from django_otp import login as otp_login
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.models import User
from accounts.roles import ORGANISER, REVIEWER, has_role
from accounts.second_factor import confirmed_device, needs_otp

PENDING_KEY = "signin_pending"
PENDING_SECONDS = 300


def landing_url(user: User, requested: str | None) -> str:
    """Where a person lands after signing in: the page they asked for, else an organiser's
    console, a reviewer's queue, or the home page."""
    if requested:
        return requested
    if has_role(user, ORGANISER):
        return reverse("web:manage")
    if has_role(user, REVIEWER):
        return reverse("web:review")
    return reverse("web:home")


def _safe_next(request: HttpRequest, value: str | None) -> str | None:
    if value and url_has_allowed_host_and_scheme(
        value, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return value
    return None


class SignInView(LoginView):
    template_name = "web/signin/signin.html"

    def form_valid(self, form: Any) -> HttpResponse:
        user: User = form.get_user()
        requested = _safe_next(self.request, self.get_redirect_url())
        if not needs_otp(user):
            login(self.request, user)
            return HttpResponseRedirect(landing_url(user, requested))
        self.request.session[PENDING_KEY] = {
            "user": user.pk,
            "backend": user.backend,  # type: ignore[attr-defined]  # set by authenticate()
            "next": requested,
            "until": time.time() + PENDING_SECONDS,
        }
        step = "web:signin-verify" if confirmed_device(user) else "web:signin-enrol"
        return redirect(step)


class TokenForm(forms.Form):
    token = forms.RegexField(
        label=_("验证码"),
        regex=r"^\d{6}$",
        error_messages={"invalid": _("验证码是 6 位数字。")},
        widget=forms.TextInput(
            attrs={"autocomplete": "one-time-code", "inputmode": "numeric", "maxlength": "6"}
        ),
    )


def _pending(request: HttpRequest) -> tuple[User, dict[str, Any]] | None:
    data = request.session.get(PENDING_KEY)
    if not data or data["until"] < time.time():
        return None
    user = User.objects.filter(pk=data["user"], is_active=True).first()
    return (user, data) if user else None


def _finish(
    request: HttpRequest, user: User, data: dict[str, Any], device: TOTPDevice
) -> HttpResponse:
    request.session.pop(PENDING_KEY, None)
    login(request, user, backend=data["backend"])
    otp_login(request, device)
    return HttpResponseRedirect(landing_url(user, data["next"]))


def _token_refused(form: TokenForm) -> None:
    form.add_error("token", _("验证码不正确或已过期，请输入验证器上最新的验证码。"))


def verify(request: HttpRequest) -> HttpResponse:
    """The second step: a TOTP code from the person's confirmed device."""
    pending = _pending(request)
    if pending is None:
        return redirect("web:signin")
    user, data = pending
    device = confirmed_device(user)
    if device is None:
        return redirect("web:signin-enrol")
    form = TokenForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        if device.verify_token(form.cleaned_data["token"]):
            return _finish(request, user, data, device)
        _token_refused(form)
    return render(request, "web/signin/verify.html", {"form": form, "person": user})


def enrol(request: HttpRequest) -> HttpResponse:
    """First sign-in of someone who needs a second factor: scan the QR code into an
    authenticator app, confirm with its first code."""
    pending = _pending(request)
    if pending is None:
        return redirect("web:signin")
    user, data = pending
    if confirmed_device(user):
        return redirect("web:signin-verify")
    device = TOTPDevice.objects.filter(user=user, confirmed=False).first()
    if device is None:
        device = TOTPDevice.objects.create(user=user, confirmed=False, name="authenticator")
    form = TokenForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        if device.verify_token(form.cleaned_data["token"]):
            device.confirmed = True
            device.save(update_fields=["confirmed"])
            return _finish(request, user, data, device)
        _token_refused(form)
    qr = segno.make(device.config_url, error="m").svg_inline(scale=5, title=str(_("验证器二维码")))
    secret = b32encode(device.bin_key).decode()
    context = {"form": form, "person": user, "qr": qr, "secret": secret}
    return render(request, "web/signin/enrol.html", context)
