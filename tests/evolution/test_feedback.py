from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memorypr.agents.models import Namespace
from memorypr.audit.models import AuditEvent
from memorypr.evolution.models import ForgettingMark
from memorypr.evolution.services.feedback import confidence_adjusted
from memorypr.facts.models import FactVersion
from tests.retrieval.factories import fact_put

pytestmark = pytest.mark.django_db
URL = "/api/v1/feedback"


@pytest.fixture
def demo(agent_client):
    return Namespace.objects.get(name="demo")


@pytest.mark.parametrize(
    ("start", "outcome", "expected"),
    [
        (0.5, "success", 0.6),
        (0.95, "success", 1.0),
        (1.0, "success", 1.0),
        (0.5, "failure", 0.3),
        (0.3, "failure", 0.1),
        (0.1, "failure", 0.0),
        (0.0, "failure", 0.0),
    ],
)
def test_confidence_arithmetic_is_clamped(start, outcome, expected):
    assert confidence_adjusted(confidence=start, outcome=outcome) == expected


def test_success_raises_confidence_and_is_audited_per_fact(agent_client, demo):
    # given
    a = fact_put(namespace=demo, key="home_city", value="Shenzhen", confidence=0.7)
    b = fact_put(namespace=demo, key="favorite_drink", value="tea", confidence=0.95)
    # when
    response = agent_client.post(
        URL, {"factIds": [a.pk, b.pk], "outcome": "success", "sessionId": "s-1"}, format="json"
    )
    # then
    assert response.status_code == 200, response.content
    facts = {f["factId"]: f for f in response.json()["facts"]}
    assert facts[a.pk]["confidenceBefore"] == 0.7
    assert facts[a.pk]["confidence"] == 0.8
    assert facts[b.pk]["confidence"] == 1.0
    assert FactVersion.objects.get(pk=a.pk).confidence == 0.8
    events = list(AuditEvent.objects.filter(event_type="fact.feedback").order_by("sequence"))
    assert [e.payload["factId"] for e in events] == [a.pk, b.pk]
    assert events[0].payload["from"] == 0.7 and events[0].payload["to"] == 0.8
    assert events[0].payload["outcome"] == "success"
    assert events[0].payload["sessionId"] == "s-1"
    assert events[0].actor == "agent:proposer"
    assert events[0].namespace == "demo" and events[0].subject == "user-1"


def test_failure_below_the_bar_marks_for_forgetting(agent_client, demo):
    # given
    fact = fact_put(namespace=demo, key="home_city", value="Beijing", confidence=0.45)
    # when
    body = agent_client.post(URL, {"factIds": [fact.pk], "outcome": "failure"}, format="json").json()
    # then
    assert body["facts"][0]["confidence"] == 0.25
    assert body["facts"][0]["markedForForgetting"] is True
    mark = ForgettingMark.objects.get(fact=fact)
    assert mark.reason == "low_confidence" and mark.pull is None
    marked = AuditEvent.objects.get(event_type="fact.marked_for_forgetting")
    assert marked.payload["factId"] == fact.pk and marked.payload["confidence"] == 0.25
    # the fact itself is still there: forgetting goes through a KPR
    assert FactVersion.objects.get(pk=fact.pk).status == "active"


def test_recovered_confidence_lifts_an_unproposed_mark(agent_client, demo):
    # given
    fact = fact_put(namespace=demo, key="home_city", value="Beijing", confidence=0.35)
    agent_client.post(URL, {"factIds": [fact.pk], "outcome": "failure"}, format="json")
    assert ForgettingMark.objects.filter(fact=fact).exists()
    # when
    agent_client.post(URL, {"factIds": [fact.pk], "outcome": "success"}, format="json")
    agent_client.post(URL, {"factIds": [fact.pk], "outcome": "success"}, format="json")
    # then
    assert FactVersion.objects.get(pk=fact.pk).confidence == 0.35
    assert not ForgettingMark.objects.filter(fact=fact).exists()
    assert AuditEvent.objects.filter(event_type="fact.unmarked_for_forgetting").count() == 1


def test_feedback_on_many_facts_takes_the_statements_of_one_and_the_chain_lock_once(agent_client, demo):
    # given: one fact, then five, two of them falling below the forgetting bar
    one = fact_put(namespace=demo, key="k0", value="v", confidence=0.7)
    many = [
        fact_put(namespace=demo, key=f"k{i}", value="v", confidence=0.7 if i > 2 else 0.3)
        for i in range(1, 6)
    ]
    agent_client.post(
        URL, {"factIds": [one.pk], "outcome": "success"}, format="json"
    )  # the token's first use
    # when
    with CaptureQueriesContext(connection) as single:
        assert (
            agent_client.post(URL, {"factIds": [one.pk], "outcome": "failure"}, format="json").status_code
            == 200
        )
    with CaptureQueriesContext(connection) as several:
        response = agent_client.post(
            URL, {"factIds": [f.pk for f in many], "outcome": "failure"}, format="json"
        )
    # then: the marks cost one statement more, whatever their number; the chain is extended once
    assert response.status_code == 200
    assert len(several.captured_queries) == len(single.captured_queries) + 1
    assert sum("audit_chain_extend" in q["sql"] for q in several.captured_queries) == 1
    assert ForgettingMark.objects.filter(fact__in=many).count() == 2
    events = AuditEvent.objects.filter(payload__factId__in=[f.pk for f in many])
    assert (
        sorted(events.values_list("event_type", flat=True))
        == ["fact.feedback"] * 5 + ["fact.marked_for_forgetting"] * 2
    )


def test_unknown_or_foreign_fact_is_404_and_nothing_is_written(agent_client, demo):
    # given
    mine = fact_put(namespace=demo, key="home_city", value="Shenzhen", confidence=0.7)
    foreign = fact_put(namespace=Namespace.objects.create(name="other"), key="home_city", value="Paris")
    before = AuditEvent.objects.count()
    # when
    response = agent_client.post(URL, {"factIds": [mine.pk, foreign.pk], "outcome": "success"}, format="json")
    # then
    assert response.status_code == 404
    assert str(foreign.pk) in response.json()["detail"]
    assert FactVersion.objects.get(pk=mine.pk).confidence == 0.7
    assert AuditEvent.objects.count() == before


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"factIds": [1], "outcome": "meh"}, "outcome"),
        ({"factIds": [], "outcome": "success"}, "factIds"),
        ({"factIds": ["x"], "outcome": "success"}, "factIds[0]"),
        ({"outcome": "success"}, "factIds"),
        ({"factIds": [1], "outcome": "success", "extra": 1}, "extra"),
    ],
)
def test_malformed_feedback_is_400(agent_client, body, field):
    response = agent_client.post(URL, body, format="json")
    assert response.status_code == 400
    assert field in [e["field"] for e in response.json()["errors"]]
