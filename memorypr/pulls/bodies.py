"""Response bodies of KPRs, written out for the hot paths (submit, read, list).

`PullOutSerializer` and `PullDetailOutSerializer` describe the same format for the OpenAPI
schema; tests/pulls/test_bodies.py holds each body equal to its serializer's output, so the
two cannot drift apart.
"""

from __future__ import annotations

from typing import Any

from memorypr.common.wire import current_zone, datetime_text, float_or_none, int_or_none, uuid_text
from memorypr.pulls.models import KnowledgePullRequest, Operation, ReviewComment, ReviewEvent


def operation_body(operation: Operation) -> dict[str, Any]:
    return {
        "action": operation.action,
        "category": operation.category,
        "key": operation.key,
        "oldValue": operation.old_value,
        "newValue": operation.new_value,
        "confidence": float_or_none(operation.confidence),
        "importance": float_or_none(operation.importance),
        "evidence": operation.evidence,
        "validFrom": datetime_text(operation.valid_from),
        "validTo": datetime_text(operation.valid_to),
        "derivedFrom": None
        if operation.derived_from is None
        else [str(key) for key in operation.derived_from],
        "relation": operation.relation,
    }


def review_event_body(event: ReviewEvent) -> dict[str, Any]:
    return {
        "createdAt": datetime_text(event.created_at),
        "reviewerKind": event.reviewer_kind,
        "reviewer": event.reviewer,
        "verdict": event.verdict,
        "statusAfter": event.status_after,
        "findings": event.findings,
        "reasons": event.reasons,
        "excludedOperations": (
            None if event.excluded_operations is None else [int(i) for i in event.excluded_operations]
        ),
        "model": event.model,
        "latencyMs": int_or_none(event.latency_ms),
        "tokens": int_or_none(event.tokens),
    }


def review_comment_body(comment: ReviewComment) -> dict[str, Any]:
    return {
        "operation": int_or_none(comment.operation_position),
        "author": comment.author,
        "body": comment.body,
        "createdAt": datetime_text(comment.created_at),
    }


def pull_body(pull: KnowledgePullRequest, *, reviews: bool = False) -> dict[str, Any]:
    """A KPR as `PullOutSerializer` writes it; with `reviews`, as `PullDetailOutSerializer`."""
    zone = current_zone()
    body = {
        "id": uuid_text(pull.id),
        "createdAt": datetime_text(pull.created_at, zone=zone),
        "namespace": pull.namespace.name,
        "subject": pull.subject,
        "sourceSessionId": pull.source_session_id,
        "proposedBy": pull.proposed_by,
        "agent": pull.agent.name,
        "idempotencyKey": pull.idempotency_key,
        "operations": [operation_body(operation) for operation in pull.operations.all()],
        "reviewStatus": pull.review_status,
        "reviewerFeedback": pull.reviewer_feedback,
        "reviewerFeedbackDetail": [review_comment_body(comment) for comment in pull.comments.all()],
        "reviewedAt": datetime_text(pull.reviewed_at, zone=zone),
        "mergeStatus": pull.merge_status,
        "mergeFeedback": pull.merge_feedback,
        "mergedAt": datetime_text(pull.merged_at, zone=zone),
        "reverts": uuid_text(pull.reverts_id),
    }
    if reviews:
        body["reviews"] = [review_event_body(event) for event in pull.review_events.all()]
    return body
