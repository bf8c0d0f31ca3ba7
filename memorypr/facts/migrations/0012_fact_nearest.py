"""`fact_nearest()`: the walk of the HNSW index for a large subject, planned once per connection.

Retrieval collects its candidates (vector, full text, exact keys, the scoring columns) in one
statement. While the walk of the HNSW index was part of it, that statement could not be
prepared: a plan made for any subject's values might sort the subject's rows through its btree
index instead of walking the graph, ruinous for a subject of 100k facts. So it was parsed and
planned at every retrieval, which cost the server 1.5-2.3 ms of the 4-5.5 ms it spent on a
typical retrieval at 100k facts in one subject.

Here the walk has a plan that cannot depend on the values: no btree can serve its conditions
(`+ 0`, `|| ''`, as in `fact_text_matches`), and with sequential scans and sorts disabled the
index that returns rows in distance order (the HNSW index of active versions) is the only path
left. So the function keeps one generic plan per connection, and the statement around it has
no plan choice left that depends on its values: it can be prepared too.

SECURITY INVOKER, on the caller's search path (where the caller finds pgvector's operators):
the caller's row-level security policies apply to the rows walked, as they did to the statement
before. The HNSW settings (hnsw.ef_search, hnsw.iterative_scan,
hnsw.max_scan_tuples) are the caller's: they are read when the walk runs, not when it is planned.
"""

from django.db import migrations

SIGNATURE = "fact_nearest(bigint, varchar, vector, timestamptz, varchar[], integer)"

FORWARD = """
CREATE FUNCTION fact_nearest(
    p_namespace_id bigint, p_subject varchar, p_query vector, p_at timestamptz,
    p_categories varchar[], p_limit integer
)
    RETURNS TABLE (id bigint, distance double precision)
    LANGUAGE sql STABLE ROWS 50
    SET plan_cache_mode = force_generic_plan
    SET enable_seqscan = off
    SET enable_sort = off
    AS $$
        SELECT f.id, f.embedding <=> p_query FROM facts_factversion f
        WHERE f.namespace_id + 0 = p_namespace_id AND f.subject || '' = p_subject
          AND f.status = 'active' AND f.embedding IS NOT NULL
          AND (f.valid_from IS NULL OR f.valid_from <= p_at)
          AND (f.valid_to IS NULL OR f.valid_to > p_at)
          AND (p_categories IS NULL OR f.category = ANY (p_categories))
        ORDER BY f.embedding <=> p_query
        LIMIT p_limit
    $$;
"""


class Migration(migrations.Migration):
    dependencies = [("facts", "0011_embedding_kept_in_the_row")]
    operations = [migrations.RunSQL(FORWARD, f"DROP FUNCTION IF EXISTS {SIGNATURE}")]
