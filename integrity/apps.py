from django.apps import AppConfig


class IntegrityConfig(AppConfig):
    name = "integrity"
