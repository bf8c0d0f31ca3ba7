"""Every word in the full-text index is scoped to its subject, not only the document.

Since migration 0006 each document carried one scope lexeme beside its words, and a match asked
the index for `scope & word & word`. A GIN index answers an AND by walking the posting lists of
all its terms together, and the scope lexeme's list holds every active version of the subject:
at 100k facts in one subject, "fresh train in Chengdu" walked lists of 80k (the scope), 5.2k,
2.4k and 2.4k rows for 7 matches, 2.2 ms of a retrieval's 5.4 ms in the database; the same
words without the scope took 1.2 ms, over every tenant's rows.

Now each word is indexed as `<scope>§word` (`<scope>§r§word` for a retired version), where the
scope is the first 8 hex digits of md5(namespace id § subject): the posting list of a word is
its list within the subject's active versions alone, and an AND walks only those. The same
match took 0.33 ms. `memorypr_scoped_query()` rewrites a query's lexemes the same way, keeping
its operators, prefixes and weights. The scope is a hash: two subjects may share one (an index
hit of the other subject's rows), so the function still checks namespace, subject and status
on each row, and the original query on its document (positions, phrases, weights).
The price is size: each subject's words are entries of their own, 42 MB instead of 15 MB for
220k versions in 200 subjects. Built beside the old index and swapped in (CONCURRENTLY: merges
go on meanwhile).
"""

from importlib import import_module

from django.contrib.postgres.indexes import GinIndex
from django.db import migrations, models

import memorypr.facts.models

INDEX = "fact_scoped_search_gin"
SIGNATURE = "fact_text_matches(bigint, varchar, tsquery, timestamptz, boolean, varchar[], integer)"
_before = import_module("memorypr.facts.migrations.0008_scope_lexeme_of_active_versions")

# Written out in each function: an index build runs its expressions with a search_path of
# pg_catalog alone, where a function that called another of ours would not find it.
_PREFIX = "left(md5(p_namespace_id::text || '§' || p_subject), 8)"

SCOPED_FUNCTIONS = rf"""
CREATE OR REPLACE FUNCTION memorypr_scoped_document(
    p_document tsvector, p_namespace_id bigint, p_subject varchar, p_status varchar
) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT array_to_tsvector(ARRAY(
        SELECT {_PREFIX} || CASE WHEN p_status = 'active' THEN '§' ELSE '§r§' END || lexeme
        FROM unnest(tsvector_to_array(p_document)) AS lexeme)) $$;
-- Each quoted lexeme of the query's text form, with its suffix (:* prefix match, :AB weights),
-- becomes the active version's scoped lexeme, or for history either version's.
CREATE OR REPLACE FUNCTION memorypr_scoped_query(
    p_query tsquery, p_namespace_id bigint, p_subject varchar, p_historical boolean
) RETURNS tsquery LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT regexp_replace(
        p_query::text,
        '''((?:[^'']|'''')*)''(:[*A-D]+)?',
        CASE WHEN p_historical
             THEN '(''' || {_PREFIX} || '§\1''\2 | ''' || {_PREFIX} || '§r§\1''\2)'
             ELSE '''' || {_PREFIX} || '§\1''\2' END,
        'g')::tsquery $$;
"""

DROP_SCOPED_FUNCTIONS = """
DROP FUNCTION IF EXISTS memorypr_scoped_query(tsquery, bigint, varchar, boolean);
DROP FUNCTION IF EXISTS memorypr_scoped_document(tsvector, bigint, varchar, varchar);
"""

DOCUMENT = "memorypr_scoped_document(f.search_vector, f.namespace_id, f.subject, f.status)"
_MATCH_BEFORE = (
    f"{_before.DOCUMENT}\n              @@ (memorypr_scope_query(p_namespace_id, p_subject, p_historical) && p_query)"
)
_MATCH = (
    f"{DOCUMENT}\n              @@ memorypr_scoped_query(p_query, p_namespace_id, p_subject, p_historical)"
    "\n          AND f.search_vector @@ p_query"
)
if _before.MATCHES.count(_MATCH_BEFORE) != 1:
    raise RuntimeError("migration 0008's fact_text_matches() does not hold the match this migration replaces")


def _matches(match: str) -> str:
    """The function with `match`, planned once per connection (migration 0010), replaced in place."""
    body = _before.MATCHES.replace(_MATCH_BEFORE, match)
    body = body.replace(f"DROP FUNCTION IF EXISTS {SIGNATURE};\nCREATE FUNCTION", "CREATE OR REPLACE FUNCTION")
    body = body.replace("plan_cache_mode = force_custom_plan", "plan_cache_mode = force_generic_plan")
    body = body.replace(
        "-- planned for each call's own values: a plan made for any subject would skip the GIN index\n    ", ""
    )
    return body


MATCHES = _matches(_MATCH)
MATCHES_BEFORE = _matches(_MATCH_BEFORE)


def _index_swap(expression: str) -> list[str]:
    return [
        f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}_new",
        f"CREATE INDEX CONCURRENTLY {INDEX}_new ON facts_factversion USING gin ({expression})"
        " WITH (fastupdate = off)",
        f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}",
        f"ALTER INDEX {INDEX}_new RENAME TO {INDEX}",
    ]


class Migration(migrations.Migration):
    # CREATE / DROP INDEX CONCURRENTLY: a live table keeps taking merges while the index builds.
    atomic = False
    dependencies = [("facts", "0014_hnsw_graph_per_subject_group")]
    operations = [
        migrations.RunSQL(SCOPED_FUNCTIONS, DROP_SCOPED_FUNCTIONS),
        migrations.SeparateDatabaseAndState(
            database_operations=[
                # Forward: the new index, then the function that asks it. Backward: the old
                # function, then the old index (each RunSQL's reverse runs in the opposite order).
                migrations.RunSQL(
                    _index_swap(DOCUMENT.replace("f.", "")),
                    _index_swap(_before.DOCUMENT.replace("f.", "")),
                ),
                migrations.RunSQL(MATCHES, MATCHES_BEFORE),
            ],
            state_operations=[
                migrations.RemoveIndex(model_name="factversion", name=INDEX),
                migrations.AddIndex(
                    model_name="factversion",
                    index=GinIndex(
                        memorypr.facts.models.ScopedDocument(
                            *(models.F(field) for field in ("search_vector", "namespace_id", "subject", "status"))
                        ),
                        name=INDEX,
                        fastupdate=False,
                    ),
                ),
            ],
        ),
    ]
