from django.apps import AppConfig


class FlowsConfig(AppConfig):
    name = "flows"
    verbose_name = "Tour flows"
