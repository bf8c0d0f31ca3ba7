from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework import exceptions

from memorypr.agents.models import Agent, AgentToken
from memorypr.audit.models import AuditEvent
from memorypr.common.db.tenancy import tenancy_scope_current, tenancy_scope_set
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


def _authenticate(token: str):  # type: ignore[no-untyped-def]
    from rest_framework.test import APIRequestFactory

    from memorypr.agents.authentication import AgentTokenAuthentication

    request = APIRequestFactory().get("/api/v1/pulls", HTTP_AUTHORIZATION=f"Bearer {token}")
    return AgentTokenAuthentication().authenticate(request)


@pytest.mark.django_db
def test_authentication_scopes_the_connection_in_the_statement_that_reads_the_token():
    # given an agent in two namespaces whose token was used a moment ago
    agent, token = agent_with_token(name="two-spaces", namespaces=["beta", "alpha"])
    AgentToken.objects.filter(agent=agent).update(last_used_at=timezone.now())
    # when it authenticates
    with CaptureQueriesContext(connection) as queries:
        authenticated, _ = _authenticate(token)
    # then one statement read the token and scoped the connection to exactly its namespaces
    assert authenticated.pk == agent.pk
    assert len(queries) == 1
    assert tenancy_scope_current() == (["alpha", "beta"], False)


@pytest.mark.django_db
def test_a_refused_token_leaves_the_connection_without_a_scope():
    # given a revoked token, and a connection scoped to everything by an earlier request
    agent, token = agent_with_token(name="revoked-scope", namespaces=["demo"])
    AgentToken.objects.filter(agent=agent).update(revoked_at=timezone.now())
    tenancy_scope_set(namespaces=(), all_namespaces=True)
    # when it authenticates, then it is refused, and the connection sees no namespace at all
    with pytest.raises(exceptions.AuthenticationFailed):
        _authenticate(token)
    assert tenancy_scope_current() == ([], False)
    # and the refusal is audited
    assert AuditEvent.objects.filter(event_type="agent.token_refused", actor="agent:revoked-scope").exists()
