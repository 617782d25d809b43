from django.urls import path  # noqa: F401

urlpatterns: list = []
