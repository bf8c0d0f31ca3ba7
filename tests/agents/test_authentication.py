from __future__ import annotations

import pytest
from django.utils import timezone

from memorypr.agents.models import Agent, AgentToken
from tests.factories import agent_with_token


def _client(api_client, token: str):  # type: ignore[no-untyped-def]
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return api_client


@pytest.mark.django_db
def test_a_valid_token_is_accepted_and_its_use_recorded(api_client):
    agent, token = agent_with_token(name="active-agent", namespaces=["demo"])
    assert _client(api_client, token).get("/api/v1/pulls").status_code == 200
    assert AgentToken.objects.get(agent=agent).last_used_at is not None


@pytest.mark.django_db
def test_a_revoked_token_is_refused(api_client):
    # given an agent whose token was revoked
    agent, token = agent_with_token(name="revoked-agent", namespaces=["demo"])
    AgentToken.objects.filter(agent=agent).update(revoked_at=timezone.now())
    # when it calls the API, then it is refused, and nothing it sends is stored
    client = _client(api_client, token)
    assert client.get("/api/v1/pulls").status_code == 401
    response = client.post("/api/v1/sessions/s1/turns", {"role": "user", "content": "hi"}, format="json")
    assert response.status_code == 401
    assert response.json()["detail"] == "Invalid or revoked token."


@pytest.mark.django_db
def test_an_inactive_agent_is_refused(api_client):
    agent, token = agent_with_token(name="inactive-agent", namespaces=["demo"])
    Agent.objects.filter(pk=agent.pk).update(is_active=False)
    assert _client(api_client, token).get("/api/v1/pulls").status_code == 401


@pytest.mark.django_db
@pytest.mark.parametrize("header", ["Bearer", "Token abc", "Bearer a b", "Basic dXNlcjpwYXNz"])
def test_a_malformed_authorization_header_is_refused(api_client, header):
    api_client.credentials(HTTP_AUTHORIZATION=header)
    assert api_client.get("/api/v1/pulls").status_code == 401
