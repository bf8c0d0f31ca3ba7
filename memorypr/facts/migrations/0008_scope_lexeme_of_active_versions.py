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

MATCHES = f"""
DROP FUNCTION IF EXISTS {SIGNATURE};
CREATE FUNCTION fact_text_matches(
    p_namespace_id bigint, p_subject varchar, p_query tsquery, p_at timestamptz,
    p_historical boolean, p_categories varchar[], p_limit integer
) RETURNS TABLE (id bigint, key varchar, search_vector tsvector)
    LANGUAGE sql STABLE SECURITY DEFINER ROWS 200
    -- planned for each call's own values: a plan made for any subject would skip the GIN index
    SET search_path = pg_catalog, public SET plan_cache_mode = force_custom_plan
    AS $$
        SELECT f.id, f.key, f.search_vector FROM facts_factversion f
        WHERE (memorypr_caller_is_owner() OR memorypr_scope_all()
               OR p_namespace_id = ANY (ARRAY(SELECT n.id FROM agents_namespace n
                                             WHERE n.name = ANY (memorypr_scope_names()))))
          AND {DOCUMENT} @@ (memorypr_scope_query(p_namespace_id, p_subject, p_historical) && p_query)
          -- The scoped index has already narrowed to the subject (and, now, to active versions).
          -- Written so that no btree can serve them (+ 0, || ''), these checks are filters on the
          -- few matched rows, and the planner does not intersect with a bitmap of the whole subject.
          AND f.namespace_id + 0 = p_namespace_id AND f.subject || '' = p_subject
          AND ((NOT p_historical AND f.status || '' = 'active')
               OR (p_historical AND f.created_at <= p_at AND (f.status = 'active' OR f.retired_at > p_at)))
          AND (f.valid_from IS NULL OR f.valid_from <= p_at)
          AND (f.valid_to IS NULL OR f.valid_to > p_at)
          AND (p_categories IS NULL OR f.category = ANY (p_categories))
        LIMIT p_limit
    $$;
"""


# Back to migration 0006's function, as it created it.
MATCHES_BEFORE = import_module("memorypr.facts.migrations.0006_scoped_text_index").MATCHES


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
