from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memorypr.agents.services import namespace_get_or_create
from memorypr.audit.models import AuditEvent
from memorypr.evolution.models import ForgettingMark
from memorypr.evolution.services.forgetting import capacity_run, forgetting_run
from memorypr.evolution.services.scoring import forgetting_score
from memorypr.pulls.models import KnowledgePullRequest
from tests.retrieval.factories import fact_put

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo():
    return namespace_get_or_create(name="demo")


def _system_pulls():
    return KnowledgePullRequest.objects.filter(agent__name="system").prefetch_related("operations")


def test_score_formula_defaults():
    # fresh, unused, importance 0.5: w_r + w_i * 0.5
    assert forgetting_score(days=0, accesses=0, importance=0.5) == pytest.approx(0.6 + 0.125)
    # 200 days unused, importance 0.2: well under the 0.15 threshold
    assert forgetting_score(days=200, accesses=0, importance=0.2) < 0.15
    # often used facts stay, however old
    assert forgetting_score(days=400, accesses=10, importance=0.2) > 0.15


def test_low_scoring_fact_gets_a_delete_kpr_from_system_once(demo):
    # given
    long_ago = timezone.now() - timedelta(days=200)
    stale = fact_put(
        namespace=demo, key="old_hobby", value="stamp collecting", importance=0.2, created_at=long_ago
    )
    fact_put(namespace=demo, key="new_hobby", value="climbing", importance=0.2)
    fact_put(namespace=demo, key="allergy", value="penicillin", importance=0.95, created_at=long_ago)
    fact_put(
        namespace=demo,
        key="coffee_order",
        value="flat white",
        importance=0.2,
        created_at=long_ago,
        access_count=10,
    )
    # when
    report = forgetting_run()
    # then
    assert report.proposed == 1
    [pull] = _system_pulls()
    assert str(pull.pk) == report.pulls[0]
    assert pull.idempotency_key == f"evolution:forget:{stale.pk}"
    assert pull.proposed_by == "system:forgetting"
    assert pull.subject == "user-1" and pull.namespace == demo
    assert pull.review_status == "PENDING"
    [op] = pull.operations.all()
    assert (op.action, op.category, op.key, op.old_value, op.new_value) == (
        "DELETE",
        "user_profile",
        "old_hobby",
        "stamp collecting",
        None,
    )
    assert "below" in op.evidence["rawMessageQuote"]
    submitted = AuditEvent.objects.get(event_type="pull.submitted", pull_id=pull.pk)
    assert submitted.actor == "agent:system"
    # and when it runs again, nothing new is proposed
    again = forgetting_run()
    assert again.proposed == 0
    assert _system_pulls().count() == 1


def test_marked_fact_is_proposed_and_the_mark_remembers_its_kpr(demo):
    # given: fresh, but feedback drove its confidence down
    fact = fact_put(namespace=demo, key="home_city", value="Beijing", confidence=0.2)
    ForgettingMark.objects.create(fact=fact, reason="low_confidence", confidence=0.2)
    # when
    report = forgetting_run()
    again = forgetting_run()
    # then
    assert report.proposed == 1
    assert again.proposed == 0
    mark = ForgettingMark.objects.get(fact=fact)
    assert str(mark.pull_id) == report.pulls[0]
    assert "feedback lowered its confidence" in mark.pull.operations.get().evidence["rawMessageQuote"]


def test_forgetting_is_bounded_per_run(demo):
    # given
    long_ago = timezone.now() - timedelta(days=300)
    for i in range(5):
        fact_put(
            namespace=demo, key=f"trivia_{i}", value=f"fact number {i}", importance=0.1, created_at=long_ago
        )
    # when
    first = forgetting_run(limit=3)
    second = forgetting_run(limit=3)
    third = forgetting_run(limit=3)
    # then
    assert (first.proposed, second.proposed, third.proposed) == (3, 2, 0)


def test_capacity_proposes_the_lowest_share_once(demo, settings):
    # given: capacity 10, 12 active facts: drop max(2, ceil(1.2)) = 2, the lowest scores
    settings.MEMORYPR_CAPACITY_PER_SUBJECT = 10
    now = timezone.now()
    facts = [
        fact_put(
            namespace=demo,
            key=f"note_{i}",
            value=f"note {i}",
            importance=0.5,
            created_at=now - timedelta(days=i),
        )
        for i in range(12)
    ]
    fact_put(namespace=demo, subject="small", key="note", value="one fact only")
    # when
    report = capacity_run()
    again = capacity_run()
    # then: the two least recently used
    assert report.proposed == 2
    proposed = {p.idempotency_key for p in _system_pulls()}
    assert proposed == {f"evolution:forget:{facts[11].pk}", f"evolution:forget:{facts[10].pk}"}
    assert again.proposed == 0
    assert all(p.proposed_by == "system:capacity" for p in _system_pulls())
    assert "capacity of 10" in _system_pulls()[0].operations.get().evidence["rawMessageQuote"]


def test_capacity_never_proposes_critical_facts(demo, settings):
    # given
    settings.MEMORYPR_CAPACITY_PER_SUBJECT = 2
    for i in range(4):
        fact_put(namespace=demo, key=f"allergy_{i}", value=f"allergen {i}", importance=0.95)
    # when
    report = capacity_run()
    # then
    assert report.proposed == 0
