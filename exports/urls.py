"""Downloads under ``/exports/``: ``<what>.csv`` or ``<what>.json``."""

from django.urls import path

from exports import views

app_name = "exports"

urlpatterns = [
    path("events/<str:code>/leaderboard.<str:fmt>", views.leaderboard, name="leaderboard"),
    path("seasons/<int:year>/champions.<str:fmt>", views.champions, name="champions"),
    path("masters.<str:fmt>", views.masters, name="masters"),
    path("snapshots/", views.snapshots, name="snapshots"),
    path("snapshots/<str:month>.<str:fmt>", views.snapshot, name="snapshot"),
]
