"""Title API routes (SPEC §9 paths: ``/api/players/{id}/titles/``, ``/api/titles/registry/``)."""

from django.urls import path

from titles.api import views

urlpatterns = [
    path(
        "players/<str:player_id>/titles/",
        views.PlayerTitlesView.as_view(),
        name="api-player-titles",
    ),
    path("titles/registry/", views.RegistryView.as_view(), name="api-titles-registry"),
    path("titles/verify/<str:code>/", views.VerifyView.as_view(), name="api-titles-verify"),
    path("titles/queue/", views.QueueView.as_view(), name="api-titles-queue"),
    path(
        "titles/qualifications/",
        views.QualificationEnterView.as_view(),
        name="api-titles-qualification-enter",
    ),
    path(
        "titles/qualifications/bulk-approve/",
        views.BulkApproveView.as_view(),
        name="api-titles-bulk-approve",
    ),
    path(
        "titles/qualifications/<int:pk>/approve/",
        views.ApproveView.as_view(),
        name="api-titles-approve",
    ),
    path(
        "titles/qualifications/<int:pk>/reject/",
        views.RejectView.as_view(),
        name="api-titles-reject",
    ),
    path(
        "titles/international-masters/",
        views.InternationalMasterEnterView.as_view(),
        name="api-titles-international-master-enter",
    ),
    path(
        "titles/world-cup/representatives/",
        views.WorldCupRepresentativeEnterView.as_view(),
        name="api-titles-world-cup-representative-enter",
    ),
]
