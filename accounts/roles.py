"""Roles are groups: organisers run events and ingest results, reviewers decide titles and
integrity cases, game servers only submit game records. Superusers hold every role."""

from typing import Any

from django.contrib.auth.models import AnonymousUser, Group, Permission
from django.core.exceptions import PermissionDenied

from accounts.models import User
from core.post_migrate import migrated

ORGANISER = "organiser"
REVIEWER = "reviewer"
GAME_SERVER = "game_server"

# Model permissions each role's group carries (app_label.codename), for the admin.
ROLE_PERMISSIONS: dict[str, tuple[str, ...]] = {
    ORGANISER: (
        "accounts.view_player",
        "accounts.change_player",
    ),
    REVIEWER: ("accounts.view_player",),
    GAME_SERVER: (),
}


def ensure_roles(**kwargs: Any) -> None:
    """Create the role groups and give them their permissions; safe to run repeatedly."""
    if not migrated(kwargs, "auth.Group", "auth.Permission"):
        return
    for role, perms in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        wanted: list[Permission] = []
        for perm in perms:
            app_label, codename = perm.split(".", 1)
            wanted.extend(
                Permission.objects.filter(content_type__app_label=app_label, codename=codename)
            )
        group.permissions.add(*wanted)


def has_role(user: User | AnonymousUser, role: str) -> bool:
    if not isinstance(user, User) or not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    cached: set[str] | None = getattr(user, "_role_names", None)
    if cached is None:
        cached = set(user.groups.values_list("name", flat=True))
        user._role_names = cached  # type: ignore[attr-defined]  # a per-instance cache, not a field
    return role in cached


def signed_in(user: User | AnonymousUser) -> User:
    """The signed-in user of a request the view's permission (or the admin site) already
    admitted; an anonymous one reaching here is refused (403)."""
    if isinstance(user, User):
        return user
    raise PermissionDenied
