from __future__ import annotations

import pytest

from memorypr.agents.models import Agent
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
