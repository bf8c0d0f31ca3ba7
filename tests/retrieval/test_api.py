from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memorypr.agents.models import Namespace
from memorypr.audit.models import AuditEvent
from memorypr.facts.models import FactVersion
from tests.retrieval.factories import fact_put, fact_replace

pytestmark = pytest.mark.django_db
URL = "/api/v1/retrieve"


@pytest.fixture
def demo(agent_client):
    return Namespace.objects.get(name="demo")


def test_retrieve_returns_results_with_score_parts_and_updates(agent_client, demo):
    # given
    beijing = fact_put(namespace=demo, key="home_city", value="Beijing")
    shenzhen = fact_replace(beijing, value="Shenzhen")
    # when
    response = agent_client.post(
        URL, {"subject": "user-1", "query": "where does the user live"}, format="json"
    )
    # then
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["namespace"] == "demo"
    assert body["reformationNeeded"] is False
    top = body["results"][0]
    assert top["factId"] == shenzhen.pk
    assert top["value"] == "Shenzhen"
    assert top["version"] == 2
    assert top["updates"]["factId"] == beijing.pk
    assert top["updates"]["value"] == "Beijing"
    assert top["updates"]["status"] == "superseded"
    assert set(top["score"]) == {
        "final",
        "relevance",
        "recency",
        "decayExempt",
        "vector",
        "fullText",
        "exactRank",
        "rerank",
    }
    assert top["score"]["vector"]["rank"] == 1
    assert "history" not in top
    assert all(item["value"] != "Beijing" for item in body["results"])
    assert "updates an older memory: home city: Beijing" in body["context"]


def test_retrieve_records_access_after_the_response(agent_client, demo):
    # given
    fact = fact_put(namespace=demo, key="home_city", value="Shenzhen")
    assert fact.access_count == 0
    # when
    response = agent_client.post(URL, {"subject": "user-1", "query": "home city"}, format="json")
    # then
    assert response.status_code == 200
    assert response.json()["results"][0]["accessCount"] == 0  # the count as it was when served
    fact.refresh_from_db()
    assert fact.access_count == 1
    assert fact.last_accessed_at is not None
    assert timezone.now() - fact.last_accessed_at < timedelta(minutes=1)


def test_as_of_retrieval_does_not_count_as_access(agent_client, demo):
    # given
    fact = fact_put(
        namespace=demo, key="home_city", value="Beijing", created_at=timezone.now() - timedelta(days=3)
    )
    # when
    response = agent_client.post(
        URL,
        {"subject": "user-1", "query": "home city", "asOf": (timezone.now() - timedelta(days=1)).isoformat()},
        format="json",
    )
    # then
    assert response.status_code == 200
    assert [r["factId"] for r in response.json()["results"]] == [fact.pk]
    fact.refresh_from_db()
    assert fact.access_count == 0


def test_include_history(agent_client, demo):
    # given
    v1 = fact_put(namespace=demo, key="home_city", value="Beijing")
    fact_replace(v1, value="Shenzhen")
    # when
    response = agent_client.post(
        URL, {"subject": "user-1", "query": "home city", "includeHistory": True, "topK": 1}, format="json"
    )
    # then
    history = response.json()["results"][0]["history"]
    assert [h["value"] for h in history] == ["Beijing", "Shenzhen"]
    assert history[0]["retiredAt"] is not None


def test_empty_result_flags_reformation(agent_client, demo):
    # given
    fact_put(namespace=demo, key="home_city", value="Beijing", confidence=0.45)
    # when
    body = agent_client.post(URL, {"subject": "user-1", "query": "home city"}, format="json").json()
    # then
    assert body["results"] == []
    assert body["reformationNeeded"] is True
    assert body["belowConfidence"] == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"subject": "user-1"}, "query"),
        ({"query": "x", "topK": 0}, "topK"),
        ({"query": "x", "topK": 51}, "topK"),
        ({"query": "x", "categories": ["gossip"]}, "categories[0]"),
        ({"query": "x", "asOf": "not a date"}, "asOf"),
        ({"query": "x", "asOf": "2999-01-01T00:00:00Z"}, "asOf"),
        ({"query": "x", "topk": 3}, "topk"),
        ({"query": "a\x00b"}, "query"),
    ],
)
def test_malformed_input_is_a_400_with_field_path(agent_client, body, field):
    # when
    response = agent_client.post(URL, body, format="json")
    # then
    assert response.status_code == 400
    assert field in [e["field"] for e in response.json()["errors"]]


def test_auth_and_tenancy(api_client, agent_client, client_for, demo):
    # given
    fact_put(namespace=Namespace.objects.create(name="secret"), key="home_city", value="Paris")
    # then
    assert api_client.post(URL, {"query": "x"}, format="json").status_code == 401
    assert agent_client.post(URL, {"query": "x", "namespace": "secret"}, format="json").status_code == 403
    multi = client_for(name="multi", namespaces=["demo", "secret"])
    response = multi.post(URL, {"query": "x"}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "namespace"
    found = multi.post(URL, {"query": "home city", "namespace": "secret", "subject": "user-1"}, format="json")
    assert [r["value"] for r in found.json()["results"]] == ["Paris"]


def test_retrieval_writes_no_audit_and_changes_no_content(agent_client, demo):
    # given
    fact = fact_put(namespace=demo, key="home_city", value="Shenzhen")
    before = AuditEvent.objects.count()
    # when
    agent_client.post(URL, {"subject": "user-1", "query": "home city"}, format="json")
    # then: a read is not a state change of memory
    assert AuditEvent.objects.count() == before
    assert FactVersion.objects.get(pk=fact.pk).value == "Shenzhen"
