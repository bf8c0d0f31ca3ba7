"""The HNSW index holds active versions only (see FactVersion.Meta.indexes).

Rebuilt with the configured m and ef_construction, as migration 0003 and `reembed --reindex` do.
"""

from django.conf import settings
from django.db import migrations, models
from pgvector.django import HnswIndex

DEFAULT_M, DEFAULT_EF_CONSTRUCTION = 16, 64


def _rebuild(schema_editor, *, where: str) -> None:
    m = int(getattr(settings, "MEMORYPR_HNSW_M", DEFAULT_M))
    ef_construction = int(getattr(settings, "MEMORYPR_HNSW_EF_CONSTRUCTION", DEFAULT_EF_CONSTRUCTION))
    schema_editor.execute("DROP INDEX IF EXISTS fact_embedding_hnsw")
    schema_editor.execute(
        "CREATE INDEX fact_embedding_hnsw ON facts_factversion USING hnsw (embedding vector_cosine_ops) "
        f"WITH (m = {m}, ef_construction = {ef_construction}){where}"
    )


def active_only(apps, schema_editor):
    _rebuild(schema_editor, where=" WHERE status = 'active'")


def every_version(apps, schema_editor):
    _rebuild(schema_editor, where="")


class Migration(migrations.Migration):
    dependencies = [("facts", "0003_history_guard_hnsw_params")]
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(active_only, every_version)],
            state_operations=[
                migrations.RemoveIndex(model_name="factversion", name="fact_embedding_hnsw"),
                migrations.AddIndex(
                    model_name="factversion",
                    index=HnswIndex(
                        condition=models.Q(status="active"),
                        ef_construction=64,
                        fields=["embedding"],
                        m=16,
                        name="fact_embedding_hnsw",
                        opclasses=["vector_cosine_ops"],
                    ),
                ),
            ],
        )
    ]
