from __future__ import annotations

import hashlib
from dataclasses import asdict
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from memorypr.agents.models import Agent, Namespace
from memorypr.audit.services import audit_record
from memorypr.common.canonical import canonical_json
from memorypr.common.locks import lock_pull
from memorypr.common.prefetch import prefetched_set
from memorypr.pulls.models import KnowledgePullRequest, Operation, ReviewComment, ReviewEvent, ReviewStatus
from memorypr.pulls.signals import pull_announce_on_commit, pull_approved, pull_submitted
from memorypr.pulls.specs import PullSpec


class IdempotencyConflict(Exception):
    """The idempotency key was used before with a different payload."""

    def __init__(self, existing: KnowledgePullRequest) -> None:
        super().__init__(f"idempotencyKey already used for KPR {existing.id} with a different payload")
        self.existing = existing


def _request_hash(*, namespace: Namespace, spec: PullSpec) -> str:
    body: dict[str, Any] = asdict(spec)
    body.pop("idempotency_key")
    body["namespace"] = namespace.name
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()


def pull_submit(
    *, agent: Agent, namespace: Namespace, spec: PullSpec, reverts: KnowledgePullRequest | None = None
) -> tuple[KnowledgePullRequest, bool]:
    """Store a KPR and its operations, audit it, and announce `pull_submitted` after commit.

    Returns (pull, created). The same idempotency key with the same payload returns the
    first KPR; with a different payload it raises IdempotencyConflict.
    """
    request_hash = _request_hash(namespace=namespace, spec=spec)
    # The insert comes first and the unique (agent, idempotency key) index answers whether the
    # key is new: a new key, by far the common case, costs no read before it.
    try:
        with transaction.atomic():
            pull = _pull_insert(
                agent=agent, namespace=namespace, spec=spec, request_hash=request_hash, reverts=reverts
            )
    except IntegrityError:
        if not spec.idempotency_key:
            raise
        # The key was used before (a retry, or a concurrent request that won): answer with its KPR.
        existing = _pull_for_idempotency_key(agent=agent, key=spec.idempotency_key, request_hash=request_hash)
        if existing is None:
            raise
        return existing, False
    return pull, True


def _pull_for_idempotency_key(*, agent: Agent, key: str, request_hash: str) -> KnowledgePullRequest | None:
    existing = KnowledgePullRequest.objects.filter(agent=agent, idempotency_key=key).first()
    if existing is not None and existing.request_hash != request_hash:
        raise IdempotencyConflict(existing)
    return existing


def _pull_insert(
    *,
    agent: Agent,
    namespace: Namespace,
    spec: PullSpec,
    request_hash: str,
    reverts: KnowledgePullRequest | None,
) -> KnowledgePullRequest:
    pull = KnowledgePullRequest.objects.create(
        namespace=namespace,
        subject=spec.subject,
        agent=agent,
        proposed_by=spec.proposed_by or agent.name,
        source_session_id=spec.source_session_id,
        idempotency_key=spec.idempotency_key,
        request_hash=request_hash,
        reverts=reverts,
    )
    # An OperationSpec's fields are the Operation model's content fields, by name.
    operations = Operation.objects.bulk_create(
        Operation(pull=pull, position=position, **asdict(op)) for position, op in enumerate(spec.operations)
    )
    # A KPR's operations never change: these rows are what a read would return.
    prefetched_set(pull, "operations", operations)
    audit_record(
        event_type="pull.submitted",
        actor=f"agent:{agent.name}",
        namespace=namespace.name,
        pull_id=pull.id,
        subject=pull.subject,
        payload={
            "proposedBy": pull.proposed_by,
            "operations": [
                {"action": op.action, "category": op.category, "key": op.key} for op in spec.operations
            ],
            "requestHash": request_hash,
            "reverts": str(reverts.id) if reverts else None,
        },
    )
    pull_announce_on_commit(signal=pull_submitted, pull_id=str(pull.id))
    return pull


def pull_record_review(
    *,
    pull: KnowledgePullRequest,
    reviewer_kind: str,
    reviewer: str,
    verdict: str,
    status_after: str,
    reasons: str,
    findings: list[dict[str, Any]] | None = None,
    excluded_operations: list[int] | None = None,
    model: str = "",
    latency_ms: int | None = None,
    tokens: int | None = None,
    update_status: bool = True,
) -> ReviewEvent:
    """Append a review event; when `update_status`, move the KPR's current status with it.

    Every status change of a review goes through here, so this is where an approval is
    announced (`pull_approved`, after commit): the automatic review, a human decision and
    a re-review alike. The caller holds a row lock on the KPR (memorypr.common.locks.lock_pull).
    """
    event = ReviewEvent.objects.create(
        pull=pull,
        reviewer_kind=reviewer_kind,
        reviewer=reviewer,
        verdict=verdict,
        status_after=status_after,
        findings=findings or [],
        reasons=reasons,
        excluded_operations=excluded_operations or [],
        model=model,
        latency_ms=latency_ms,
        tokens=tokens,
    )
    previous = pull.review_status
    if update_status:
        pull.review_status = status_after
        pull.reviewer_feedback = reasons
        pull.reviewed_at = timezone.now() if status_after != ReviewStatus.PENDING else None
        pull.save(update_fields=["review_status", "reviewer_feedback", "reviewed_at"])
    audit_record(
        event_type="pull.reviewed",
        actor=f"{reviewer_kind}:{reviewer}",
        namespace=pull.namespace.name,
        pull_id=pull.id,
        subject=pull.subject,
        payload={
            "verdict": verdict,
            "from": previous,
            "to": pull.review_status,
            "reasons": reasons,
            "excludedOperations": excluded_operations or [],
            "model": model,
        },
    )
    if update_status and status_after == ReviewStatus.APPROVED:
        pull_announce_on_commit(signal=pull_approved, pull_id=str(pull.id))
    return event


class ReviewNotAllowed(Exception):
    """The KPR is not in a state a human can decide (e.g. already REJECTED or merged)."""


def pull_human_decide(
    *,
    pull_id: str,
    reviewer: str,
    verdict: str,
    reason: str,
    excluded_operations: list[int] | None = None,
) -> KnowledgePullRequest:
    """A human's verdict on a KPR in the queue: APPROVE (optionally excluding operations) or REJECT.

    An approval is announced after commit (pull_record_review), which hands it to the merge.
    A reason is required either way, so the proposer and the audit trail learn why.
    """
    if verdict not in (ReviewEvent.Verdict.APPROVE, ReviewEvent.Verdict.REJECT):
        raise ValueError(f"unknown verdict {verdict!r}")
    if not reason.strip():
        raise ValueError("a reason is required")
    with transaction.atomic():
        pull = lock_pull(pull_id=pull_id)
        if pull.review_status not in (ReviewStatus.NEEDS_HUMAN_REVIEW, ReviewStatus.PENDING):
            raise ReviewNotAllowed(f"KPR {pull.id} is {pull.review_status}; only queued KPRs can be decided")
        positions = set(pull.operations.values_list("position", flat=True))
        excluded = sorted(set(excluded_operations or []))
        if not set(excluded) <= positions:
            raise ValueError(f"excluded operations {sorted(set(excluded) - positions)} are not in this KPR")
        if verdict == ReviewEvent.Verdict.APPROVE and set(excluded) == positions:
            raise ValueError("approving with every operation excluded is a rejection; reject instead")
        status_after = (
            ReviewStatus.APPROVED if verdict == ReviewEvent.Verdict.APPROVE else ReviewStatus.REJECTED
        )
        pull_record_review(
            pull=pull,
            reviewer_kind=ReviewEvent.ReviewerKind.HUMAN,
            reviewer=reviewer,
            verdict=verdict,
            status_after=status_after,
            reasons=reason,
            excluded_operations=excluded,
        )
    return pull


COMMENT_MAX_CHARS = 4000


def pull_comment_add(
    *, pull_id: str, author: str, body: str, operation_position: int | None = None
) -> ReviewComment:
    """A reviewer's comment on a KPR or one of its operations: stored, audited, read by the agent."""
    text = body.strip()
    if not text:
        raise ValueError("a comment cannot be empty")
    if len(text) > COMMENT_MAX_CHARS:
        raise ValueError(f"a comment holds at most {COMMENT_MAX_CHARS} characters")
    with transaction.atomic():
        pull = KnowledgePullRequest.objects.select_related("namespace").get(pk=pull_id)
        if (
            operation_position is not None
            and not pull.operations.filter(position=operation_position).exists()
        ):
            raise ValueError(f"operation {operation_position} is not in this KPR")
        comment = ReviewComment.objects.create(
            pull=pull, operation_position=operation_position, author=author, body=text
        )
        audit_record(
            event_type="pull.commented",
            actor=author,
            namespace=pull.namespace.name,
            pull_id=pull.id,
            subject=pull.subject,
            payload={"operation": operation_position, "body": text},
        )
    return comment
