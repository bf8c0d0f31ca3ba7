"""Builders for fact-store tests: KPRs submitted through pull_submit and approved by a system review."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from memorypr.agents.models import Agent, Namespace
from memorypr.common.locks import lock_pull
from memorypr.facts.models import FactStatus, FactVersion
from memorypr.facts.services import MergeOutcome, pull_merge
from memorypr.pulls.models import KnowledgePullRequest, MergeStatus, ReviewEvent
from memorypr.pulls.services import pull_record_review, pull_submit
from memorypr.pulls.specs import OperationSpec, PullSpec

SUBJECT = "user-1"


def op(
    action: str,
    key: str,
    new: Any = None,
    *,
    old: Any = None,
    category: str = "user_profile",
    confidence: float = 0.9,
    **extra: Any,
) -> OperationSpec:
    return OperationSpec(
        action=action,
        category=category,
        key=key,
        confidence=confidence,
        old_value=old,
        new_value=new,
        evidence={"rawMessageQuote": f"about {key}", "timestamp": 1732000000000},
        **extra,
    )


def create(key: str, value: Any, **extra: Any) -> OperationSpec:
    return op("CREATE", key, value, **extra)


def update(key: str, old: Any, new: Any, **extra: Any) -> OperationSpec:
    return op("UPDATE", key, new, old=old, **extra)


def delete(key: str, old: Any, **extra: Any) -> OperationSpec:
    return op("DELETE", key, old=old, **extra)


def submit(
    agent: Agent, namespace: Namespace, *ops: OperationSpec, subject: str = SUBJECT
) -> KnowledgePullRequest:
    pull, created = pull_submit(
        agent=agent,
        namespace=namespace,
        spec=PullSpec(subject=subject, operations=list(ops), proposed_by="tests"),
    )
    assert created
    return pull


def approve(pull: KnowledgePullRequest, *, excluded: list[int] | None = None, kind: str = "system") -> None:
    with transaction.atomic():
        locked = lock_pull(pull_id=str(pull.pk))
        pull_record_review(
            pull=locked,
            reviewer_kind=kind,
            reviewer="tests",
            verdict=ReviewEvent.Verdict.APPROVE,
            status_after="APPROVED",
            reasons="approved by the test",
            excluded_operations=excluded,
        )


def approved(
    agent: Agent, namespace: Namespace, *ops: OperationSpec, subject: str = SUBJECT
) -> KnowledgePullRequest:
    pull = submit(agent, namespace, *ops, subject=subject)
    approve(pull)
    return pull


def merge(pull: KnowledgePullRequest) -> MergeOutcome:
    outcome = pull_merge(pull_id=str(pull.pk))
    pull.refresh_from_db()
    return outcome


def merged(
    agent: Agent, namespace: Namespace, *ops: OperationSpec, subject: str = SUBJECT
) -> KnowledgePullRequest:
    pull = approved(agent, namespace, *ops, subject=subject)
    outcome = merge(pull)
    assert outcome.merge_status == MergeStatus.MERGED, pull.merge_feedback
    return pull


def active(namespace: Namespace, key: str, *, subject: str = SUBJECT) -> FactVersion | None:
    return FactVersion.objects.filter(
        namespace=namespace, subject=subject, key=key, status=FactStatus.ACTIVE
    ).first()


def versions(namespace: Namespace, key: str, *, subject: str = SUBJECT) -> list[FactVersion]:
    return list(FactVersion.objects.filter(namespace=namespace, subject=subject, key=key).order_by("version"))
