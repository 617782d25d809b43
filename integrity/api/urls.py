"""Integrity API routes (reviewers only)."""

from django.urls import path

from integrity.api import views

urlpatterns = [
    path("integrity/cases/", views.CaseListView.as_view(), name="api-integrity-cases"),
    path("integrity/cases/<int:pk>/", views.CaseDetailView.as_view(), name="api-integrity-case"),
    path(
        "integrity/cases/<int:pk>/take/",
        views.CaseTakeView.as_view(),
        name="api-integrity-case-take",
    ),
    path(
        "integrity/cases/<int:pk>/dismiss/",
        views.CaseDismissView.as_view(),
        name="api-integrity-case-dismiss",
    ),
    path(
        "integrity/cases/<int:pk>/sanction/",
        views.CaseSanctionView.as_view(),
        name="api-integrity-case-sanction",
    ),
    path(
        "integrity/cases/<int:pk>/appeals/",
        views.AppealFileView.as_view(),
        name="api-integrity-appeal-file",
    ),
    path(
        "integrity/appeals/<int:pk>/decide/",
        views.AppealDecideView.as_view(),
        name="api-integrity-appeal-decide",
    ),
    path("integrity/runs/", views.AuditRunListView.as_view(), name="api-integrity-runs"),
    path(
        "integrity/runs/trigger/",
        views.AuditTriggerView.as_view(),
        name="api-integrity-run-trigger",
    ),
]
