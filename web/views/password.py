"""Password reset by e-mail for staff (Django's views, the site's templates): a link valid
for ``PASSWORD_RESET_TIMEOUT`` goes to the address of an active staff account (staff,
superuser, organiser or reviewer); the page answers the same whether or not one matched."""

from collections.abc import Iterator
from typing import Any

from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import PasswordResetForm
from django.db.models import Q
from django.urls import reverse_lazy

from accounts.models import User
from accounts.roles import ORGANISER, REVIEWER


class StaffPasswordResetForm(PasswordResetForm):
    def get_users(self, email: str) -> Iterator[Any]:
        staff = Q(is_staff=True) | Q(is_superuser=True) | Q(groups__name__in=[ORGANISER, REVIEWER])
        allowed = set(User.objects.filter(staff).values_list("pk", flat=True))
        return (user for user in super().get_users(email) if user.pk in allowed)


reset = auth_views.PasswordResetView.as_view(
    form_class=StaffPasswordResetForm,
    template_name="web/signin/reset.html",
    email_template_name="web/signin/reset_email.txt",
    subject_template_name="web/signin/reset_subject.txt",
    success_url=reverse_lazy("web:password-reset-done"),
)
reset_done = auth_views.PasswordResetDoneView.as_view(template_name="web/signin/reset_done.html")
reset_confirm = auth_views.PasswordResetConfirmView.as_view(
    template_name="web/signin/reset_confirm.html",
    success_url=reverse_lazy("web:password-reset-complete"),
)
reset_complete = auth_views.PasswordResetCompleteView.as_view(
    template_name="web/signin/reset_complete.html"
)
