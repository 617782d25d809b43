from django.urls import path

from accounts.api import jobs, views

urlpatterns = [
    path("me/", views.MeView.as_view(), name="api-me"),
    path("jobs/<uuid:pk>/", jobs.JobView.as_view(), name="api-job"),
]
