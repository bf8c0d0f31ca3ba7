from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection, transaction

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
def test_the_hourly_count_reads_only_the_window_of_the_agents_index(proposer):
    # given an agent with KPRs before the window
    first, second = submit(proposer), submit(proposer)
    query = KnowledgePullRequest.objects.filter(
        agent_id=proposer.id,
        namespace_id=first.namespace_id,
        created_at__gte=second.created_at,
        created_at__lte=second.created_at,
    )
    # when the count of the window is planned, with the planner told to avoid full scans
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        plan = query.explain()
    # then it is a range of the (agent, namespace, created_at) index, not the agent's whole history
    assert "kpr_agent_ns_created" in plan
    assert "Index Cond" in plan and "created_at" in plan.split("Index Cond", 1)[1]
