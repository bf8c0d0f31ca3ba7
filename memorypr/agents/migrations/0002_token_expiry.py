from datetime import timedelta

from django.db import migrations, models
from django.utils import timezone


def existing_tokens_expire(apps, schema_editor):
    # Tokens issued before expiry existed get the default lifetime from now, not eternity.
    from memorypr.agents.conf import conf

    AgentToken = apps.get_model("agents", "AgentToken")
    AgentToken.objects.filter(expires_at__isnull=True, revoked_at__isnull=True).update(
        expires_at=timezone.now() + timedelta(days=conf("MEMORYPR_TOKEN_TTL_DAYS"))
    )


class Migration(migrations.Migration):
    dependencies = [("agents", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="agenttoken",
            name="expires_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(existing_tokens_expire, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="agenttoken",
            constraint=models.CheckConstraint(
                condition=models.Q(("expires_at__isnull", True), ("expires_at__gt", models.F("created_at")), _connector="OR"),
                name="agent_token_expires_after_creation",
            ),
        ),
        migrations.AddConstraint(
            model_name="agenttoken",
            constraint=models.CheckConstraint(
                condition=models.Q(("revoked_at__isnull", True), ("revoked_at__gte", models.F("created_at")), _connector="OR"),
                name="agent_token_revoked_after_creation",
            ),
        ),
    ]
