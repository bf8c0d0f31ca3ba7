"""The KPR bodies written by hand say exactly what the schema's serializers say."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memorypr.agents.models import Namespace
from memorypr.pulls import selectors
from memorypr.pulls.bodies import pull_body
from memorypr.pulls.serializers import PullDetailOutSerializer, PullOutSerializer
from memorypr.pulls.services import pull_comment_add
from memorypr.revert.services import pull_revert
from tests.factories import agent_with_token
from tests.facts.kprs import approve, create, delete, merge, merged, submit, update

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(db: None):  # type: ignore[no-untyped-def]
    agent, _ = agent_with_token(name="proposer", namespaces=["demo"])
    return agent


def _equal_to_the_serializers(agent, pull) -> None:  # type: ignore[no-untyped-def]
    read = selectors.pull_get_for_agent(agent=agent, pull_id=str(pull.pk))
    assert pull_body(read, reviews=True) == PullDetailOutSerializer(read).data
    assert pull_body(read) == PullOutSerializer(read).data
    listed = [p for p in selectors.pull_list(agent=agent) if p.pk == pull.pk]
    assert [pull_body(p) for p in listed] == PullOutSerializer(listed, many=True).data


def test_a_pending_kpr_of_every_kind_of_operation(agent):
    # given a KPR with a create, an update, a delete and a derived fact with valid times
    namespace = Namespace.objects.get(name="demo")
    merged(agent, namespace, create("home_city", "Beijing"), create("pet", {"kind": "cat", "age": 3}))
    pull = submit(
        agent,
        namespace,
        update("home_city", "Beijing", "Shenzhen", valid_from=datetime(2026, 1, 1, tzinfo=UTC)),
        delete("pet", {"kind": "cat", "age": 3}),
        create("commute", "metro", category="derived", derived_from=["home_city"], importance=0.3),
    )
    # then its bodies are the serializers' output
    _equal_to_the_serializers(agent, pull)


def test_a_reviewed_commented_merged_and_reverted_kpr(agent):
    # given a KPR approved with an excluded operation, commented on, merged, then reverted
    namespace = Namespace.objects.get(name="demo")
    pull = submit(agent, namespace, create("drink", "tea"), create("food", "noodles"))
    approve(pull, excluded=[1])
    pull_comment_add(pull_id=str(pull.pk), author="ada", body="The second is a guess.", operation_position=1)
    pull_comment_add(pull_id=str(pull.pk), author="ada", body="Fine otherwise.")
    merge(pull)
    revert, _ = pull_revert(pull=pull, agent=agent, reason="wrong session")
    # then the bodies of both are the serializers' output
    _equal_to_the_serializers(agent, pull)
    _equal_to_the_serializers(agent, revert)
