from __future__ import annotations

from django.db.models import QuerySet

from memorypr.agents.models import Agent, Namespace


def agent_namespaces(*, agent: Agent) -> QuerySet[Namespace]:
    return agent.namespaces.all()


def agent_namespace_resolve(*, agent: Agent, name: str | None) -> Namespace | None:
    """The namespace an agent names, or its only one when it names none; None when not allowed."""
    spaces = list(agent.namespaces.all())
    if name is None or name == "":
        return spaces[0] if len(spaces) == 1 else None
    return next((ns for ns in spaces if ns.name == name), None)
