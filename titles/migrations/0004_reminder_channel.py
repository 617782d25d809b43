"""A reminder records its channel; one recorded without an address was never delivered."""

import django.utils.timezone
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def undelivered_have_no_channel(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    notification = apps.get_model("titles", "Notification")
    notification.objects.filter(email="").update(channel="none", sent_at=None)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("titles", "0003_qualification_checks"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="notification",
            options={"ordering": ["-id"]},
        ),
        migrations.AddField(
            model_name="notification",
            name="channel",
            field=models.CharField(
                choices=[("email", "e-mail"), ("none", "no channel")], default="email", max_length=8
            ),
        ),
        migrations.AlterField(
            model_name="notification",
            name="sent_at",
            field=models.DateTimeField(blank=True, default=django.utils.timezone.now, null=True),
        ),
        migrations.RunPython(undelivered_have_no_channel, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="notification",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("channel", "none"), ("sent_at__isnull", True)),
                    models.Q(
                        models.Q(("channel", "none"), _negated=True), ("sent_at__isnull", False)
                    ),
                    _connector="OR",
                ),
                name="reminder_sent_when_delivered",
            ),
        ),
    ]
