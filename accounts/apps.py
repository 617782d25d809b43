from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts and players"

    def ready(self) -> None:
        from accounts.roles import ensure_roles

        # Groups need the permissions, which Django creates after migrating.
        post_migrate.connect(ensure_roles, dispatch_uid="accounts.ensure_roles")
