"""Room on every page of the fact store for a version's bookkeeping to be updated in place.

A retrieval bumps the access count and time of every fact it serves (feedback moves a
confidence the same way). A row is about 1.9 kB, nearly all of it the embedding; with pages
packed full, the new row version went to another page, and every index (the HNSW graph
too) took a new entry for it: about 1.5 ms per fact at 100k facts, more than the retrieval
itself. With a quarter of each page kept free, such an update is a heap-only (HOT) update
on the same page, and no index is touched (0.08 ms per fact, measured). The price is
space: about three rows per page instead of four.

The setting applies to pages written from now on; an existing row moves to a roomy page at
its first update and is updated in place after that (or run VACUUM FULL in a quiet hour).
"""

from django.db import migrations

FILLFACTOR = 75


class Migration(migrations.Migration):
    dependencies = [("facts", "0006_scoped_text_index")]
    operations = [
        migrations.RunSQL(
            f"ALTER TABLE facts_factversion SET (fillfactor = {FILLFACTOR})",
            "ALTER TABLE facts_factversion RESET (fillfactor)",
        )
    ]
