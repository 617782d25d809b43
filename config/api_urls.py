"""The REST API (SPEC §9 paths), one include per app."""

from django.urls import include, path

urlpatterns = [
    path("", include("accounts.api.urls")),
    path("", include("tournaments.api.urls")),
    path("", include("titles.api.urls")),
    path("", include("integrity.api.urls")),
]
