"""Tokens expire and can be revoked or rotated; a dead token is refused (401) and its use audited."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.test import APIClient

from memorypr.agents.models import Agent, AgentToken
from memorypr.agents.services import agent_create, agent_revoke, token_rotate
from memorypr.audit.models import AuditEvent
from memorypr.audit.selectors import audit_chain_verify
from tests.factories import agent_with_token


def api(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def printed_token(out: io.StringIO) -> str:
    return out.getvalue().strip().splitlines()[-1].split()[-1]


@pytest.fixture(autouse=True)
def fresh_refusal_window():  # type: ignore[no-untyped-def]
    """The refusal audit's once-a-minute window lives in the cache, which outlives a test."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.mark.django_db
def test_a_new_token_expires_after_the_configured_lifetime(settings):
    # given a lifetime of 30 days
    settings.MEMORYPR_TOKEN_TTL_DAYS = 30
    # when an agent is created
    before = timezone.now()
    agent, _ = agent_create(name="crm-bot", namespaces=["demo"])
    # then its token expires 30 days on, and the audit event says when
    token = AgentToken.objects.get(agent=agent)
    assert token.expires_at is not None
    assert before + timedelta(days=30) <= token.expires_at <= timezone.now() + timedelta(days=30)
    recorded = AuditEvent.objects.get(event_type="agent.created").payload["expiresAt"]
    assert recorded.startswith(token.expires_at.strftime("%Y-%m-%dT%H:%M:%S"))


@pytest.mark.django_db
def test_no_expiry_only_when_chosen():
    agent, _ = agent_create(name="crm-bot", namespaces=["demo"], expires_in=None)
    assert AgentToken.objects.get(agent=agent).expires_at is None


@pytest.mark.django_db
def test_the_database_refuses_a_token_that_expires_before_it_was_issued():
    agent, _ = agent_with_token(name="crm-bot")
    token = AgentToken.objects.get(agent=agent)
    with pytest.raises(IntegrityError), transaction.atomic():
        AgentToken.objects.filter(pk=token.pk).update(expires_at=token.created_at - timedelta(seconds=1))


@pytest.mark.django_db
def test_an_expired_token_is_refused_and_its_use_audited():
    # given a token that expired a second ago
    agent, token = agent_with_token(name="crm-bot", namespaces=["demo"])
    stored = AgentToken.objects.get(agent=agent)
    AgentToken.objects.filter(pk=stored.pk).update(
        created_at=timezone.now() - timedelta(days=91), expires_at=timezone.now() - timedelta(seconds=1)
    )
    # when the agent calls the API
    response = api(token).get("/api/v1/pulls")
    # then it is refused, and the refusal is on the audit chain
    assert response.status_code == 401
    event = AuditEvent.objects.get(event_type="agent.token_refused")
    assert event.payload["reason"] == "expired"
    assert event.payload["tokenPrefix"] == stored.prefix
    assert event.actor == "agent:crm-bot" and event.namespace == "demo"
    assert token not in str(event.payload)
    assert audit_chain_verify()[1] is None


@pytest.mark.django_db
def test_a_token_that_has_not_expired_yet_works():
    agent, token = agent_with_token(name="crm-bot")
    AgentToken.objects.filter(agent=agent).update(expires_at=timezone.now() + timedelta(minutes=1))
    assert api(token).get("/api/v1/pulls").status_code == 200
    assert not AuditEvent.objects.filter(event_type="agent.token_refused").exists()


@pytest.mark.django_db
def test_revoke_agent_refuses_every_token_and_audits_the_revocation_and_each_use():
    # given an agent with two working tokens
    _, first = agent_with_token(name="crm-bot", namespaces=["demo"])
    _, second = agent_with_token(name="crm-bot", namespaces=["demo"])
    assert api(first).get("/api/v1/pulls").status_code == 200
    # when it is revoked
    out = io.StringIO()
    call_command("revoke_agent", "--name", "crm-bot", "--reason", "laptop stolen", stdout=out)
    # then both tokens answer 401 and nothing they send is stored
    for token in (first, second):
        response = api(token).post(
            "/api/v1/sessions/s1/turns", {"role": "user", "content": "hi"}, format="json"
        )
        assert response.status_code == 401
    assert "revoked" in out.getvalue()
    revoked = AuditEvent.objects.get(event_type="agent.revoked")
    assert revoked.actor == "system:revoke_agent"
    assert revoked.payload["reason"] == "laptop stolen"
    assert len(revoked.payload["revokedTokens"]) == 2
    refusals = AuditEvent.objects.filter(event_type="agent.token_refused")
    assert sorted(e.payload["reason"] for e in refusals) == ["revoked", "revoked"]
    assert not Agent.objects.get(name="crm-bot").is_active


@pytest.mark.django_db
def test_a_dead_token_used_in_a_loop_is_audited_once_a_window():
    # given a revoked token
    agent, token = agent_with_token(name="crm-bot")
    agent_revoke(agent=agent, actor="tester")
    # when it is used five times within the window
    for _ in range(5):
        assert api(token).get("/api/v1/pulls").status_code == 401
    # then one refusal is recorded, not five
    assert AuditEvent.objects.filter(event_type="agent.token_refused").count() == 1


@pytest.mark.django_db
def test_revoking_twice_changes_nothing_the_second_time():
    agent, _ = agent_with_token(name="crm-bot")
    assert len(agent_revoke(agent=agent, actor="tester")) == 1
    assert agent_revoke(agent=agent, actor="tester") == []
    second = AuditEvent.objects.filter(event_type="agent.revoked").order_by("sequence").last()
    assert second is not None and second.payload["wasActive"] is False


@pytest.mark.django_db
def test_an_unknown_token_is_refused_without_an_audit_event():
    assert api("mpr_not-a-token").get("/api/v1/pulls").status_code == 401
    assert not AuditEvent.objects.filter(event_type="agent.token_refused").exists()


@pytest.mark.django_db
def test_rotate_token_prints_a_new_token_and_the_old_one_stops_working():
    # given an agent with a working token
    _, old = agent_with_token(name="crm-bot", namespaces=["demo"])
    assert api(old).get("/api/v1/pulls").status_code == 200
    # when its token is rotated
    out = io.StringIO()
    call_command("rotate_token", "--name", "crm-bot", "--expires-in-days", "7", stdout=out)
    new = printed_token(out)
    # then the new token works, the old one is refused, and both steps are audited
    assert new != old
    assert api(new).get("/api/v1/pulls").status_code == 200
    assert api(old).get("/api/v1/pulls").status_code == 401
    rotated = AuditEvent.objects.get(event_type="agent.token_rotated")
    issued = AgentToken.objects.get(revoked_at__isnull=True)
    assert rotated.payload["tokenPrefix"] == issued.prefix == new[:12]
    assert rotated.payload["revokedTokens"] == [old[:12]]
    assert new not in str(rotated.payload)
    assert issued.expires_at is not None
    assert issued.expires_at - issued.created_at == pytest.approx(timedelta(days=7), abs=timedelta(seconds=5))
    assert AuditEvent.objects.get(event_type="agent.token_refused").payload["reason"] == "revoked"


@pytest.mark.django_db
def test_rotate_token_with_no_expiry():
    agent_with_token(name="crm-bot")
    call_command("rotate_token", "--name", "crm-bot", "--no-expiry", stdout=io.StringIO())
    assert AgentToken.objects.get(revoked_at__isnull=True).expires_at is None


@pytest.mark.django_db
def test_a_revoked_agent_gets_no_new_token():
    # given a revoked agent
    agent, _ = agent_with_token(name="crm-bot")
    agent_revoke(agent=agent, actor="tester")
    # when a rotation is asked for, then it is refused and no token is issued
    with pytest.raises(CommandError, match="revoked"):
        call_command("rotate_token", "--name", "crm-bot", stdout=io.StringIO())
    assert not AgentToken.objects.filter(revoked_at__isnull=True).exists()
    assert not AuditEvent.objects.filter(event_type="agent.token_rotated").exists()


@pytest.mark.django_db
@pytest.mark.parametrize("command", ["revoke_agent", "rotate_token"])
def test_the_commands_name_an_unknown_agent(command):
    with pytest.raises(CommandError, match="no agent named"):
        call_command(command, "--name", "nobody", stdout=io.StringIO())


@pytest.mark.django_db
def test_rotation_is_one_transaction():
    # given an agent whose new token cannot be stored (its hash collides with an existing row)
    agent, old = agent_with_token(name="crm-bot")
    # when the rotation fails half-way, then the old token is still live
    from memorypr.agents import services

    original = services._token_issue

    def failing(**kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("storage failed")

    services._token_issue = failing  # type: ignore[assignment]
    try:
        with pytest.raises(RuntimeError):
            token_rotate(agent=agent, actor="tester")
    finally:
        services._token_issue = original  # type: ignore[assignment]
    assert api(old).get("/api/v1/pulls").status_code == 200
    assert not AuditEvent.objects.filter(event_type="agent.token_rotated").exists()
