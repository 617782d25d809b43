from django.apps import AppConfig


class FlowsConfig(AppConfig):
    name = "flows"
    verbose_name = "Tour flows"

    def ready(self) -> None:
        # The title-change announcements' receiver (partner webhooks) connects on import.
        import flows.titles  # noqa: F401, PLC0415
