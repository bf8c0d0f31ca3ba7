"""Only the indexes the audit queries use.

Every audited write inserts a row into each index of the table while it holds the chain lock
that every other audited write waits for; a merge writes six or seven events. Namespace and
event type are only matched exactly, so their pattern-ops twins served nothing, and the actor
is only searched by a substring (`icontains`), which no B-tree serves: four fewer index
inserts per event. The two kept indexes are renamed, not rebuilt, so a large table is not
locked while an index is built again.
"""

from django.db import migrations, models

_DROP = [
    "audit_auditevent_actor_e66b28ac",
    "audit_auditevent_actor_e66b28ac_like",
    "audit_auditevent_event_type_f13571f1_like",
    "audit_auditevent_namespace_4ee01a5c_like",
]
_RENAME = [
    ("audit_auditevent_namespace_4ee01a5c", "audit_event_namespace"),
    ("audit_auditevent_event_type_f13571f1", "audit_event_type"),
]
_RECREATE = [
    'CREATE INDEX IF NOT EXISTS "audit_auditevent_actor_e66b28ac" ON "audit_auditevent" ("actor")',
    'CREATE INDEX IF NOT EXISTS "audit_auditevent_actor_e66b28ac_like"'
    ' ON "audit_auditevent" ("actor" varchar_pattern_ops)',
    'CREATE INDEX IF NOT EXISTS "audit_auditevent_event_type_f13571f1_like"'
    ' ON "audit_auditevent" ("event_type" varchar_pattern_ops)',
    'CREATE INDEX IF NOT EXISTS "audit_auditevent_namespace_4ee01a5c_like"'
    ' ON "audit_auditevent" ("namespace" varchar_pattern_ops)',
]

FORWARD = [f'DROP INDEX IF EXISTS "{name}"' for name in _DROP] + [
    f'ALTER INDEX IF EXISTS "{old}" RENAME TO "{new}"' for old, new in _RENAME
]
BACKWARD = [f'ALTER INDEX IF EXISTS "{new}" RENAME TO "{old}"' for old, new in _RENAME] + _RECREATE


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0005_chain_extend"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(sql=FORWARD, reverse_sql=BACKWARD)],
            state_operations=[
                migrations.AlterField(
                    model_name="auditevent", name="actor", field=models.CharField(max_length=200)
                ),
                migrations.AlterField(
                    model_name="auditevent", name="event_type", field=models.CharField(max_length=64)
                ),
                migrations.AlterField(
                    model_name="auditevent",
                    name="namespace",
                    field=models.CharField(blank=True, max_length=100),
                ),
                migrations.AddIndex(
                    model_name="auditevent",
                    index=models.Index(fields=["namespace"], name="audit_event_namespace"),
                ),
                migrations.AddIndex(
                    model_name="auditevent",
                    index=models.Index(fields=["event_type"], name="audit_event_type"),
                ),
            ],
        ),
    ]
