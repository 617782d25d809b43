"""The admin site for staff: signing in happens on the site's sign-in page (web.views.signin),
which counts failures (django-axes) and asks reviewers and superusers for their second factor;
the admin admits only sessions that satisfied it (accounts.second_factor)."""

from urllib.parse import urlencode

from django.contrib import admin
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse

from accounts.second_factor import otp_satisfied


class StaffAdminSite(admin.AdminSite):
    def has_permission(self, request: HttpRequest) -> bool:
        return super().has_permission(request) and otp_satisfied(request.user)

    def login(self, request: HttpRequest, extra_context: object = None) -> HttpResponse:
        """Send the visitor to the site's sign-in, back to the admin afterwards."""
        target = request.GET.get("next") or reverse("admin:index", current_app=self.name)
        return HttpResponseRedirect(f"{reverse('web:signin')}?{urlencode({'next': target})}")
