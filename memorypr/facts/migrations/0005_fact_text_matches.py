"""`fact_text_matches()`: the full-text match of retrieval, through the GIN index under row-level security.

Row-level security evaluates a query's conditions that are not leakproof after the policy's,
so `search_vector @@ query` can never use the GIN index for the web tier's role: a common word
in a subject of 100k facts turned into a scan of the whole subject (about 250 ms instead of
30). This function runs as the tables' owner, through the index, and checks the tenancy itself:
it answers only for a namespace in the caller's scope (memorypr.common.db.tenancy), or for the
owner. It returns row ids only; the caller reads the rows under its own policies.
"""

from django.db import migrations

FORWARD = """
-- Inside a SECURITY DEFINER function current_user is the owner; the caller is the role set by
-- SET ROLE, else the session's login role. The owner (and a superuser) sees every namespace,
-- as the policies let it.
CREATE OR REPLACE FUNCTION memorypr_caller_is_owner() RETURNS boolean
    LANGUAGE sql STABLE SET search_path = pg_catalog, public
    AS $$
        SELECT r.rolname = (SELECT pg_get_userbyid(c.relowner) FROM pg_class c
                            WHERE c.oid = 'facts_factversion'::regclass)
               OR r.rolsuper OR r.rolbypassrls
        FROM pg_roles r
        WHERE r.rolname = CASE WHEN current_setting('role') = 'none' THEN session_user::text
                               ELSE current_setting('role') END
    $$;

CREATE OR REPLACE FUNCTION fact_text_matches(
    p_namespace_id bigint, p_subject varchar, p_query tsquery, p_at timestamptz,
    p_historical boolean, p_categories varchar[], p_limit integer
) RETURNS SETOF bigint
    LANGUAGE sql STABLE SECURITY DEFINER ROWS 200
    -- planned for each call's own values: a plan made for any subject would skip the GIN index
    SET search_path = pg_catalog, public SET plan_cache_mode = force_custom_plan
    AS $$
        SELECT f.id FROM facts_factversion f
        WHERE (memorypr_caller_is_owner() OR memorypr_scope_all()
               OR p_namespace_id = ANY (ARRAY(SELECT n.id FROM agents_namespace n
                                             WHERE n.name = ANY (memorypr_scope_names()))))
          AND f.namespace_id = p_namespace_id AND f.subject = p_subject
          AND f.search_vector @@ p_query
          AND ((NOT p_historical AND f.status = 'active')
               OR (p_historical AND f.created_at <= p_at AND (f.status = 'active' OR f.retired_at > p_at)))
          AND (f.valid_from IS NULL OR f.valid_from <= p_at)
          AND (f.valid_to IS NULL OR f.valid_to > p_at)
          AND (p_categories IS NULL OR f.category = ANY (p_categories))
        LIMIT p_limit
    $$;
"""

REVERSE = """
DROP FUNCTION IF EXISTS fact_text_matches(bigint, varchar, tsquery, timestamptz, boolean, varchar[], integer);
DROP FUNCTION IF EXISTS memorypr_caller_is_owner();
"""


class Migration(migrations.Migration):
    dependencies = [("facts", "0004_hnsw_active_versions"), ("common", "0003_row_level_security")]
    operations = [migrations.RunSQL(FORWARD, REVERSE)]
