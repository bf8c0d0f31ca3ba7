"""Tenancy enforced by the database: row-level security on every tenant table, the web tier's role.

The migrating role owns the tables and bypasses the policies (no FORCE): it is also the role of
the worker, beat and commands. The web tier connects as MEMORYPR_APP_ROLE (created here when
it does not exist yet), which owns nothing, so the policies always bind it.
"""

from django.conf import settings
from django.db import migrations

from memorypr.common.db.rls import (
    SCOPE_ALL_ONCE,
    SCOPE_FUNCTIONS_REVERSE_SQL,
    SCOPE_FUNCTIONS_SQL,
    SCOPE_NAMES_ONCE,
    namespace_id_condition,
    namespace_name_condition,
    parent_condition,
    tenant_table_sql,
)

KPR = "pulls_knowledgepullrequest"
FACT = "facts_factversion"

def tenant_tables(*, scope_all: str = SCOPE_ALL_ONCE, scope_names: str = SCOPE_NAMES_ONCE) -> list[tuple[str, str]]:
    """(forward, reverse) SQL of each tenant table's policy; `scope_all` and `scope_names`: how
    the policies read the connection's scope. A new database gets here the policies that read it
    once per statement; databases migrated before have theirs replaced by migration 0004."""

    def by_parent(table: str, column: str, parent_table: str) -> tuple[str, str]:
        condition = parent_condition(column=column, parent_table=parent_table, scope_all=scope_all)
        return tenant_table_sql(table=table, condition=condition)

    def by_namespace(table: str) -> tuple[str, str]:
        return tenant_table_sql(table=table, condition=namespace_id_condition(scope_all=scope_all))

    return [
        by_namespace(KPR),
        by_parent("pulls_operation", "pull_id", KPR),
        by_parent("pulls_reviewevent", "pull_id", KPR),
        by_parent("pulls_reviewcomment", "pull_id", KPR),
        by_parent("dashboard_reviewclaim", "pull_id", KPR),
        by_namespace(FACT),
        by_parent("facts_factedge", "source_id", FACT),
        by_parent("evolution_forgettingmark", "fact_id", FACT),
        by_namespace("working_memory_sessionturn"),
        by_namespace("reviewer_reviewpolicy"),
        by_namespace("reviewer_uploadedtranscript"),
        tenant_table_sql(
            table="audit_auditevent",
            condition=namespace_name_condition(scope_all=scope_all, scope_names=scope_names),
        ),
    ]


# The audit chain is one chain across namespaces: appending reads the head, which may belong to
# another tenant. These two functions run as the owner and expose only the head's sequence and
# hash, never another event's content.
AUDIT_FUNCTIONS_SQL = """
CREATE OR REPLACE FUNCTION audit_chain_tip() RETURNS TABLE (sequence bigint, hash varchar)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
    AS $$ SELECT e.sequence, e.hash FROM audit_auditevent e ORDER BY e.sequence DESC LIMIT 1 $$;

CREATE OR REPLACE FUNCTION audit_chain_append(
    p_sequence bigint, p_created_at timestamptz, p_namespace varchar, p_actor varchar,
    p_event_type varchar, p_pull_id uuid, p_subject varchar, p_payload jsonb,
    p_prev_hash varchar, p_hash varchar
) RETURNS bigint
    LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
    AS $$
        INSERT INTO audit_auditevent
            (sequence, created_at, namespace, actor, event_type, pull_id, subject, payload, prev_hash, hash)
        VALUES (p_sequence, p_created_at, p_namespace, p_actor, p_event_type, p_pull_id, p_subject,
                p_payload, p_prev_hash, p_hash)
        RETURNING id
    $$;
"""

AUDIT_FUNCTIONS_REVERSE_SQL = """
DROP FUNCTION IF EXISTS audit_chain_append(
    bigint, timestamptz, varchar, varchar, varchar, uuid, varchar, jsonb, varchar, varchar);
DROP FUNCTION IF EXISTS audit_chain_tip();
"""


def _quote(schema_editor, name: str) -> str:
    return schema_editor.quote_name(name)


def app_role_grant(apps, schema_editor):
    role = settings.MEMORYPR_APP_ROLE
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role])
        if cursor.fetchone() is None:
            cursor.execute("SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user")
            if not cursor.fetchone()[0]:
                raise RuntimeError(
                    f"role {role} does not exist and {settings.DATABASES['default']['USER']} may not create it:"
                    f" CREATE ROLE {role} LOGIN PASSWORD '...' NOBYPASSRLS, then migrate again"
                )
            # No BYPASSRLS, no ownership, no inheritance: the policies always bind this role.
            cursor.execute(f"CREATE ROLE {_quote(schema_editor, role)} LOGIN NOINHERIT NOBYPASSRLS")
        cursor.execute("SELECT current_schema()")
        schema = _quote(schema_editor, cursor.fetchone()[0])
        quoted = _quote(schema_editor, role)
        for statement in (
            f"GRANT USAGE ON SCHEMA {schema} TO {quoted}",
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {quoted}",
            f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO {quoted}",
            # Tables that later migrations create are the web tier's too (their policies are not).
            f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {quoted}",
            f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT USAGE, SELECT ON SEQUENCES TO {quoted}",
        ):
            cursor.execute(statement)


def app_role_revoke(apps, schema_editor):
    role = settings.MEMORYPR_APP_ROLE
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role])
        if cursor.fetchone() is None:
            return
        cursor.execute("SELECT current_schema()")
        schema = _quote(schema_editor, cursor.fetchone()[0])
        quoted = _quote(schema_editor, role)
        # The role itself stays: roles belong to the cluster, and other databases may use it.
        for statement in (
            f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} REVOKE ALL ON SEQUENCES FROM {quoted}",
            f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} REVOKE ALL ON TABLES FROM {quoted}",
            f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA {schema} FROM {quoted}",
            f"REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM {quoted}",
            f"REVOKE USAGE ON SCHEMA {schema} FROM {quoted}",
        ):
            cursor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [
        ("common", "0002_pull_health_indexes"),
        ("agents", "0002_token_expiry"),
        ("audit", "0003_refuse_truncate"),
        ("pulls", "0005_review_comment"),
        ("facts", "0003_history_guard_hnsw_params"),
        ("evolution", "0001_initial"),
        ("working_memory", "0002_append_only"),
        ("reviewer", "0002_policy_suggestion_rules"),
        ("dashboard", "0001_initial"),
    ]

    operations = [
        migrations.RunSQL(SCOPE_FUNCTIONS_SQL, SCOPE_FUNCTIONS_REVERSE_SQL),
        migrations.RunSQL(AUDIT_FUNCTIONS_SQL, AUDIT_FUNCTIONS_REVERSE_SQL),
        *(migrations.RunSQL(forward, reverse) for forward, reverse in tenant_tables()),
        migrations.RunPython(app_role_grant, app_role_revoke),
    ]
