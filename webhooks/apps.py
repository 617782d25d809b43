from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
