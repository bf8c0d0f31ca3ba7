from __future__ import annotations

from django.db import connection
from django.db.models import QuerySet

from memorypr.agents.models import Agent, AgentToken, Namespace
from memorypr.common.db.tenancy import ALL_NAMESPACES_SETTING, NAMESPACES_SETTING
from memorypr.common.prefetch import prefetched_set

# The token, its agent and the agent's namespaces (by name, as `agent.namespaces` orders them)
# in one statement: it runs on every API request, so it is written once, not compiled each time.
_TOKEN_SQL = """
    SELECT t.id AS token_id, t.prefix, t.created_at AS token_created_at, t.last_used_at,
           t.revoked_at, t.expires_at,
           a.id AS agent_id, a.name AS agent_name, a.trust, a.is_active, a.created_at AS agent_created_at,
           coalesce(array_agg(n.id ORDER BY n.name) FILTER (WHERE n.id IS NOT NULL), '{}') AS ns_ids,
           coalesce(array_agg(n.name ORDER BY n.name) FILTER (WHERE n.id IS NOT NULL), '{}') AS ns_names,
           coalesce(array_agg(n.created_at ORDER BY n.name) FILTER (WHERE n.id IS NOT NULL), '{}') AS ns_created
    FROM agents_agenttoken t
    JOIN agents_agent a ON a.id = t.agent_id
    LEFT JOIN agents_agent_namespaces an ON an.agent_id = a.id
    LEFT JOIN agents_namespace n ON n.id = an.namespace_id
    WHERE t.token_hash = %s
    GROUP BY t.id, a.id
"""
# The same, and the connection scoped to the agent's namespaces (row-level security) by the
# same round trip: the array's text form is what the policies read back as text[].
_TOKEN_SCOPING_SQL = f"""
    WITH found AS ({_TOKEN_SQL})
    SELECT found.*, set_config('{NAMESPACES_SETTING}', found.ns_names::text, false),
           set_config('{ALL_NAMESPACES_SETTING}', 'off', false)
    FROM found
"""


def agent_token_by_hash(*, token_hash: str, scope_connection: bool = False) -> AgentToken | None:
    """The token with this hash, its agent loaded, and the agent's namespaces prefetched.

    With `scope_connection`, the same statement scopes this connection to those namespaces,
    as `tenancy_scope_set` would (authentication's one round trip); the caller clears the
    scope again if it refuses the token.
    """
    with connection.cursor() as cursor:
        cursor.execute(_TOKEN_SCOPING_SQL if scope_connection else _TOKEN_SQL, [token_hash])
        row = cursor.fetchone()
    if row is None:
        return None
    token_id, prefix, created, last_used, revoked, expires = row[:6]
    agent_id, name, trust, is_active, agent_created, ns_ids, ns_names, ns_created = row[6:14]
    agent = Agent(id=agent_id, name=name, trust=trust, is_active=is_active, created_at=agent_created)
    agent._state.adding = False
    prefetched_set(
        agent,
        "namespaces",
        (
            Namespace(id=pk, name=ns_name, created_at=at)
            for pk, ns_name, at in zip(ns_ids, ns_names, ns_created, strict=True)
        ),
    )
    token = AgentToken(
        id=token_id,
        agent=agent,
        token_hash=token_hash,
        prefix=prefix,
        created_at=created,
        last_used_at=last_used,
        revoked_at=revoked,
        expires_at=expires,
    )
    token._state.adding = False
    return token


def agent_namespaces(*, agent: Agent) -> QuerySet[Namespace]:
    return agent.namespaces.all()


def agent_namespace_resolve(*, agent: Agent, name: str | None) -> Namespace | None:
    """The namespace an agent names, or its only one when it names none; None when not allowed."""
    spaces = list(agent.namespaces.all())
    if name is None or name == "":
        return spaces[0] if len(spaces) == 1 else None
    return next((ns for ns in spaces if ns.name == name), None)
