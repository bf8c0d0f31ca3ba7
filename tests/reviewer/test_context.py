from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection

from memorypr.facts.models import FactVersion
from memorypr.pulls.models import KnowledgePullRequest
from reviewer.context import review_context
from reviewer.selectors import agent_pull_count
from tests.reviewer.builders import fact, op_spec, submit


@pytest.mark.django_db
def test_current_facts_are_the_active_versions_of_the_subjects_keys(proposer):
    # given an old superseded version, the active one, and the same key for another subject
    old = fact(key="home_city", value="Harbin", version=1)
    FactVersion.objects.filter(pk=old.pk).update(status="superseded")
    fact(key="home_city", value="Beijing", version=2, importance=0.6)
    fact(key="home_city", value="Lhasa", subject="user-2")
    pull = submit(proposer, op_spec(), op_spec(action="CREATE", key="pet", old_value=None, new_value="cat"))
    # when
    view, (city, pet) = review_context(pull=pull)
    # then
    assert (city.current.value, city.current.version, city.current.importance) == ("Beijing", 2, 0.6)
    assert pet.current is None
    assert (view.namespace, view.subject, view.agent_name, view.agent_trust) == (
        "demo",
        "user-1",
        "proposer",
        "normal",
    )
    assert view.policy.confidence_approve_bar == 0.7


@pytest.mark.django_db
def test_rate_counts_the_agents_kprs_in_the_hour_up_to_this_one(proposer):
    first, second, third = submit(proposer), submit(proposer), submit(proposer)
    # the window ends at the KPR under review: a re-review later counts the same neighbours
    assert [review_context(pull=p)[0].agent_pulls_last_hour for p in (first, second, third)] == [1, 2, 3]
    assert (
        agent_pull_count(
            agent_id=proposer.id,
            namespace_id=first.namespace_id,
            since=second.created_at,
            until=third.created_at,
        )
        == 2
    )
    assert agent_pull_count(
        agent_id=proposer.id, namespace_id=first.namespace_id, since=third.created_at + timedelta(seconds=1),
        until=third.created_at + timedelta(hours=1),
    ) == 0  # fmt: skip


@pytest.mark.django_db
def test_the_hourly_count_has_an_index_that_starts_with_its_filter():
    # given the KPR table as the migrations leave it
    table = KnowledgePullRequest._meta.db_table
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    # then an index leads with the count's equalities and ends with its range: a window of it
    # is read, however many KPRs the agent sent before
    index = constraints["kpr_agent_ns_created"]
    assert index["index"] and index["columns"] == ["agent_id", "namespace_id", "created_at"]
