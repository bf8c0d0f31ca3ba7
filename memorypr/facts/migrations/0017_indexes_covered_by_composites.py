"""Drop the single-column indexes that a composite index already leads with.

A merge inserts into every index of the versions and the edges: `fact_ns_subject_key` and
the other version indexes start with the namespace, `fact_edge_unique` with the source and
`fact_edge_target_type` with the target, so the foreign keys' own indexes served no query and
cost an insert each. Only the indexes go; the foreign key constraints stay as they are (not
dropped and validated again over the whole table, as altering the fields would do).
"""

import django.db.models.deletion
from django.db import migrations, models

_INDEXES = {
    "facts_factversion_namespace_id_b13a8c4c": ("facts_factversion", "namespace_id"),
    "facts_factedge_source_id_66205669": ("facts_factedge", "source_id"),
    "facts_factedge_target_id_7515a7fc": ("facts_factedge", "target_id"),
}
FORWARD = [f'DROP INDEX IF EXISTS "{name}"' for name in _INDEXES]
BACKWARD = [
    f'CREATE INDEX IF NOT EXISTS "{name}" ON "{table}" ("{column}")' for name, (table, column) in _INDEXES.items()
]


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0001_initial"),
        ("facts", "0016_fact_nearest_scoring_columns"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(sql=FORWARD, reverse_sql=BACKWARD)],
            state_operations=[
                migrations.AlterField(
                    model_name="factedge",
                    name="source",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="out_edges",
                        to="facts.factversion",
                    ),
                ),
                migrations.AlterField(
                    model_name="factedge",
                    name="target",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="in_edges",
                        to="facts.factversion",
                    ),
                ),
                migrations.AlterField(
                    model_name="factversion",
                    name="namespace",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="facts",
                        to="agents.namespace",
                    ),
                ),
            ],
        ),
    ]
