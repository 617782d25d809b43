"""Roles are groups: organisers run events and ingest results, reviewers decide titles and
integrity cases, game servers only submit game records. Superusers hold every role."""

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group, Permission

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
    for role, perms in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        wanted = []
        for perm in perms:
            app_label, codename = perm.split(".", 1)
            wanted.extend(
                Permission.objects.filter(content_type__app_label=app_label, codename=codename)
            )
        group.permissions.add(*wanted)


def has_role(user: AbstractBaseUser | AnonymousUser, role: str) -> bool:
    if not user.is_authenticated:
        return False
    if getattr(user, "is_superuser", False):
        return True
    cached = getattr(user, "_role_names", None)
    if cached is None:
        cached = set(user.groups.values_list("name", flat=True))  # type: ignore[union-attr]
        user._role_names = cached  # type: ignore[union-attr]
    return role in cached
