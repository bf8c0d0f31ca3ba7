"""Row-level security: the web tier's role sees a tenant's rows only in that tenant's scope."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import DatabaseError, connection, transaction

from memorypr.audit.models import AuditEvent
from memorypr.audit.services import audit_record
from memorypr.common.db.rls import policy_name
from memorypr.common.db.tenancy import tenancy_scope_current, tenancy_scope_set
from memorypr.pulls.models import KnowledgePullRequest
from tests.common.tenants import Tenant, as_app_role, tenant_models, tenant_world

pytestmark = pytest.mark.usefixtures("warm_models")

# Listed so that a new tenant table is a visible change here, not only a longer loop.
EXPECTED_TENANT_TABLES = {
    "audit_auditevent",
    "dashboard_reviewclaim",
    "evolution_forgettingmark",
    "facts_factedge",
    "facts_factversion",
    "pulls_knowledgepullrequest",
    "pulls_operation",
    "pulls_reviewcomment",
    "pulls_reviewevent",
    "reviewer_reviewpolicy",
    "reviewer_uploadedtranscript",
    "working_memory_sessionturn",
}


@pytest.fixture
def tenants(db: None) -> tuple[Tenant, Tenant]:
    return tenant_world("alpha"), tenant_world("beta")


def _policies() -> dict[str, tuple[bool, set[str]]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, c.relrowsecurity, coalesce(array_agg(p.polname) FILTER (WHERE p.polname IS NOT NULL), '{}')"
            " FROM pg_class c LEFT JOIN pg_policy p ON p.polrelid = c.oid"
            " WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace GROUP BY c.relname, c.relrowsecurity"
        )
        return {name: (enabled, set(policies)) for name, enabled, policies in cursor.fetchall()}


@pytest.mark.django_db
def test_every_tenant_table_has_row_level_security_and_its_policy():
    # given every model whose rows belong to a namespace, directly or through their parent
    tables = {model._meta.db_table for model in tenant_models()}
    # then they are the known tenant tables, and each has row-level security and its policy
    assert tables == EXPECTED_TENANT_TABLES, (
        "a new tenant table needs a row-level security policy: a RunSQL(*tenant_table_sql(...)) in its"
        " migration (memorypr/common/db/rls.py), and its name in EXPECTED_TENANT_TABLES"
    )
    policies = _policies()
    missing = sorted(t for t in tables if not (policies[t][0] and policy_name(t) in policies[t][1]))
    assert missing == []


@pytest.mark.django_db
def test_the_web_role_owns_nothing_and_cannot_bypass_the_policies():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT rolsuper, rolbypassrls, (SELECT count(*) FROM pg_class c WHERE c.relowner = r.oid)"
            " FROM pg_roles r WHERE rolname = %s",
            [settings.MEMORYPR_APP_ROLE],
        )
        row = cursor.fetchone()
    assert row == (False, False, 0)


def test_every_policy_reads_the_scope_once_per_statement_not_once_per_row(tenants):
    # when the web tier's role reads each tenant table, scoped to one tenant
    per_row: dict[str, list[str]] = {}
    with as_app_role(namespaces=["alpha"]), connection.cursor() as cursor:
        for table in sorted(EXPECTED_TENANT_TABLES):
            cursor.execute(f"EXPLAIN (VERBOSE) SELECT * FROM {table}")
            plan = [row[0] for row in cursor.fetchall()]
            # then the scope's settings are read by InitPlans, whose own output is the one read,
            # never in the condition that each row is checked against
            per_row[table] = [line for line in plan if "Filter" in line and "current_setting" in line]
            assert any("InitPlan" in line for line in plan), plan
    assert per_row == dict.fromkeys(EXPECTED_TENANT_TABLES, [])


def _counts(tenants: tuple[Tenant, ...]) -> dict[str, dict[str, int]]:
    """Rows per tenant table: in total, and per namespace name."""
    result = {}
    for model, path in tenant_models().items():
        manager = model._base_manager
        result[model._meta.db_table] = {
            "total": manager.count(),
            **{t.name: manager.filter(**{path: t.name}).count() for t in tenants},
        }
    return result


def test_without_a_scope_the_web_role_sees_no_tenant_row(tenants):
    # given rows of two tenants in every tenant table (as the owner sees them)
    owner = _counts(tenants)
    assert all(counts["alpha"] > 0 and counts["beta"] > 0 for counts in owner.values()), owner
    # when the web tier's role reads them without a scope
    with as_app_role():
        seen = {table: counts["total"] for table, counts in _counts(tenants).items()}
    # then every table reads as empty
    assert seen == dict.fromkeys(EXPECTED_TENANT_TABLES, 0)


def test_in_one_tenants_scope_the_web_role_sees_exactly_that_tenants_rows(tenants):
    alpha, _ = tenants
    owner = _counts(tenants)
    # when the web tier's role reads every tenant table scoped to alpha
    with as_app_role(namespaces=["alpha"]):
        seen = _counts(tenants)
    # then it sees all of alpha's rows and none of beta's
    assert {t: c["total"] for t, c in seen.items()} == {t: c["alpha"] for t, c in owner.items()}
    assert {t: c["beta"] for t, c in seen.items()} == dict.fromkeys(EXPECTED_TENANT_TABLES, 0)
    assert alpha.marker != tenants[1].marker


def test_the_scope_of_all_namespaces_sees_everything(tenants):
    owner = _counts(tenants)
    with as_app_role():
        tenancy_scope_set(namespaces=(), all_namespaces=True)
        seen = _counts(tenants)
    assert seen == owner


def test_the_web_role_cannot_write_into_another_tenants_namespace(tenants):
    alpha, beta = tenants
    # given the web tier's role scoped to alpha
    with as_app_role(namespaces=["alpha"]):
        # when it tries to change one of beta's KPRs, then nothing matches
        changed = KnowledgePullRequest.objects.filter(pk=beta.queued_pull.pk).update(reviewer_feedback="x")
        assert changed == 0
        # when it inserts an audit row of beta's directly, the policy refuses it
        with pytest.raises(DatabaseError, match="row-level security"), transaction.atomic():
            AuditEvent.objects.create(
                sequence=10**9, created_at=alpha.fact.created_at, namespace="beta", actor="mallory",
                event_type="forged", payload={}, prev_hash="0" * 64, hash="f" * 64,
            )  # fmt: skip
    beta.queued_pull.refresh_from_db()
    assert beta.queued_pull.reviewer_feedback != "x"


def test_the_audit_chain_grows_from_the_web_role_across_namespaces(tenants):
    # given a chain whose last event is beta's
    last = audit_record(event_type="test.beta", actor="tests", namespace="beta")
    # when the web tier's role, scoped to alpha, appends an event
    with as_app_role(namespaces=["alpha"]):
        event = audit_record(event_type="test.alpha", actor="tests", namespace="alpha")
        visible = list(
            AuditEvent.objects.filter(pk__in=[last.pk, event.pk]).values_list("namespace", flat=True)
        )
    # then it chains onto beta's event, which it still cannot read
    assert (event.sequence, event.prev_hash) == (last.sequence + 1, last.hash)
    assert visible == ["alpha"]
    assert AuditEvent.objects.get(pk=event.pk).hash == event.hash


def test_a_new_connection_starts_with_no_scope(tenants):
    # given a connection scoped to alpha
    tenancy_scope_set(namespaces=["alpha"])
    assert tenancy_scope_current() == (["alpha"], False)
    # when the connection is handed out again (what the pool does between requests)
    connection.init_connection_state()
    # then the scope is gone
    assert tenancy_scope_current() == ([], False)
