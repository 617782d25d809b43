from django.urls import path

from accounts.api import views

urlpatterns = [
    path("me/", views.MeView.as_view(), name="api-me"),
]
