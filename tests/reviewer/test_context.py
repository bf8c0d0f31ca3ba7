from __future__ import annotations

import uuid
from dataclasses import asdict
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memorypr.facts.models import FactVersion
from memorypr.pulls.models import KnowledgePullRequest, Operation
from memorypr.pulls.specs import OPERATION_FIELDS
from reviewer.context import review_context
from reviewer.models import ReviewPolicy
from reviewer.policy import policy_view
from reviewer.selectors import review_subject_get
from tests.factories import agent_with_token
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
    context = review_context(pull_id=pull.id)
    # then
    assert context is not None
    view, (city, pet) = context.pull, context.operations
    assert (city.current.value, city.current.version, city.current.importance) == ("Beijing", 2, 0.6)
    assert pet.current is None
    assert (view.namespace, view.subject, view.agent_name, view.agent_trust) == (
        "demo",
        "user-1",
        "proposer",
        "normal",
    )
    assert view.policy.confidence_approve_bar == 0.7


def _hourly_count(pull: KnowledgePullRequest) -> int:
    context = review_context(pull_id=pull.id)
    assert context is not None
    return context.pull.agent_pulls_last_hour


@pytest.mark.django_db
def test_rate_counts_the_agents_kprs_in_the_hour_up_to_this_one(proposer):
    first, second, third = submit(proposer), submit(proposer), submit(proposer)
    # the window ends at the KPR under review: a re-review later counts the same neighbours
    assert [_hourly_count(p) for p in (first, second, third)] == [1, 2, 3]
    # and a window that starts just after the first leaves it out
    window = third.created_at - first.created_at - timedelta(microseconds=1)
    subject = review_subject_get(pull_id=str(third.id), window=window)
    assert subject is not None and subject.agent_pulls_in_window == 2


@pytest.mark.django_db
def test_another_agents_kprs_are_not_counted(proposer):
    other, _ = agent_with_token(name="other-proposer", namespaces=["demo"])
    submit(other)
    assert _hourly_count(submit(proposer)) == 1


@pytest.mark.django_db
def test_the_namespace_policy_is_read_with_its_kpr(proposer):
    # given a namespace with a policy of its own
    pull = submit(proposer)
    stored = ReviewPolicy.objects.create(
        namespace_id=pull.namespace_id,
        mode="rules_only",
        human_categories=["medical"],
        key_patterns=["^home_"],
        confidence_approve_bar=0.8,
        agent_hourly_limit=5,
        disabled_rules=["joke"],
        suggestion_rules=["hypothetical"],
    )
    # when its KPR's context is read
    context = review_context(pull_id=pull.id)
    # then the policy is the stored one, defaults filled in as for any reader of it
    assert context is not None
    assert context.pull.policy == policy_view(ReviewPolicy.objects.get(pk=stored.pk))
    assert context.pull.policy.human_categories == frozenset({"medical"})


@pytest.mark.django_db
def test_operations_read_as_the_orm_reads_them(proposer):
    # given operations with nested values, unicode evidence, a valid time and a basis
    at = datetime(2026, 3, 1, 12, 30, tzinfo=UTC)
    pull = submit(
        proposer,
        op_spec(action="CREATE", key="diet", old_value=None, new_value={"avoid": ["花生", 1.5], "ok": True},
                quote="我对花生过敏", valid_from=at),
        op_spec(action="DELETE", key="pet", old_value="cat", new_value=None, importance=0.25,
                derived_from=["00000000-0000-0000-0000-00000000000a"], relation="derived"),
    )  # fmt: skip
    # when
    context = review_context(pull_id=pull.id)
    # then each operation's content is what the ORM loads
    assert context is not None
    expected = [
        {"position": op.position, **{name: getattr(op, name) for name in OPERATION_FIELDS}}
        for op in Operation.objects.filter(pull=pull).order_by("position")
    ]
    read = [{k: v for k, v in asdict(op).items() if k != "current"} for op in context.operations]
    assert read == expected
    assert context.operations[0].new_value == {"avoid": ["花生", 1.5], "ok": True}
    assert context.operations[0].valid_from == at


@pytest.mark.django_db
def test_a_review_reads_its_kpr_in_one_statement(proposer):
    fact(key="home_city", value="Beijing")
    pull = submit(proposer, op_spec(), op_spec(action="CREATE", key="pet", old_value=None, new_value="cat"))
    with CaptureQueriesContext(connection) as queries:
        context = review_context(pull_id=pull.id)
        assert context is not None
        assert context.pull.agent_pulls_last_hour == 1
    assert len(queries) == 1


@pytest.mark.django_db
def test_an_unknown_kpr_has_no_context():
    assert review_context(pull_id=str(uuid.uuid4())) is None
    assert review_context(pull_id="not-a-uuid") is None


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
