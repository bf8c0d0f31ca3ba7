from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import transaction

from memorypr.agents.models import Agent, Namespace
from memorypr.audit.services import audit_record
from memorypr.common.locks import lock_pull
from memorypr.pulls.models import KnowledgePullRequest
from memorypr.pulls.services import pull_record_review
from reviewer.dashboard.insights_selectors import (
    insights_agents,
    insights_automatic_decisions,
    insights_conflicts_and_reverts,
    insights_decision_times,
    insights_queue,
    insights_rules,
    insights_verdicts_by_source,
    insights_window,
)
from reviewer.pipeline import pull_review
from tests.factories import agent_with_token
from tests.facts.kprs import create, submit

pytestmark = pytest.mark.django_db


@pytest.fixture
def agents(db: None) -> tuple[Agent, Agent]:
    return (
        agent_with_token(name="proposer", namespaces=["demo"])[0],
        agent_with_token(name="outsider", namespaces=["elsewhere"])[0],
    )


def _reviewed(agent: Agent, namespace: str, key: str, value: str, **extra: object) -> KnowledgePullRequest:
    pull = submit(agent, Namespace.objects.get(name=namespace), create(key, value, **extra))  # type: ignore[arg-type]
    pull_review(pull_id=str(pull.pk))
    pull.refresh_from_db()
    return pull


def _person_decides(pull: KnowledgePullRequest, verdict: str) -> None:
    with transaction.atomic():
        pull_record_review(
            pull=lock_pull(pull_id=str(pull.pk)), reviewer_kind="human", reviewer="ann", verdict=verdict,
            status_after="APPROVED" if verdict == "APPROVE" else "REJECTED", reasons="checked",
        )  # fmt: skip


@pytest.fixture
def traffic(agents):  # type: ignore[no-untyped-def]
    """In demo: one KPR the rules approve, two held for a person (protected key), of which a
    person then approves one; in elsewhere: one held, which demo's figures must not count."""
    proposer, outsider = agents
    approved = _reviewed(proposer, "demo", "home_city", "Shenzhen")
    held = [_reviewed(proposer, "demo", f"allergy_{n}", "shrimp", importance=0.95) for n in range(2)]
    _person_decides(held[0], "APPROVE")
    _reviewed(outsider, "elsewhere", "allergy", "nuts", importance=0.95)
    assert approved.review_status == "APPROVED"
    assert [p.review_status for p in held] == ["NEEDS_HUMAN_REVIEW"] * 2
    return Namespace.objects.get(name="demo").pk


def test_windows_are_whole_buckets_ending_after_now():
    now = datetime(2026, 3, 4, 10, 30, tzinfo=UTC)
    day = insights_window(name="24h", now=now)
    assert (day.start, day.end, len(day.buckets)) == (now.replace(minute=0) - timedelta(hours=23), now.replace(hour=11, minute=0), 24)  # fmt: skip
    month = insights_window(name="30d", now=now)
    assert month.end == datetime(2026, 3, 5, tzinfo=UTC) and len(month.buckets) == 30


def test_the_queue_now_holds_the_one_still_waiting(traffic):
    window = insights_window(name="24h")
    points = insights_queue(namespace_ids=[traffic], window=window)
    assert len(points) == 24
    assert points[-1].size == 1
    assert 0 <= points[-1].oldest_hours < 1
    assert [p.size for p in points[:-1]] == [0] * 23


def test_verdicts_by_source_rule_and_agent(traffic):
    window = insights_window(name="7d")
    by_source = insights_verdicts_by_source(namespace_ids=[traffic], window=window)
    assert by_source["rules"] == {"APPROVE": 1, "ESCALATE": 2}
    assert by_source["human"] == {"APPROVE": 1}
    assert by_source["llm"] == {}
    rules = dict((rule, (escalated, rejected)) for rule, escalated, rejected in insights_rules(namespace_ids=[traffic], window=window))  # fmt: skip
    assert rules == {"protected": (2, 0)}
    # approved, rejected, waiting for a person, pending
    assert insights_agents(namespace_ids=[traffic], window=window) == [("proposer", [2, 0, 1, 0])]


def test_time_to_decision_and_the_auto_approval_counts(traffic):
    window = insights_window(name="24h")
    times = insights_decision_times(namespace_ids=[traffic], window=window)
    assert (sum(times.automatic), sum(times.person)) == (1, 1)
    assert times.percentiles["automatic"] is not None and times.percentiles["person"] is not None
    decisions = insights_automatic_decisions(namespace_ids=[traffic], window=window)
    assert decisions[-1].values == {"APPROVE": 1, "ESCALATE": 2, "REJECT": 0}
    assert sum(sum(b.values.values()) for b in decisions[:-1]) == 0


def test_conflicts_and_reverts_per_bucket(traffic):
    window = insights_window(name="24h")
    audit_record(event_type="pull.merge_conflict", actor="system:merge", namespace="demo")
    audit_record(event_type="pull.merge_conflict", actor="system:merge", namespace="elsewhere")
    counts = insights_conflicts_and_reverts(namespace_ids=[traffic], namespace_names=["demo"], window=window)
    assert counts[-1].values == {"conflicts": 1, "reverts": 0}


def test_an_empty_scope_counts_nothing(traffic):
    window = insights_window(name="90d")
    assert {p.size for p in insights_queue(namespace_ids=[], window=window)} == {0}
    assert insights_agents(namespace_ids=[], window=window) == []
    assert insights_rules(namespace_ids=[], window=window) == []
