from __future__ import annotations

import hashlib
import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser
from django.db import transaction

from memorypr.agents.models import Agent, AgentToken, Namespace, ReviewerMembership
from memorypr.audit.services import audit_record

TOKEN_PREFIX = "mpr_"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def namespace_get_or_create(*, name: str) -> Namespace:
    namespace, _ = Namespace.objects.get_or_create(name=name)
    return namespace


@transaction.atomic
def agent_create(
    *, name: str, namespaces: list[str], trust: str = Agent.Trust.NORMAL, token: str | None = None
) -> tuple[Agent, str]:
    """Create an agent (or extend an existing one's namespaces) and issue it a new token.

    Returns the plain token: it is never stored and cannot be shown again.
    """
    agent, created = Agent.objects.get_or_create(name=name, defaults={"trust": trust})
    if not created and agent.trust != trust:
        agent.trust = trust
        agent.save(update_fields=["trust"])
    spaces = [namespace_get_or_create(name=ns) for ns in namespaces]
    agent.namespaces.add(*spaces)
    plain = token or TOKEN_PREFIX + secrets.token_urlsafe(32)
    AgentToken.objects.get_or_create(
        token_hash=token_hash(plain), defaults={"agent": agent, "prefix": plain[:12]}
    )
    audit_record(
        event_type="agent.token_issued" if not created else "agent.created",
        actor="system:create_agent",
        namespace=spaces[0].name if spaces else "",
        payload={
            "agent": agent.name,
            "trust": agent.trust,
            "namespaces": sorted(namespaces),
            "tokenPrefix": plain[:12],
        },
    )
    return agent, plain


def agent_system(*, namespace: Namespace) -> Agent:
    """The `system` proposer used by background jobs; scoped to every namespace it works in."""
    agent, _ = Agent.objects.get_or_create(name=Agent.SYSTEM_NAME, defaults={"trust": Agent.Trust.HIGH})
    agent.namespaces.add(namespace)
    return agent


@transaction.atomic
def reviewer_create(
    *, username: str, password: str, namespaces: list[str], is_admin: bool = False
) -> AbstractUser:
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username)
    user.set_password(password)
    user.is_staff = True  # reviewers may open the admin's audit browser
    user.is_superuser = is_admin or user.is_superuser
    user.save()
    for ns in namespaces:
        ReviewerMembership.objects.get_or_create(user=user, namespace=namespace_get_or_create(name=ns))
    audit_record(
        event_type="reviewer.created" if created else "reviewer.updated",
        actor="system:create_reviewer",
        namespace=namespaces[0] if namespaces else "",
        payload={"username": username, "namespaces": sorted(namespaces), "admin": bool(user.is_superuser)},
    )
    return user  # type: ignore[return-value]
