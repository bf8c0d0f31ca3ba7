"""Which namespaces a request works in: the database scope of its agent or reviewer, and the one it names."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request

from memorypr.agents.models import Agent, Namespace
from memorypr.agents.selectors import agent_namespace_resolve
from memorypr.common.db.tenancy import tenancy_scope_clear_if_connected, tenancy_scope_set


def tenancy_scope_for_reviewer(*, user: Any) -> None:
    """A reviewer sees the namespaces of their memberships; a superuser sees every namespace."""
    if getattr(user, "is_superuser", False):
        tenancy_scope_set(namespaces=(), all_namespaces=True)
        return
    tenancy_scope_set(
        namespaces=Namespace.objects.filter(reviewers__user_id=user.pk).values_list("name", flat=True)
    )


class TenancyScopeMiddleware:
    """Scopes the database connection to the request's logged-in reviewer (dashboard, admin).

    A request starts with no scope at all, so an anonymous request sees no tenant row; the
    API's token authentication scopes the request to its agent instead.
    """

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: Any) -> Any:
        tenancy_scope_clear_if_connected()
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            tenancy_scope_for_reviewer(user=user)
        return self.get_response(request)


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
