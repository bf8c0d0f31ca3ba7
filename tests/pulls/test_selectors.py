from __future__ import annotations

import uuid

import pytest

from memorypr.agents.models import Namespace
from memorypr.pulls.selectors import pull_final_exclusions, pull_get_for_agent
from tests.factories import agent_with_token
from tests.facts.kprs import approve, create, submit

pytestmark = pytest.mark.django_db


def test_a_kpr_reads_with_its_namespace_proposer_and_children_for_any_agent_of_its_namespace():
    # given a KPR proposed by one agent, and a second agent of the same namespace
    proposer, _ = agent_with_token(name="proposer", namespaces=["demo"])
    reader, _ = agent_with_token(name="reader", namespaces=["demo", "other"])
    pull = submit(proposer, Namespace.objects.get(name="demo"), create("pet", "cat"), create("drink", "tea"))
    # when each reads it
    for agent in (proposer, reader):
        read = pull_get_for_agent(agent=agent, pull_id=str(pull.pk))
        # then it names its namespace and its proposer, and holds its operations in order
        assert read is not None and read.pk == pull.pk
        assert (read.namespace.name, read.agent.name) == ("demo", "proposer")
        assert [op.key for op in read.operations.all()] == ["pet", "drink"]


def test_a_kpr_outside_the_agents_namespaces_or_unknown_reads_as_none():
    # given a KPR in a namespace the outsider does not hold
    proposer, _ = agent_with_token(name="proposer", namespaces=["demo"])
    outsider, _ = agent_with_token(name="outsider", namespaces=["other"])
    pull = submit(proposer, Namespace.objects.get(name="demo"), create("pet", "cat"))
    # then
    assert pull_get_for_agent(agent=outsider, pull_id=str(pull.pk)) is None
    assert pull_get_for_agent(agent=proposer, pull_id=str(uuid.uuid4())) is None
    assert pull_get_for_agent(agent=proposer, pull_id="not-a-uuid") is None


def test_the_final_approvals_exclusions_are_those_of_the_latest_approval():
    # given a KPR of three operations approved twice, the last approval leaving two out
    agent, _ = agent_with_token(name="proposer", namespaces=["demo"])
    pull = submit(agent, Namespace.objects.get(name="demo"), create("a", 1), create("b", 2), create("c", 3))
    untouched = submit(agent, Namespace.objects.get(name="demo"), create("d", 4))
    assert pull_final_exclusions(pull_id=pull.pk) == set()
    approve(pull, excluded=[2])
    approve(pull, excluded=[0, 2])
    # when its exclusions are read
    excluded = pull_final_exclusions(pull_id=pull.pk)
    # then they are the latest approval's; a KPR never approved has none
    assert excluded == {0, 2}
    assert pull_final_exclusions(pull_id=untouched.pk) == set()
