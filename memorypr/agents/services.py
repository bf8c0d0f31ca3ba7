from __future__ import annotations

import hashlib
import logging
import secrets
from datetime import datetime, timedelta
from typing import Literal

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from memorypr.agents.conf import conf
from memorypr.agents.models import Agent, AgentToken, Namespace, ReviewerMembership
from memorypr.audit.services import audit_record

logger = logging.getLogger(__name__)

TOKEN_PREFIX = "mpr_"

# How long a new token lives: the configured default, a chosen span, or None (never expires,
# only when chosen explicitly).
Expiry = timedelta | None | Literal["default"]
DEFAULT_EXPIRY: Literal["default"] = "default"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def namespace_get_or_create(*, name: str) -> Namespace:
    namespace, _ = Namespace.objects.get_or_create(name=name)
    return namespace


def token_expiry(*, expires_in: Expiry, now: datetime) -> datetime | None:
    if expires_in == DEFAULT_EXPIRY:
        return now + timedelta(days=conf("MEMORYPR_TOKEN_TTL_DAYS"))
    return None if expires_in is None else now + expires_in


def _token_issue(*, agent: Agent, expires_in: Expiry, token: str | None = None) -> tuple[AgentToken, str]:
    plain = token or TOKEN_PREFIX + secrets.token_urlsafe(32)
    issued, _ = AgentToken.objects.get_or_create(
        token_hash=token_hash(plain),
        defaults={
            "agent": agent,
            "prefix": plain[:12],
            "expires_at": token_expiry(expires_in=expires_in, now=timezone.now()),
        },
    )
    return issued, plain


def _agent_namespace(agent: Agent) -> str:
    """The namespace an agent's audit events are filed under: its first, by name."""
    first = agent.namespaces.order_by("name").first()
    return first.name if first else ""


@transaction.atomic
def agent_create(
    *,
    name: str,
    namespaces: list[str],
    trust: str = Agent.Trust.NORMAL,
    token: str | None = None,
    expires_in: Expiry = DEFAULT_EXPIRY,
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
    issued, plain = _token_issue(agent=agent, expires_in=expires_in, token=token)
    audit_record(
        event_type="agent.token_issued" if not created else "agent.created",
        actor="system:create_agent",
        namespace=spaces[0].name if spaces else "",
        payload={
            "agent": agent.name,
            "trust": agent.trust,
            "namespaces": sorted(namespaces),
            "tokenPrefix": plain[:12],
            "expiresAt": issued.expires_at,
        },
    )
    return agent, plain


class AgentRevoked(Exception):
    """The agent is revoked (inactive): a new token would not work; reactivate it first."""


@transaction.atomic
def agent_revoke(*, agent: Agent, actor: str, reason: str = "") -> list[str]:
    """Deactivate an agent and revoke every token it holds; returns the revoked tokens' prefixes.

    Idempotent: revoking a revoked agent revokes nothing more and records that nothing changed.
    """
    now = timezone.now()
    live = AgentToken.objects.filter(agent=agent, revoked_at__isnull=True)
    prefixes = sorted(live.values_list("prefix", flat=True))
    live.update(revoked_at=now)
    was_active = Agent.objects.filter(pk=agent.pk, is_active=True).update(is_active=False) == 1
    agent.is_active = False
    audit_record(
        event_type="agent.revoked",
        actor=actor,
        namespace=_agent_namespace(agent),
        payload={"agent": agent.name, "wasActive": was_active, "revokedTokens": prefixes, "reason": reason},
    )
    return prefixes


@transaction.atomic
def token_revoke(*, token: AgentToken, actor: str, reason: str = "") -> bool:
    """Revoke one token; False when it was revoked already (nothing changes)."""
    changed = (
        AgentToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now()) == 1
    )
    if changed:
        audit_record(
            event_type="agent.token_revoked",
            actor=actor,
            namespace=_agent_namespace(token.agent),
            payload={"agent": token.agent.name, "tokenPrefix": token.prefix, "reason": reason},
        )
    return changed


@transaction.atomic
def token_rotate(*, agent: Agent, actor: str, expires_in: Expiry = DEFAULT_EXPIRY) -> tuple[AgentToken, str]:
    """Issue the agent a new token and revoke every other one at once; returns the plain new token,
    which is never stored and cannot be shown again."""
    if not Agent.objects.filter(pk=agent.pk, is_active=True).exists():
        raise AgentRevoked(f"agent {agent.name} is revoked; reactivate it before issuing it a token")
    old = AgentToken.objects.filter(agent=agent, revoked_at__isnull=True)
    prefixes = sorted(old.values_list("prefix", flat=True))
    old.update(revoked_at=timezone.now())
    issued, plain = _token_issue(agent=agent, expires_in=expires_in)
    audit_record(
        event_type="agent.token_rotated",
        actor=actor,
        namespace=_agent_namespace(agent),
        payload={
            "agent": agent.name,
            "revokedTokens": prefixes,
            "tokenPrefix": issued.prefix,
            "expiresAt": issued.expires_at,
        },
    )
    return issued, plain


def token_refusal_record(*, token: AgentToken, reason: str) -> None:
    """Audit the use of a token that was refused, in a short transaction of its own: the request
    itself is answered 401 and writes nothing.

    At most one event per token per MEMORYPR_TOKEN_REFUSAL_AUDIT_SECONDS: every refusal costs
    the audit chain's lock, and a client retrying a dead token in a loop must not hold it.
    """
    window = int(conf("MEMORYPR_TOKEN_REFUSAL_AUDIT_SECONDS"))
    try:
        first_in_window = cache.add(f"agents:token-refused:{token.token_hash}", 1, timeout=window)
    except Exception:  # noqa: BLE001 - no cache: audit every refusal rather than none
        logger.warning("cache unavailable; auditing the refused token without a window", exc_info=True)
        first_in_window = True
    if not first_in_window:
        return
    with transaction.atomic():
        audit_record(
            event_type="agent.token_refused",
            actor=f"agent:{token.agent.name}",
            namespace=_agent_namespace(token.agent),
            payload={
                "agent": token.agent.name,
                "tokenPrefix": token.prefix,
                "reason": reason,
                "expiresAt": token.expires_at,
                "revokedAt": token.revoked_at,
            },
        )


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
