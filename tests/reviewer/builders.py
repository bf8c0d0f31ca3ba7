"""Builders for the reviewer tests: rule views in memory, KPRs and current facts in the database."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from memorypr.agents.models import Agent, Namespace
from memorypr.facts.models import FactStatus, FactVersion
from memorypr.pulls.models import KnowledgePullRequest
from memorypr.pulls.services import pull_submit
from memorypr.pulls.specs import OperationSpec, PullSpec
from reviewer.policy import DEFAULT_POLICY
from reviewer.rules.base import CurrentFact, OperationView, PolicyView, PullView


def policy(**overrides: Any) -> PolicyView:
    return replace(DEFAULT_POLICY, **overrides)


def pull_view(
    *,
    transcript: str | None = None,
    agent_trust: str = "normal",
    agent_name: str = "proposer",
    pulls_last_hour: int = 1,
    session_id: str = "session-1",
    **policy_overrides: Any,
) -> PullView:
    return PullView(
        pull_id="00000000-0000-0000-0000-000000000001",
        namespace_id=1,
        namespace="demo",
        subject="user-1",
        agent_id=1,
        agent_name=agent_name,
        agent_trust=agent_trust,
        session_id=session_id,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        policy=policy(**policy_overrides),
        loaders={"transcript": lambda: transcript, "agent_pulls_last_hour": lambda: pulls_last_hour},
    )


def current(
    value: Any, *, version: int = 1, importance: float = 0.5, confidence: float = 0.9, valid_to: Any = None
) -> CurrentFact:
    return CurrentFact(
        value=value, version=version, importance=importance, confidence=confidence, valid_to=valid_to
    )


def op_view(*, quote: str | None = "I moved to Shenzhen last month", **overrides: Any) -> OperationView:
    """The seed's operation by default: UPDATE home_city Beijing → Shenzhen, Beijing current."""
    fields: dict[str, Any] = {
        "position": 0,
        "action": "UPDATE",
        "category": "user_profile",
        "key": "home_city",
        "old_value": "Beijing",
        "new_value": "Shenzhen",
        "confidence": 0.92,
        "importance": None,
        "evidence": {"rawMessageQuote": quote, "timestamp": 1732096800000} if quote is not None else None,
        "valid_from": None,
        "valid_to": None,
        "derived_from": [],
        "relation": "",
        "current": current("Beijing"),
    }
    fields.update(overrides)
    return OperationView(**fields)


def op_spec(**overrides: Any) -> OperationSpec:
    fields: dict[str, Any] = {
        "action": "UPDATE",
        "category": "user_profile",
        "key": "home_city",
        "old_value": "Beijing",
        "new_value": "Shenzhen",
        "confidence": 0.92,
        "evidence": {"rawMessageQuote": "I moved to Shenzhen last month", "timestamp": 1732096800000},
    }
    quote = overrides.pop("quote", None)
    fields.update(overrides)
    if quote is not None:
        fields["evidence"] = {"rawMessageQuote": quote, "timestamp": 1732096800000}
    return OperationSpec(**fields)


def submit(
    agent: Agent,
    *ops: OperationSpec,
    namespace: str = "demo",
    subject: str = "user-1",
    session_id: str = "session-1",
) -> KnowledgePullRequest:
    """A stored PENDING KPR (the review is not run: tests call it explicitly)."""
    spec = PullSpec(subject=subject, operations=list(ops) or [op_spec()], source_session_id=session_id)
    pull, created = pull_submit(agent=agent, namespace=Namespace.objects.get(name=namespace), spec=spec)
    assert created
    return pull


def fact(
    *,
    key: str,
    value: Any,
    namespace: str = "demo",
    subject: str = "user-1",
    category: str = "user_profile",
    importance: float = 0.5,
    version: int = 1,
) -> FactVersion:
    """A current (active) fact, written directly: the state a merge would have left."""
    return FactVersion.objects.create(
        namespace=Namespace.objects.get(name=namespace),
        subject=subject,
        category=category,
        key=key,
        value=value,
        version=version,
        status=FactStatus.ACTIVE,
        confidence=0.9,
        importance=importance,
    )
