from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memorypr.audit.models import AuditEvent
from memorypr.pulls.models import KnowledgePullRequest
from tests.facts.kprs import approved, create, merged, update

pytestmark = pytest.mark.django_db

FACTS = "/api/v1/facts"


def iso(moment):
    return moment.isoformat().replace("+00:00", "Z")


def test_list_returns_active_facts_in_camel_case(agent_client, proposer, namespace):
    # given
    merged(proposer, namespace, create("home_city", "Beijing", importance=0.7))
    pull = merged(proposer, namespace, update("home_city", "Beijing", "Shenzhen"))
    # when
    response = agent_client.get(FACTS, {"subject": "user-1"})
    # then
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["count"] == 1
    [fact] = body["results"]
    assert fact["key"] == "home_city" and fact["value"] == "Shenzhen" and fact["status"] == "active"
    assert fact["version"] == 2 and fact["namespace"] == "demo" and fact["subject"] == "user-1"
    assert fact["pull"] == str(pull.pk) and fact["action"] == "UPDATE" and fact["retiredAt"] is None
    assert fact["importance"] == 0.7  # carried over from the version it replaced
    assert {"validFrom", "validTo", "accessCount", "lastAccessedAt", "createdAt", "retiredByPull"} <= set(
        fact
    )


def test_list_reads_a_page_of_many_facts_in_as_many_statements_as_one(agent_client, proposer, namespace):
    # given one fact, listed once (after a first request, which also records the token's use)
    merged(proposer, namespace, create("home_city", "Beijing"))
    agent_client.get(FACTS, {"subject": "user-1"})
    with CaptureQueriesContext(connection) as one:
        assert agent_client.get(FACTS, {"subject": "user-1"}).json()["count"] == 1
    # when nine more, written by two more KPRs, are listed
    merged(proposer, namespace, *(create(f"likes_{n}", f"likes {n}") for n in range(5)))
    merged(proposer, namespace, *(create(f"pet_{n}", f"pet {n}") for n in range(4)))
    with CaptureQueriesContext(connection) as ten:
        response = agent_client.get(FACTS, {"subject": "user-1"})
    # then the page of ten took no statement more, and each fact names its namespace and action
    assert response.json()["count"] == 10
    assert len(ten.captured_queries) == len(one.captured_queries)
    assert {(fact["namespace"], fact["action"]) for fact in response.json()["results"]} == {
        ("demo", "CREATE")
    }


def test_list_filters_by_status_and_category(agent_client, proposer, namespace):
    merged(proposer, namespace, create("home_city", "Beijing"), create("pet", "cat", category="domain_fact"))
    merged(proposer, namespace, update("home_city", "Beijing", "Shenzhen"))
    superseded = agent_client.get(FACTS, {"subject": "user-1", "status": "superseded"}).json()["results"]
    assert [(f["value"], f["status"]) for f in superseded] == [("Beijing", "superseded")]
    every = agent_client.get(FACTS, {"status": "all"}).json()
    assert every["count"] == 3
    assert [f["key"] for f in agent_client.get(FACTS, {"category": "domain_fact"}).json()["results"]] == [
        "pet"
    ]


def test_list_filters_by_keys_and_key_prefixes(agent_client, proposer, namespace):
    # given facts of two families and two single keys
    merged(
        proposer,
        namespace,
        create("home_city", "Beijing"),
        create("occupation", "nurse"),
        create("pet.dog", "a dog"),
        create("pet.cat", "a cat"),
        create("petition", "signed"),
        create("allergy.peanut", "peanuts"),
    )
    # when one key and one family are asked for
    body = agent_client.get(
        FACTS, {"subject": "user-1", "key": ["home_city", "nothing"], "keyPrefix": "pet."}
    )
    # then exactly the facts with that key or that prefix are listed, and counted
    assert body.json()["count"] == 3
    assert sorted(fact["key"] for fact in body.json()["results"]) == ["home_city", "pet.cat", "pet.dog"]
    by_prefixes = agent_client.get(FACTS, {"subject": "user-1", "keyPrefix": ["pet", "allergy."]}).json()
    assert sorted(f["key"] for f in by_prefixes["results"]) == [
        "allergy.peanut",
        "pet.cat",
        "pet.dog",
        "petition",
    ]


def test_list_as_of_shows_what_was_true_then(agent_client, proposer, namespace):
    first = merged(proposer, namespace, create("home_city", "Beijing"))
    second = merged(proposer, namespace, update("home_city", "Beijing", "Shenzhen"))
    before = second.merged_at - timedelta(microseconds=1)
    body = agent_client.get(FACTS, {"subject": "user-1", "asOf": iso(before)}).json()
    [fact] = body["results"]
    # the status is the one it had then; retiredAt says when that ended
    assert (fact["value"], fact["status"], fact["pull"]) == ("Beijing", "active", str(first.pk))
    assert fact["retiredAt"] == iso(second.merged_at)
    assert agent_client.get(FACTS, {"asOf": iso(first.merged_at - timedelta(seconds=1))}).json()["count"] == 0


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"status": "gone"}, "status"),
        ({"category": "nope"}, "category"),
        ({"asOf": "yesterday"}, "asOf"),
        ({"asOf": "2026-01-01T00:00:00Z", "status": "superseded"}, "status"),
        ({"key": [f"key_{n}" for n in range(101)]}, "key"),
        ({"keyPrefix": "x" * 201}, "keyPrefix[0]"),
    ],
)
def test_malformed_queries_are_400_with_the_field(agent_client, params, field):
    response = agent_client.get(FACTS, params)
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == field


def test_namespace_tenancy(client_for, proposer, namespace):
    # given a fact in demo, and agents of other namespaces
    merged(proposer, namespace, create("home_city", "Beijing"))
    outsider = client_for(name="outsider", namespaces=["other"])
    both = client_for(name="both", namespaces=["demo", "other"])
    # then another namespace is refused, its facts invisible
    assert outsider.get(FACTS, {"namespace": "demo"}).status_code == 403
    assert outsider.get(FACTS).json()["count"] == 0
    assert outsider.get(f"{FACTS}/home_city/history", {"subject": "user-1"}).status_code == 404
    # and an agent of several namespaces names one
    response = both.get(FACTS)
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "namespace"
    assert both.get(FACTS, {"namespace": "demo"}).json()["count"] == 1


def test_anonymous_is_401(api_client):
    assert api_client.get(FACTS).status_code == 401


def test_history_lists_every_version_with_edges_and_the_kpr(agent_client, proposer, namespace):
    # given
    first = merged(
        proposer,
        namespace,
        create("home/city", "Beijing"),
        create("commute", "Beijing subway", category="derived", derived_from=["home/city"]),
    )
    second = merged(proposer, namespace, update("home/city", "Beijing", "Shenzhen"))
    # when
    response = agent_client.get(f"{FACTS}/home/city/history", {"subject": "user-1"})
    # then
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["namespace"], body["subject"], body["key"], body["asOf"]) == (
        "demo",
        "user-1",
        "home/city",
        None,
    )
    old, new = body["versions"]
    assert (old["version"], old["status"], old["retiredByPull"]) == (1, "superseded", str(second.pk))
    assert (new["version"], new["status"]) == (2, "active")
    assert old["writtenBy"]["id"] == str(first.pk) and old["writtenBy"]["mergeStatus"] == "MERGED"
    assert old["writtenBy"]["proposedBy"] == "tests" and old["writtenBy"]["agent"] == "proposer"
    assert new["edges"]["out"] == [
        {
            "type": "UPDATES",
            "factId": old["id"],
            "category": "user_profile",
            "key": "home/city",
            "version": 1,
            "value": "Beijing",
            "status": "superseded",
        }
    ]
    assert {(e["type"], e["key"], e["status"]) for e in old["edges"]["in"]} == {
        ("UPDATES", "home/city", "active"),
        ("DERIVED_FROM", "commute", "stale"),
    }


def test_history_as_of(agent_client, proposer, namespace):
    merged(proposer, namespace, create("home_city", "Beijing"))
    second = merged(proposer, namespace, update("home_city", "Beijing", "Shenzhen"))
    before = iso(second.merged_at - timedelta(microseconds=1))
    body = agent_client.get(f"{FACTS}/home_city/history", {"subject": "user-1", "asOf": before}).json()
    assert body["asOf"] == before
    [only] = body["versions"]
    assert (only["value"], only["status"], only["edges"]) == ("Beijing", "active", {"out": [], "in": []})


def test_history_of_an_unknown_key_is_404(agent_client, namespace):
    assert agent_client.get(f"{FACTS}/nothing/history", {"subject": "user-1"}).status_code == 404


def test_revert_endpoint_creates_a_pending_revert_kpr(agent_client, proposer, namespace):
    # given
    merged(proposer, namespace, create("home_city", "Beijing"))
    change = merged(proposer, namespace, update("home_city", "Beijing", "Shenzhen"))
    # when
    response = agent_client.post(
        f"/api/v1/pulls/{change.pk}/revert", {"reason": "moved back", "idempotencyKey": "undo"}, format="json"
    )
    # then
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["reverts"] == str(change.pk) and body["reviewStatus"] == "PENDING"
    assert body["mergeStatus"] == "UNMERGED"
    assert [(o["action"], o["key"], o["oldValue"], o["newValue"]) for o in body["operations"]] == [
        ("UPDATE", "home_city", "Shenzhen", "Beijing")
    ]
    assert AuditEvent.objects.filter(pull_id=body["id"], event_type="pull.submitted").exists()
    # and the same request again answers with the same KPR
    again = agent_client.post(
        f"/api/v1/pulls/{change.pk}/revert", {"reason": "moved back", "idempotencyKey": "undo"}, format="json"
    )
    assert again.status_code == 200 and again.json()["id"] == body["id"]
    assert KnowledgePullRequest.objects.filter(reverts=change).count() == 1


def test_revert_of_an_unmerged_kpr_is_409(agent_client, proposer, namespace):
    pull = approved(proposer, namespace, create("home_city", "Beijing"))
    response = agent_client.post(f"/api/v1/pulls/{pull.pk}/revert", format="json")
    assert response.status_code == 409 and "only a MERGED KPR" in response.json()["detail"]


def test_revert_of_another_namespaces_kpr_is_404(client_for, proposer, namespace):
    change = merged(proposer, namespace, create("home_city", "Beijing"))
    outsider = client_for(name="outsider", namespaces=["other"])
    assert outsider.post(f"/api/v1/pulls/{change.pk}/revert", format="json").status_code == 404


def test_revert_rejects_unknown_fields(agent_client, proposer, namespace):
    change = merged(proposer, namespace, create("home_city", "Beijing"))
    response = agent_client.post(f"/api/v1/pulls/{change.pk}/revert", {"reasn": "typo"}, format="json")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "reasn"
