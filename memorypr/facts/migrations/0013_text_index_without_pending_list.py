"""The scoped text index takes each new fact into its tree at once: no pending list to read.

A GIN index's default (`fastupdate`) lets an insert append its entries to a pending list that
is merged into the tree later (by VACUUM, or by the insert that passes gin_pending_list_limit,
4 MB). Until then every search reads the whole pending list, whatever it asks. The fact store
is read on every retrieval and written by merges in the background: after 8,280 facts merged
into a store of 220k, the list held 346 pages, and a retrieval at 100k facts in one subject
took a p50 of 16.6 ms instead of 6.5 ms (the text match alone 5.3 ms instead of 1.4 ms), until
autovacuum came round, which for an insert-only table is after 20% of it has been inserted.

Without the pending list a merge writes each new version's words into the tree itself: a few
dozen index entries per fact, small beside its row and its HNSW graph entry. The list that
exists now is merged into the tree here.
"""

from importlib import import_module

from django.contrib.postgres.indexes import GinIndex
from django.db import migrations

INDEX = "fact_scoped_search_gin"
_document = import_module("memorypr.facts.migrations.0008_scope_lexeme_of_active_versions")._document


class Migration(migrations.Migration):
    dependencies = [("facts", "0012_fact_nearest")]
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    f"ALTER INDEX {INDEX} SET (fastupdate = off)", f"ALTER INDEX {INDEX} RESET (fastupdate)"
                ),
                migrations.RunSQL(f"SELECT gin_clean_pending_list('{INDEX}'::regclass)", migrations.RunSQL.noop),
            ],
            state_operations=[
                migrations.RemoveIndex(model_name="factversion", name=INDEX),
                migrations.AddIndex(
                    model_name="factversion",
                    index=GinIndex(_document("namespace_id", "subject", "status"), name=INDEX, fastupdate=False),
                ),
            ],
        )
    ]
