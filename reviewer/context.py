"""The views the rules and the LLM reviewer read, built once per review."""

from __future__ import annotations

from datetime import timedelta

from memorypr.facts.selectors import fact_get_active
from memorypr.pulls.models import KnowledgePullRequest, Operation
from memorypr.pulls.specs import OPERATION_FIELDS
from reviewer.rules.base import CurrentFact, OperationView, PullView
from reviewer.selectors import (
    agent_pull_count,
    quote_sources_elsewhere,
    review_policy_get,
    transcript_get,
    transcript_turns_get,
)

RATE_WINDOW = timedelta(hours=1)


def operation_view(*, pull: KnowledgePullRequest, op: Operation) -> OperationView:
    fact = fact_get_active(
        namespace_id=pull.namespace_id, subject=pull.subject, category=op.category, key=op.key
    )
    current = (
        CurrentFact(
            value=fact.value, version=fact.version, importance=fact.importance, confidence=fact.confidence
        )
        if fact is not None
        else None
    )
    # The operation's content fields are an OperationSpec's, by name.
    content = {name: getattr(op, name) for name in OPERATION_FIELDS}
    content["derived_from"] = list(op.derived_from or [])
    return OperationView(position=op.position, current=current, **content)


def review_context(*, pull: KnowledgePullRequest) -> tuple[PullView, list[OperationView]]:
    namespace_id, session_id = pull.namespace_id, pull.source_session_id
    view = PullView(
        pull_id=str(pull.id),
        namespace_id=namespace_id,
        namespace=pull.namespace.name,
        subject=pull.subject,
        agent_id=pull.agent_id,
        agent_name=pull.agent.name,
        agent_trust=pull.agent.trust,
        session_id=session_id,
        created_at=pull.created_at,
        policy=review_policy_get(namespace_id=namespace_id),
        loaders={
            "transcript": lambda: transcript_get(namespace_id=namespace_id, session_id=session_id),
            "turns": lambda: transcript_turns_get(namespace_id=namespace_id, session_id=session_id),
            "quote_elsewhere": lambda quote: quote_sources_elsewhere(
                namespace_id=namespace_id, session_id=session_id, quote=quote
            ),
            # The window ends at this KPR, so a re-review later counts the same neighbours.
            "agent_pulls_last_hour": lambda: agent_pull_count(
                agent_id=pull.agent_id,
                namespace_id=namespace_id,
                since=pull.created_at - RATE_WINDOW,
                until=pull.created_at,
            ),
        },
    )
    operations = [operation_view(pull=pull, op=op) for op in pull.operations.order_by("position")]
    return view, operations
