"""`fact_nearest()` returns what retrieval reads of the rows it walked: key, text and scoring columns.

The walk reads each row it returns (its filters are on the row), and retrieval then read the
same fifty rows twice more by id: the any-word text phase for their documents, and the scoring
columns (confidence, importance, last touched) of every candidate. Now the walk hands them over
with the distance, and only the text and key channels' other rows are read again. At 100k facts
in one subject, with each query new to the server, the retrieval statement took 5.92 ms instead
of 6.04 (p50 of 200 queries each, alternated), with the same candidates for all 400.

The walk itself is unchanged (migration 0014): one per graph group, planned once per
connection; only its select list is longer.
"""

from importlib import import_module

from django.db import migrations

_before = import_module("memorypr.facts.migrations.0014_hnsw_graph_per_subject_group")
GROUPS = _before.GROUPS

COLUMNS = """id bigint, distance double precision, key varchar, search_vector tsvector,
                   confidence double precision, importance double precision, last_touched timestamptz"""
_SELECT_BEFORE = "RETURN QUERY SELECT f.id, f.embedding <=> p_query FROM facts_factversion f"
_SELECT = (
    "RETURN QUERY SELECT f.id, f.embedding <=> p_query, f.key, f.search_vector, f.confidence,"
    " f.importance, coalesce(f.last_accessed_at, f.created_at) FROM facts_factversion f"
)
if _before.NEAREST.count(_SELECT_BEFORE) != GROUPS:
    raise RuntimeError("migration 0014's fact_nearest() does not hold the walks this migration widens")

NEAREST = _before.NEAREST.replace(_SELECT_BEFORE, _SELECT).replace(
    "RETURNS TABLE (id bigint, distance double precision)", f"RETURNS TABLE ({COLUMNS})"
)


class Migration(migrations.Migration):
    dependencies = [("facts", "0015_text_index_words_scoped_to_subject")]
    # Each direction drops the other's function first (0014's NEAREST begins with the DROP).
    operations = [migrations.RunSQL(NEAREST, _before.NEAREST)]
