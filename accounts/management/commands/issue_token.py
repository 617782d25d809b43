"""Issue an API token for a user (created if missing) with an optional role."""

from typing import Any

from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.models import ApiToken, User
from accounts.roles import ROLE_PERMISSIONS


class Command(BaseCommand):
    help = "Issue a hashed, expiring API token; prints the raw token once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--role", choices=sorted(ROLE_PERMISSIONS))
        parser.add_argument("--name", default="cli")
        parser.add_argument("--days", type=int, default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        user, created = User.objects.get_or_create(username=options["username"])
        if created:
            user.set_unusable_password()
            user.save()
        if options["role"]:
            try:
                user.groups.add(Group.objects.get(name=options["role"]))
            except Group.DoesNotExist as exc:
                raise CommandError("Roles are missing: run migrate first.") from exc
        _, raw = ApiToken.issue(user=user, name=options["name"], days=options["days"])
        self.stdout.write(raw)
