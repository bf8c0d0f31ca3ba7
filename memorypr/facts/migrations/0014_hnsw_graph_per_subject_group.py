"""One HNSW graph per group of subjects instead of one for the whole store.

The graph held every tenant's active versions, and a walk for one subject filters the rows it
meets: it passes over every other subject's rows near the query before it has its own nearest
50. Measured on a store of 220k versions (four namespaces): a subject of 8,000 active facts
walked 8-12 ms (p50) for its nearest 50, and one of 80,000 walked 26-35 ms for a question about
something it held no active fact on, because other tenants held thousands near the query.

Now the active versions are split over 16 graphs, a partial index each, by a hash of
(namespace, subject): a walk passes over the rows of its own group only. The same store, the
same queries: 1.7-2.0 ms (p50) for the subject of 8,000, and at most 4-9 ms for the other,
with the same top 10 (98.9% overlap). The group expression is written identically in the
indexes and in `fact_nearest()`, now PL/pgSQL with one walk per group: the planner proves from
a walk's conditions that its group's index holds every row it asks for, and the function runs
the walk of the subject's group only. Each walk keeps its plan for the session, as the SQL
function's one statement did (PL/pgSQL caches statement plans on every supported PostgreSQL).

Built with the configured m and ef_construction (as migrations 0003, 0004 and
`reembed --reindex`), in the migration's transaction: writes to the fact store wait while the
graphs are built (about 40 s for 176k active versions on two cores).
"""

from importlib import import_module

from django.conf import settings
from django.db import migrations

GROUPS = 16
DEFAULT_M, DEFAULT_EF_CONSTRUCTION = 16, 64
SIGNATURE = "fact_nearest(bigint, varchar, vector, timestamptz, varchar[], integer)"


def _group(namespace: str, subject: str) -> str:
    return f"(hashtextextended({subject}, {namespace}) & {GROUPS - 1})"


def _parameters() -> tuple[int, int]:
    m = int(getattr(settings, "MEMORYPR_HNSW_M", DEFAULT_M))
    ef_construction = int(getattr(settings, "MEMORYPR_HNSW_EF_CONSTRUCTION", DEFAULT_EF_CONSTRUCTION))
    return m, ef_construction


def _walk(group: int) -> str:
    return f"""RETURN QUERY SELECT f.id, f.embedding <=> p_query FROM facts_factversion f
            WHERE {_group("f.namespace_id", "f.subject")} = {group}
              AND f.namespace_id + 0 = p_namespace_id AND f.subject || '' = p_subject
              AND f.status = 'active' AND f.embedding IS NOT NULL
              AND (f.valid_from IS NULL OR f.valid_from <= p_at)
              AND (f.valid_to IS NULL OR f.valid_to > p_at)
              AND (p_categories IS NULL OR f.category = ANY (p_categories))
            ORDER BY f.embedding <=> p_query
            LIMIT p_limit;"""


# PL/pgSQL keeps each statement's plan for the session (a generic one here) on every supported
# PostgreSQL, and plans a group's walk only when a subject of that group is first searched.
NEAREST = f"""
DROP FUNCTION IF EXISTS {SIGNATURE};
CREATE FUNCTION fact_nearest(
    p_namespace_id bigint, p_subject varchar, p_query vector, p_at timestamptz,
    p_categories varchar[], p_limit integer
)
    RETURNS TABLE (id bigint, distance double precision)
    LANGUAGE plpgsql STABLE ROWS 50
    SET plan_cache_mode = force_generic_plan
    SET enable_seqscan = off
    SET enable_sort = off
    AS $$
    DECLARE
        graph integer := {_group("p_namespace_id", "p_subject")};
    BEGIN
        {chr(10).join(f"{'IF' if group == 0 else 'ELSIF'} graph = {group} THEN {_walk(group)}" for group in range(GROUPS))}
        END IF;
    END
    $$;
"""


def graphs_per_group(apps, schema_editor):
    m, ef_construction = _parameters()
    schema_editor.execute("DROP INDEX IF EXISTS fact_embedding_hnsw")
    for group in range(GROUPS):
        schema_editor.execute(f"DROP INDEX IF EXISTS fact_embedding_hnsw_{group}")
        schema_editor.execute(
            f"CREATE INDEX fact_embedding_hnsw_{group} ON facts_factversion USING hnsw (embedding vector_cosine_ops)"
            f" WITH (m = {m}, ef_construction = {ef_construction})"
            f" WHERE status = 'active' AND {_group('namespace_id', 'subject')} = {group}"
        )
    schema_editor.execute(NEAREST)


def one_graph(apps, schema_editor):
    m, ef_construction = _parameters()
    for group in range(GROUPS):
        schema_editor.execute(f"DROP INDEX IF EXISTS fact_embedding_hnsw_{group}")
    schema_editor.execute(
        "CREATE INDEX fact_embedding_hnsw ON facts_factversion USING hnsw (embedding vector_cosine_ops)"
        f" WITH (m = {m}, ef_construction = {ef_construction}) WHERE status = 'active'"
    )
    nearest = import_module("memorypr.facts.migrations.0012_fact_nearest")
    schema_editor.execute(f"DROP FUNCTION IF EXISTS {SIGNATURE}")
    schema_editor.execute(nearest.FORWARD)


class Migration(migrations.Migration):
    dependencies = [("facts", "0013_text_index_without_pending_list")]
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(graphs_per_group, one_graph)],
            state_operations=[
                migrations.RemoveIndex(model_name="factversion", name="fact_embedding_hnsw"),
            ],
        ),
    ]
