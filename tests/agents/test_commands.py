from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from memorypr.agents.models import Agent, AgentToken, ReviewerMembership
from memorypr.audit.models import AuditEvent


@pytest.mark.django_db
def test_create_agent_prints_a_working_token_stored_hashed():
    # when
    out = io.StringIO()
    call_command("create_agent", "--name", "crm-bot", "--namespace", "acme", "--trust", "low", stdout=out)
    token = out.getvalue().strip().splitlines()[-1].split()[-1]
    # then
    agent = Agent.objects.get(name="crm-bot")
    assert agent.trust == "low"
    assert list(agent.namespaces.values_list("name", flat=True)) == ["acme"]
    assert not AgentToken.objects.filter(token_hash=token).exists()  # only the hash is stored
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert client.get("/api/v1/pulls").status_code == 200
    event = AuditEvent.objects.get(event_type="agent.created")
    assert event.payload["agent"] == "crm-bot"
    assert token not in str(event.payload)


@pytest.mark.django_db
def test_create_reviewer_scopes_the_user(django_user_model):
    call_command("create_reviewer", "--username", "ann", "--password", "s3cret-pass", "--namespace", "acme",
                 stdout=io.StringIO())  # fmt: skip
    user = django_user_model.objects.get(username="ann")
    assert user.check_password("s3cret-pass")
    assert not user.is_superuser
    assert ReviewerMembership.objects.filter(user=user, namespace__name="acme").exists()
    call_command("create_reviewer", "--username", "root", "--password", "s3cret-pass", "--namespace", "acme",
                 "--admin", stdout=io.StringIO())  # fmt: skip
    assert django_user_model.objects.get(username="root").is_superuser
