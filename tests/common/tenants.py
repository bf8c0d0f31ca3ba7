"""Two tenants with a row in every tenant table, and the web tier's database role.

Every value a tenant writes carries its marker, a string that appears nowhere else, so a
response or a query result that holds any of the tenant's data can be recognised.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.apps import apps
from django.conf import settings
from django.db import connection, models, transaction

from memorypr.agents.models import Agent, Namespace
from memorypr.agents.services import reviewer_create
from memorypr.common.db.tenancy import tenancy_scope_set
from memorypr.evolution.models import ForgettingMark
from memorypr.facts.models import FactEdge, FactVersion
from memorypr.pulls.models import KnowledgePullRequest, ReviewEvent
from memorypr.pulls.services import pull_comment_add, pull_record_review
from memorypr.pulls.specs import OperationSpec
from memorypr.working_memory.services import turn_append
from reviewer.dashboard.services import claim_take
from reviewer.services import review_policy_set, transcript_upload
from tests.factories import agent_with_token
from tests.facts.kprs import create, merged, op, submit, update

# The models whose rows belong to no namespace: the scope is computed from them (who may see
# which namespace), so they must be readable before it is set. They hold no memory content.
IDENTITY_MODELS = {"agents.Namespace", "agents.Agent", "agents.AgentToken", "agents.ReviewerMembership"}


def tenant_models() -> dict[type[models.Model], str]:
    """Every model whose rows belong to a namespace, with the lookup to that namespace's name.

    Directly (a `namespace` foreign key, or the name itself), or through the row it hangs from.
    """
    found: dict[type[models.Model], str] = {}
    candidates = [m for m in apps.get_models() if m._meta.label not in IDENTITY_MODELS]
    changed = True
    while changed:
        changed = False
        for model in candidates:
            if model in found:
                continue
            path = _namespace_path(model, found)
            if path is not None:
                found[model] = path
                changed = True
    return found


def _namespace_path(model: type[models.Model], known: dict[type[models.Model], str]) -> str | None:
    fields = {f.name: f for f in model._meta.concrete_fields}
    direct = fields.get("namespace")
    if direct is not None:
        if direct.is_relation and direct.related_model is Namespace:
            return "namespace__name"
        if not direct.is_relation:
            return "namespace"
    for field in model._meta.concrete_fields:
        if field.is_relation and field.related_model in known and not field.null:
            return f"{field.name}__{known[field.related_model]}"
    return None


@dataclass
class Tenant:
    name: str
    namespace: Namespace
    agent: Agent
    token: str
    reviewer: str
    password: str
    marker: str
    subject: str
    session_id: str
    merged_pull: KnowledgePullRequest
    queued_pull: KnowledgePullRequest
    fact: FactVersion
    fact_key: str


def tenant_world(name: str) -> Tenant:
    """A namespace with a row in every tenant table; every value carries the tenant's marker."""
    marker = f"zq{uuid.uuid4().hex[:12]}{name}"
    agent, token = agent_with_token(name=f"agent-{name}", namespaces=[name])
    namespace = agent.namespaces.get()
    password = f"pw-{name}-{uuid.uuid4().hex[:8]}"
    user = reviewer_create(username=f"reviewer-{name}", password=password, namespaces=[name])
    subject, session_id = f"subject-{name}", f"session-{name}"
    quote = {"rawMessageQuote": f"{marker} I moved.", "timestamp": 1732000000000}
    # facts, versions, UPDATES and DERIVED_FROM edges, review events
    first = merged(agent, namespace, create("city", f"{marker} Beijing"), subject=subject)
    merged(
        agent,
        namespace,
        op("CREATE", "commute", f"{marker} by bike", category="derived", derived_from=["city"]),
        subject=subject,
    )
    latest = merged(
        agent, namespace, update("city", f"{marker} Beijing", f"{marker} Shenzhen"), subject=subject
    )
    assert first.pk and latest.pk
    fact = FactVersion.objects.get(namespace=namespace, subject=subject, key="city", status="active")
    ForgettingMark.objects.create(fact=fact, reason="feedback", confidence=0.2)
    # a KPR held for a person, claimed by the tenant's reviewer
    held = OperationSpec(action="CREATE", category="user_profile", key="allergy", confidence=0.9,
                         new_value=f"{marker} peanuts", evidence=quote)  # fmt: skip
    queued = submit(agent, namespace, held, subject=subject)
    with transaction.atomic():
        pull_record_review(
            pull=queued,
            reviewer_kind="rules",
            reviewer="rules",
            verdict=ReviewEvent.Verdict.ESCALATE,
            status_after="NEEDS_HUMAN_REVIEW",
            reasons=f"{marker} protected key",
        )
        claim_take(pull_id=str(queued.pk), user=user)
    pull_comment_add(pull_id=str(queued.pk), author=user.get_username(), body=f"{marker} remark")
    turn_append(
        namespace=namespace, session_id=session_id, role="user", content=f"{marker} said", agent=agent
    )
    transcript_upload(namespace=namespace, session_id=session_id, text=f"{marker} transcript", actor="tests")
    review_policy_set(namespace=namespace, actor="tests", suggestion_rules=[])
    assert FactEdge.objects.filter(source__namespace=namespace).exists()
    return Tenant(
        name=name,
        namespace=namespace,
        agent=agent,
        token=token,
        reviewer=user.get_username(),
        password=password,
        marker=marker,
        subject=subject,
        session_id=session_id,
        merged_pull=latest,
        queued_pull=queued,
        fact=fact,
        fact_key="city",
    )


@contextmanager
def as_app_role(*, namespaces: list[str] | None = None) -> Iterator[None]:
    """Run the block as the web tier's role, in this test's transaction, optionally scoped."""
    role = connection.ops.quote_name(settings.MEMORYPR_APP_ROLE)
    with connection.cursor() as cursor:
        cursor.execute(f"SET ROLE {role}")
    try:
        if namespaces is not None:
            tenancy_scope_set(namespaces=namespaces)
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET ROLE")
