from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet

from memorypr.agents.models import Agent
from memorypr.pulls.models import KnowledgePullRequest


def pull_list(
    *,
    agent: Agent,
    namespace: str | None = None,
    review_status: str | None = None,
    subject: str | None = None,
    since: datetime | None = None,
) -> QuerySet[KnowledgePullRequest]:
    """KPRs in the agent's namespaces, newest first."""
    qs = (
        KnowledgePullRequest.objects.filter(namespace__in=agent.namespaces.all())
        .select_related("namespace", "agent")
        .prefetch_related("operations")
        .order_by("-created_at", "-id")
    )
    if namespace:
        qs = qs.filter(namespace__name=namespace)
    if review_status:
        qs = qs.filter(review_status=review_status)
    if subject:
        qs = qs.filter(subject=subject)
    if since:
        qs = qs.filter(created_at__gte=since)
    return qs


def pull_get_for_agent(*, agent: Agent, pull_id: str) -> KnowledgePullRequest | None:
    """A KPR the agent may see; None for unknown ids and other tenants' KPRs alike."""
    return (
        KnowledgePullRequest.objects.filter(pk=pull_id, namespace__in=agent.namespaces.all())
        .select_related("namespace", "agent")
        .prefetch_related("operations", "review_events")
        .first()
    )


def pull_lock(*, pull_id: str) -> KnowledgePullRequest:
    """Row-lock a KPR for a status change (review, merge). Taken before any subject lock."""
    # of=self: locking the joined namespace row too would serialise every merge and review of
    # a namespace, and block new KPRs in it (their foreign key check needs a share lock).
    return (
        KnowledgePullRequest.objects.select_for_update(of=("self",))
        .select_related("namespace")
        .get(pk=pull_id)
    )
