from django.apps import AppConfig


class FlowsConfig(AppConfig):
    name = "flows"
    verbose_name = "Tour flows"

    def ready(self) -> None:
        # The receivers connect on import: title-change announcements (partner webhooks and
        # players' notices), and webhook attempts (the notices' delivery state).
        import flows.notices  # noqa: F401, PLC0415
        import flows.titles  # noqa: F401, PLC0415
