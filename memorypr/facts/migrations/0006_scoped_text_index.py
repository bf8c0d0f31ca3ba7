"""Full-text matches through a GIN index scoped to the subject.

The plain GIN index on `search_vector` spans every tenant: a common word's bitmap held every
matching row of every namespace, and the match then intersected it with the subject's rows
(an 80k-entry bitmap for a large subject). The cost of a query grew with the whole table.

Here each row's document also carries one scope lexeme, `§<namespace id>§md5(subject)`, in an
expression index; `fact_text_matches()` asks for `scope & (words)`, so the index returns only
the subject's matching rows, and nothing else needs a bitmap. `§` never survives the `simple`
parser, so no word collides with a scope lexeme; the function still filters namespace and
subject itself, so the index is an accelerator, never the check.
"""

from importlib import import_module

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import migrations, models
from django.db.models.expressions import CombinedExpression

import memorypr.facts.models

SCOPED_SEARCH_INDEX = "fact_scoped_search_gin"

SCOPE_FUNCTIONS = """
CREATE OR REPLACE FUNCTION memorypr_scope_vector(p_namespace_id bigint, p_subject varchar) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT array_to_tsvector(ARRAY['§' || p_namespace_id::text || '§' || md5(p_subject)]) $$;
CREATE OR REPLACE FUNCTION memorypr_scope_query(p_namespace_id bigint, p_subject varchar) RETURNS tsquery
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT quote_literal('§' || p_namespace_id::text || '§' || md5(p_subject))::tsquery $$;
"""

DROP_SCOPE_FUNCTIONS = """
DROP FUNCTION IF EXISTS memorypr_scope_query(bigint, varchar);
DROP FUNCTION IF EXISTS memorypr_scope_vector(bigint, varchar);
"""

SIGNATURE = "fact_text_matches(bigint, varchar, tsquery, timestamptz, boolean, varchar[], integer)"

# It returns what ranking reads (key and document) with the ids: the rows were just read, and
# reading them again by key cost an index lookup and a heap visit per match.
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
          AND (f.search_vector || memorypr_scope_vector(f.namespace_id, f.subject))
              @@ (memorypr_scope_query(p_namespace_id, p_subject) && p_query)
          -- The scoped index has already narrowed to the subject. Written so that no btree can
          -- serve them (+ 0, || ''), these checks are filters on the few matched rows, and the
          -- planner does not intersect with a bitmap of the whole subject.
          AND f.namespace_id + 0 = p_namespace_id AND f.subject || '' = p_subject
          AND ((NOT p_historical AND f.status || '' = 'active')
               OR (p_historical AND f.created_at <= p_at AND (f.status = 'active' OR f.retired_at > p_at)))
          AND (f.valid_from IS NULL OR f.valid_from <= p_at)
          AND (f.valid_to IS NULL OR f.valid_to > p_at)
          AND (p_categories IS NULL OR f.category = ANY (p_categories))
        LIMIT p_limit
    $$;
"""

# Back to migration 0005's function (its return type differs, so drop it first).
MATCHES_UNSCOPED = f"DROP FUNCTION IF EXISTS {SIGNATURE};\n" + import_module(
    "memorypr.facts.migrations.0005_fact_text_matches"
).FORWARD


class Migration(migrations.Migration):
    # CREATE / DROP INDEX CONCURRENTLY: a live table keeps taking merges while the index builds.
    atomic = False
    dependencies = [("facts", "0005_fact_text_matches")]
    operations = [
        migrations.RunSQL(SCOPE_FUNCTIONS, DROP_SCOPE_FUNCTIONS),
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {SCOPED_SEARCH_INDEX} ON facts_factversion"
                    " USING gin ((search_vector || memorypr_scope_vector(namespace_id, subject)))",
                    f"DROP INDEX CONCURRENTLY IF EXISTS {SCOPED_SEARCH_INDEX}",
                ),
                migrations.RunSQL(MATCHES, MATCHES_UNSCOPED),
                migrations.RunSQL(
                    "DROP INDEX CONCURRENTLY IF EXISTS fact_search_vector_gin",
                    "CREATE INDEX CONCURRENTLY IF NOT EXISTS fact_search_vector_gin"
                    " ON facts_factversion USING gin (search_vector)",
                ),
            ],
            state_operations=[
                migrations.RemoveIndex(model_name="factversion", name="fact_search_vector_gin"),
                migrations.AddIndex(
                    model_name="factversion",
                    index=GinIndex(
                        CombinedExpression(
                            models.F("search_vector"),
                            "||",
                            memorypr.facts.models.ScopeVector(models.F("namespace_id"), models.F("subject")),
                            output_field=SearchVectorField(),
                        ),
                        name=SCOPED_SEARCH_INDEX,
                    ),
                ),
            ],
        ),
    ]
