"""API permission classes by role (accounts.roles)."""

from typing import Any

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from accounts.roles import GAME_SERVER, ORGANISER, REVIEWER, has_role


class IsOrganiser(BasePermission):
    message = "Organisers only."

    def has_permission(self, request: Request, view: Any) -> bool:
        return has_role(request.user, ORGANISER)


class IsReviewer(BasePermission):
    message = "Title reviewers only."

    def has_permission(self, request: Request, view: Any) -> bool:
        return has_role(request.user, REVIEWER)


class CanIngestGames(BasePermission):
    message = "Organisers and game-server tokens only."

    def has_permission(self, request: Request, view: Any) -> bool:
        return has_role(request.user, ORGANISER) or has_role(request.user, GAME_SERVER)
