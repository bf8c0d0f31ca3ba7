from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import QuerySet
from django.utils import timezone

from memorypr.agents.models import Agent
from memorypr.pulls.models import KnowledgePullRequest, MergeStatus, ReviewStatus


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


def pull_ids_awaiting_merge(*, older_than: timedelta, limit: int) -> list[str]:
    """APPROVED KPRs still UNMERGED some time after their approval: a lost merge hand-off."""
    cutoff = timezone.now() - older_than
    ids = (
        KnowledgePullRequest.objects.filter(
            review_status=ReviewStatus.APPROVED, merge_status=MergeStatus.UNMERGED, reviewed_at__lt=cutoff
        )
        .order_by("reviewed_at")
        .values_list("id", flat=True)[:limit]
    )
    return [str(pull_id) for pull_id in ids]
