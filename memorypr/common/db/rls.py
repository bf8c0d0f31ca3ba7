"""Row-level security for tenant tables: the SQL that migrations run.

A tenant table is one whose rows belong to a namespace, through a `namespace` column of its
own or through the row it hangs from (an operation through its KPR, an edge through its fact).
Each gets one policy, for reading and writing alike: a row is visible, and may be written,
when its namespace is in the connection's scope (`memorypr.common.db.tenancy`).

The policies bind every role except the tables' owner and superusers: the owner is the role
that migrates and runs the worker, beat and commands, whose jobs span namespaces. FORCE ROW
LEVEL SECURITY is left off on purpose, so the owner needs no scope; the web tier connects as
`MEMORYPR_APP_ROLE`, which owns nothing and is always bound.

A new tenant table adds its policy in its own migration with `tenant_table_sql`;
tests/common/test_row_level_security.py fails for any tenant model without one.
"""

from __future__ import annotations

# Inlined into each policy: `ARRAY(SELECT ...)` is computed once per statement (an InitPlan),
# not once per row.
SCOPE_FUNCTIONS_SQL = """
CREATE OR REPLACE FUNCTION memorypr_scope_all() RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT coalesce(current_setting('memorypr.all_namespaces', true), '') = 'on' $$;
CREATE OR REPLACE FUNCTION memorypr_scope_names() RETURNS text[]
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT coalesce(nullif(current_setting('memorypr.namespaces', true), ''), '{}')::text[] $$;
"""

SCOPE_FUNCTIONS_REVERSE_SQL = """
DROP FUNCTION IF EXISTS memorypr_scope_names();
DROP FUNCTION IF EXISTS memorypr_scope_all();
"""

SCOPE_IDS = "ARRAY(SELECT n.id FROM agents_namespace n WHERE n.name = ANY (memorypr_scope_names()))"
# The scope read once per statement, as scalar subqueries (InitPlans). Called bare in a policy,
# these STABLE functions are called again for every row the statement reads: a walk of the
# HNSW index checks the policy on each of the hundreds of rows it passes (at 100k facts the web
# tier's walks took 0.15-0.19 ms, about 4%, longer than the owner's with the per-row calls).
SCOPE_ALL_ONCE = "(SELECT memorypr_scope_all())"
# (the cast keeps `= ANY (...)` an array comparison: `= ANY ((SELECT ...))` would be a sublink)
SCOPE_NAMES_ONCE = "(SELECT memorypr_scope_names())::text[]"


def namespace_id_condition(column: str = "namespace_id", *, scope_all: str = SCOPE_ALL_ONCE) -> str:
    return f"{scope_all} OR {column} = ANY ({SCOPE_IDS})"


def namespace_name_condition(
    column: str = "namespace", *, scope_all: str = SCOPE_ALL_ONCE, scope_names: str = SCOPE_NAMES_ONCE
) -> str:
    return f"{scope_all} OR {column} = ANY ({scope_names})"


def parent_condition(
    *,
    column: str,
    parent_table: str,
    parent_namespace_column: str = "namespace_id",
    scope_all: str = SCOPE_ALL_ONCE,
) -> str:
    return (
        f"{scope_all} OR EXISTS (SELECT 1 FROM {parent_table} parent"
        f" WHERE parent.id = {column} AND parent.{parent_namespace_column} = ANY ({SCOPE_IDS}))"
    )


def policy_name(table: str) -> str:
    return f"{table}_tenant"


def tenant_table_sql(*, table: str, condition: str, check: str | None = None) -> tuple[str, str]:
    """(forward, reverse) SQL for RunSQL: enable RLS on `table` with one policy for every command.

    `check` (default: the same condition) is what a written row must satisfy.
    """
    name = policy_name(table)
    forward = f"""
ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS {name} ON {table};
CREATE POLICY {name} ON {table} FOR ALL USING ({condition}) WITH CHECK ({check or condition});
"""
    reverse = f"""
DROP POLICY IF EXISTS {name} ON {table};
ALTER TABLE {table} DISABLE ROW LEVEL SECURITY;
"""
    return forward, reverse
