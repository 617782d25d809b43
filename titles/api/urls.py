"""Title API routes (SPEC §9 paths: ``/api/players/{id}/titles/``, ``/api/titles/registry/``,
the credentials ``/api/titles/terms/{code}/credential/`` and ``/api/titles/status/{list}/``)."""

from django.urls import path

from titles.api import credentials, public, review

urlpatterns = [
    path(
        "players/<str:player_id>/titles/",
        public.PlayerTitlesView.as_view(),
        name="api-player-titles",
    ),
    path("titles/registry/", public.RegistryView.as_view(), name="api-titles-registry"),
    path("titles/verify/<str:code>/", public.VerifyView.as_view(), name="api-titles-verify"),
    path(
        "titles/terms/<str:code>/credential/",
        credentials.TermCredentialView.as_view(),
        name="api-titles-term-credential",
    ),
    path(
        "titles/status/<str:list>/",
        credentials.StatusListView.as_view(),
        name="api-titles-status-list",
    ),
    path("titles/queue/", review.QueueView.as_view(), name="api-titles-queue"),
    path(
        "titles/qualifications/",
        review.QualificationEnterView.as_view(),
        name="api-titles-qualification-enter",
    ),
    path(
        "titles/qualifications/bulk-approve/",
        review.BulkApproveView.as_view(),
        name="api-titles-bulk-approve",
    ),
    path(
        "titles/qualifications/<int:pk>/approve/",
        review.ApproveView.as_view(),
        name="api-titles-approve",
    ),
    path(
        "titles/qualifications/<int:pk>/reject/",
        review.RejectView.as_view(),
        name="api-titles-reject",
    ),
    path(
        "titles/international-masters/",
        review.InternationalMasterEnterView.as_view(),
        name="api-titles-international-master-enter",
    ),
    path(
        "titles/world-cup/representatives/",
        review.WorldCupRepresentativeEnterView.as_view(),
        name="api-titles-world-cup-representative-enter",
    ),
]
