"""Which namespace a request works in: the one it names, or the agent's only one."""

from __future__ import annotations

from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request

from memorypr.agents.models import Agent, Namespace
from memorypr.agents.selectors import agent_namespace_resolve


def request_agent(request: Request) -> Agent:
    assert isinstance(request.user, Agent)
    return request.user


def request_namespace(*, agent: Agent, requested: str | None) -> Namespace:
    """Same rules as KPR submission: 400 when ambiguous, 403 when the agent is not scoped there."""
    namespace = agent_namespace_resolve(agent=agent, name=requested or None)
    if namespace is None:
        if not requested:
            raise ValidationError({"namespace": ["Required: this agent works in several namespaces."]})
        raise PermissionDenied(f"Agent '{agent.name}' is not scoped to namespace '{requested}'.")
    return namespace
