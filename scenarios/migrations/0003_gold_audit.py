"""The gold audit's per-turn results (issue 13, ``manage.py audit_gold``)."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("scenarios", "0002_release_tool_contract")]

    operations = [
        migrations.CreateModel(
            name="GoldAudit",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "bounds",
                    models.CharField(
                        choices=[("strict", "Strict"), ("release", "Release")], default="strict", max_length=8
                    ),
                ),
                ("ran_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("calls", models.JSONField(blank=True, default=list)),
                ("findings", models.JSONField(blank=True, default=list)),
                ("n_calls", models.PositiveIntegerField(default=0, help_text="EHR calls re-executed")),
                ("n_reproduced", models.PositiveIntegerField(default=0)),
                ("n_differs", models.PositiveIntegerField(default=0)),
                ("n_leaks", models.PositiveIntegerField(default=0)),
                (
                    "n_not_reexecuted",
                    models.PositiveIntegerField(default=0, help_text="patient, write and control steps"),
                ),
                (
                    "n_untraced",
                    models.PositiveIntegerField(default=0, help_text="numbers traced to no observation or derivation"),
                ),
                (
                    "n_premises",
                    models.PositiveIntegerField(default=0, help_text="possible false premises of the request"),
                ),
                (
                    "turn",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="gold_audit",
                        to="scenarios.turn",
                    ),
                ),
            ],
            options={
                "ordering": ["turn"],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("bounds__in", ["strict", "release"])), name="goldaudit_bounds_valid"
                    )
                ],
            },
        ),
    ]
