from django.apps import AppConfig
from django.db.models.signals import post_migrate


class TitlesConfig(AppConfig):
    name = "titles"
    verbose_name = "Titles (大师)"

    def ready(self) -> None:
        from titles.services import rules_ensure_defaults

        # The default qualification rules are data (seeded, then edited in the admin).
        post_migrate.connect(
            rules_ensure_defaults, sender=self, dispatch_uid="titles.rules_ensure_defaults"
        )
