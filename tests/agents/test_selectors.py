from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memorypr.agents.models import Agent, AgentToken
from memorypr.agents.selectors import agent_token_by_hash
from memorypr.agents.services import token_hash
from tests.factories import agent_with_token


@pytest.mark.django_db
def test_a_token_comes_with_its_agent_and_namespaces_in_one_query(django_assert_num_queries):
    # given an agent of two namespaces, and another agent of a third
    agent, token = agent_with_token(name="reader", namespaces=["zeta", "alpha"])
    agent_with_token(name="other", namespaces=["gamma"])
    # when its token is looked up
    with django_assert_num_queries(1):
        found = agent_token_by_hash(token_hash=token_hash(token))
        assert found is not None
        names = [ns.name for ns in found.agent.namespaces.all()]
    # then it is that agent's token, with its namespaces in name order, read in that one query
    assert found.agent == agent and found.agent.name == "reader" and found.agent.is_active
    assert names == ["alpha", "zeta"]
    assert [ns.pk for ns in found.agent.namespaces.all()] == list(
        Agent.objects.get(pk=agent.pk).namespaces.values_list("pk", flat=True)
    )
    assert found.revoked_at is None and found.prefix == token[: len(found.prefix)]


@pytest.mark.django_db
def test_an_agent_without_namespaces_is_found_with_none():
    agent, token = agent_with_token(name="loner")
    agent.namespaces.clear()
    found = agent_token_by_hash(token_hash=token_hash(token))
    assert found is not None and list(found.agent.namespaces.all()) == []


@pytest.mark.django_db
def test_an_unknown_token_is_not_found():
    assert agent_token_by_hash(token_hash=token_hash("no-such-token")) is None


@pytest.mark.django_db
def test_the_written_statement_reads_every_field_the_orm_would():
    # given a token with every optional field set
    agent, token = agent_with_token(name="complete", namespaces=["demo"], trust="high")
    AgentToken.objects.filter(agent=agent).update(
        last_used_at=timezone.now(), expires_at=timezone.now() + timedelta(days=1)
    )
    # when it is looked up, then each field of the token and its agent is what the ORM reads
    found = agent_token_by_hash(token_hash=token_hash(token))
    expected = AgentToken.objects.select_related("agent").get(agent=agent)
    assert found is not None
    for model, mine, theirs in ((AgentToken, found, expected), (Agent, found.agent, expected.agent)):
        for field in model._meta.concrete_fields:
            assert getattr(mine, field.attname) == getattr(theirs, field.attname), field.name
