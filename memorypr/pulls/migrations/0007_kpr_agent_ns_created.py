from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    # Built concurrently: a live table keeps taking submissions while the index builds.
    atomic = False

    dependencies = [
        ("pulls", "0006_operation_ordering_by_key"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="knowledgepullrequest",
            index=models.Index(fields=["agent", "namespace", "created_at"], name="kpr_agent_ns_created"),
        ),
    ]
