"""Ratings are derived data: read-only in the admin (``manage.py ratings_replay`` rebuilds
them)."""

from typing import TypeVar

from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest

from ratings.models import Rating, RatingState

M = TypeVar("M", bound=Model)


class ReadOnlyAdmin(admin.ModelAdmin[M]):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: M | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: M | None = None) -> bool:
        return False


@admin.register(Rating)
class RatingAdmin(ReadOnlyAdmin[Rating]):
    list_display = ("player", "ordinal", "mu", "sigma", "games", "provisional", "updated_at")
    list_filter = ("provisional",)
    search_fields = ("player__external_id", "player__name")
    ordering = ("-ordinal", "player")
    list_select_related = ("player",)


@admin.register(RatingState)
class RatingStateAdmin(ReadOnlyAdmin[RatingState]):
    list_display = (
        "games_rated",
        "late_games",
        "scanned_game_id",
        "rated_until_ended_at",
        "replayed_at",
        "updated_at",
    )
