"""A fact's embedding stays in its row, whatever the length of its value.

pgvector stores its type EXTERNAL: once a row passes PostgreSQL's 2 kB threshold, the largest
value allowed to leave the row leaves it first, and that is the 1.5 kB embedding. A fact whose
value runs to a sentence (about 90 characters with its key) crosses the threshold, and its
embedding then lives in the TOAST table: every distance computed on it costs a lookup in the
TOAST index and a read of another page. An exact search of a subject (retrieval's search of
subjects up to MEMORYPR_EXACT_SEARCH_MAX_ROWS facts) computes a distance for every row:
measured on 10,000 facts of one subject, 36-39 ms with the embeddings out of line against
16-20 ms in the row (four times the buffer reads).

With MAIN storage the text columns (value, search text, search vector) are compressed or moved
out first, and the embedding stays in the row: the row then fits under the threshold, so the
embedding is never compressed either.

The rows whose embedding already left are rewritten here, a batch at a time: a rewritten
active version takes a new entry in the HNSW index (about 1-2 ms a row), so a large store takes
minutes. The values are the same; only where they are stored changes.
"""

from django.db import migrations

BATCH = 500

_OUT_OF_LINE = """
    SELECT id FROM facts_factversion
    WHERE embedding IS NOT NULL AND pg_column_toast_chunk_id(embedding) IS NOT NULL
    ORDER BY id LIMIT %s
"""


def embeddings_moved_into_rows(apps, schema_editor) -> int:  # type: ignore[no-untyped-def]
    """Rewrite every fact version whose embedding is stored out of line; returns how many."""
    moved = 0
    with schema_editor.connection.cursor() as cursor:
        while True:
            # A fresh datum (through real[]), not the stored pointer: an UPDATE that keeps the
            # pointer keeps the value where it is.
            cursor.execute(
                f"""UPDATE facts_factversion SET embedding = embedding::real[]::vector
                    WHERE id IN ({_OUT_OF_LINE})""",
                [BATCH],
            )
            moved += cursor.rowcount
            if cursor.rowcount < BATCH:
                return moved


class Migration(migrations.Migration):
    # Each batch commits on its own: a large store is not rewritten in one transaction.
    atomic = False
    dependencies = [("facts", "0010_text_match_planned_once")]
    operations = [
        migrations.RunSQL(
            "ALTER TABLE facts_factversion ALTER COLUMN embedding SET STORAGE MAIN",
            "ALTER TABLE facts_factversion ALTER COLUMN embedding SET STORAGE EXTERNAL",
        ),
        migrations.RunPython(embeddings_moved_into_rows, migrations.RunPython.noop),
    ]
