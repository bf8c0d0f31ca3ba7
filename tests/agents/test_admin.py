"""The admin revokes agents and tokens through the audited services; it never edits a token."""

from __future__ import annotations

import pytest

from memorypr.agents.models import Agent, AgentToken
from memorypr.agents.services import reviewer_create
from memorypr.audit.models import AuditEvent
from tests.factories import agent_with_token


@pytest.fixture
def admin_client(client, db):  # type: ignore[no-untyped-def]
    reviewer_create(username="root", password="root-password-1", namespaces=["demo"], is_admin=True)
    client.login(username="root", password="root-password-1")
    return client


@pytest.mark.django_db
def test_the_admin_revokes_an_agent_and_its_tokens(admin_client):
    # given an agent with a token
    agent, _ = agent_with_token(name="crm-bot")
    # when the admin's action revokes it
    response = admin_client.post(
        "/admin/agents/agent/", {"action": "revoke", "_selected_action": [agent.pk]}, follow=True
    )
    # then the agent is inactive, its token revoked, and the admin named in the audit event
    assert response.status_code == 200
    assert not Agent.objects.get(pk=agent.pk).is_active
    assert AgentToken.objects.get(agent=agent).revoked_at is not None
    assert AuditEvent.objects.get(event_type="agent.revoked").actor == "admin:root"


@pytest.mark.django_db
def test_the_admin_revokes_single_tokens(admin_client):
    # given an agent with two tokens
    agent, _ = agent_with_token(name="crm-bot")
    agent_with_token(name="crm-bot")
    first, second = AgentToken.objects.filter(agent=agent).order_by("pk")
    # when one is revoked
    admin_client.post("/admin/agents/agenttoken/", {"action": "revoke", "_selected_action": [first.pk]})
    # then only that one, and the agent stays active
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.revoked_at is not None and second.revoked_at is None
    assert Agent.objects.get(pk=agent.pk).is_active
    event = AuditEvent.objects.get(event_type="agent.token_revoked")
    assert event.payload["tokenPrefix"] == first.prefix and event.actor == "admin:root"


@pytest.mark.django_db
def test_the_admin_cannot_add_change_or_delete_a_token(admin_client):
    agent, _ = agent_with_token(name="crm-bot")
    token = AgentToken.objects.get(agent=agent)
    assert admin_client.get("/admin/agents/agenttoken/add/").status_code == 403
    assert admin_client.get(f"/admin/agents/agenttoken/{token.pk}/delete/").status_code == 403
    page = admin_client.get(f"/admin/agents/agenttoken/{token.pk}/change/")
    assert page.status_code == 200
    assert token.token_hash not in page.content.decode()
