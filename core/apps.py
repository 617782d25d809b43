from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Core"

    def ready(self) -> None:
        from axes.signals import user_locked_out
        from django.contrib.auth.signals import user_login_failed

        from core import jobs
        from core.authlog import on_locked_out, on_login_failed

        user_login_failed.connect(on_login_failed, dispatch_uid="core.authlog.login_failed")
        user_locked_out.connect(on_locked_out, dispatch_uid="core.authlog.locked_out")
        jobs.connect()
