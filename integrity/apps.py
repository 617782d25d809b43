from django.apps import AppConfig


class IntegrityConfig(AppConfig):
    name = "integrity"
    verbose_name = "Integrity (audits and cases)"
