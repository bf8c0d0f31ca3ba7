"""Only active versions carry their subject's scope lexeme; retired ones carry a lexeme of their own.

Every UPDATE leaves a retired version behind, with the same words as the active one: a key
changed fifty times had fifty-one versions under the subject's scope lexeme (migration 0006),
and a word of it made a text match read each of them from the heap to throw fifty away.
Now the lexeme says which versions are active now (`§<namespace id>§md5(subject)`) and which
are retired (the same with `§retired`): retrieval of what is true now asks for the first only,
so its index scan finds active versions alone; history (`asOf`) asks for either.

A version's status changes when it is retired, an update that changes an indexed column
anyway (the status is in the subject's btree index), so this costs no heap-only update.
"""

from importlib import import_module

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import migrations, models
from django.db.models.expressions import CombinedExpression

import memorypr.facts.models

INDEX = "fact_scoped_search_gin"
SIGNATURE = "fact_text_matches(bigint, varchar, tsquery, timestamptz, boolean, varchar[], integer)"

SCOPE_FUNCTIONS = """
CREATE OR REPLACE FUNCTION memorypr_scope_vector(p_namespace_id bigint, p_subject varchar, p_status varchar)
    RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT array_to_tsvector(ARRAY['§' || p_namespace_id::text || '§' || md5(p_subject)
                                         || CASE WHEN p_status = 'active' THEN '' ELSE '§retired' END]) $$;
CREATE OR REPLACE FUNCTION memorypr_scope_query(p_namespace_id bigint, p_subject varchar, p_historical boolean)
    RETURNS tsquery LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN p_historical
                 THEN quote_literal('§' || p_namespace_id::text || '§' || md5(p_subject))::tsquery
                      || quote_literal('§' || p_namespace_id::text || '§' || md5(p_subject) || '§retired')::tsquery
                 ELSE quote_literal('§' || p_namespace_id::text || '§' || md5(p_subject))::tsquery END $$;
"""

DROP_SCOPE_FUNCTIONS = """
DROP FUNCTION IF EXISTS memorypr_scope_query(bigint, varchar, boolean);
DROP FUNCTION IF EXISTS memorypr_scope_vector(bigint, varchar, varchar);
"""


DOCUMENT = "(f.search_vector || memorypr_scope_vector(f.namespace_id, f.subject, f.status))"
SUBJECT_DOCUMENT = "(f.search_vector || memorypr_scope_vector(f.namespace_id, f.subject))"

# Migration 0006's function with the new document and scope: the match is the one thing that changes.
MATCHES_BEFORE = import_module("memorypr.facts.migrations.0006_scoped_text_index").MATCHES
_MATCH_BEFORE = (
    f"{SUBJECT_DOCUMENT}\n              @@ (memorypr_scope_query(p_namespace_id, p_subject) && p_query)"
)
_MATCH = (
    f"{DOCUMENT}\n              @@ (memorypr_scope_query(p_namespace_id, p_subject, p_historical) && p_query)"
)
if MATCHES_BEFORE.count(_MATCH_BEFORE) != 1:
    raise RuntimeError("migration 0006's fact_text_matches() does not hold the match this migration replaces")
MATCHES = MATCHES_BEFORE.replace(_MATCH_BEFORE, _MATCH)


def _index_swap(expression: str) -> list[str]:
    """Build the index of `expression` beside the old one, then take the old one's place (one
    statement each: CONCURRENTLY cannot share a transaction)."""
    return [
        f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}_new",
        f"CREATE INDEX CONCURRENTLY {INDEX}_new ON facts_factversion USING gin ({expression})",
        f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}",
        f"ALTER INDEX {INDEX}_new RENAME TO {INDEX}",
    ]


def _document(*parts: str) -> CombinedExpression:
    return CombinedExpression(
        models.F("search_vector"),
        "||",
        memorypr.facts.models.ScopeVector(*(models.F(part) for part in parts)),
        output_field=SearchVectorField(),
    )


class Migration(migrations.Migration):
    # CREATE / DROP INDEX CONCURRENTLY: a live table keeps taking merges while the index builds.
    atomic = False
    dependencies = [("facts", "0007_room_for_in_place_updates")]
    operations = [
        migrations.RunSQL(SCOPE_FUNCTIONS, DROP_SCOPE_FUNCTIONS),
        migrations.SeparateDatabaseAndState(
            database_operations=[
                # Forward: the new index, then the function that asks it. Backward: the old function,
                # then the old index (each RunSQL's reverse runs in the opposite order).
                migrations.RunSQL(
                    _index_swap(DOCUMENT.replace("f.", "")),
                    _index_swap(SUBJECT_DOCUMENT.replace("f.", "")),
                ),
                migrations.RunSQL(MATCHES, MATCHES_BEFORE),
            ],
            state_operations=[
                migrations.RemoveIndex(model_name="factversion", name=INDEX),
                migrations.AddIndex(
                    model_name="factversion",
                    index=GinIndex(_document("namespace_id", "subject", "status"), name=INDEX),
                ),
            ],
        ),
    ]
