from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memorypr.audit.models import AuditEvent
from memorypr.pulls.models import KnowledgePullRequest, Operation
from tests.factories import operation_payload, pull_payload

URL = "/api/v1/pulls"

SEED_KPR = {
    "id": "kpr_20241120_001",
    "createdAt": "2024-11-20T10:00:00Z",
    "sourceSessionId": "sess_8812",
    "proposedBy": "proposer_agent_v1",
    "operations": [
        {
            "action": "UPDATE",
            "category": "user_profile",
            "key": "home_city",
            "oldValue": "Beijing",
            "newValue": "Shenzhen",
            "confidence": 0.92,
            "evidence": {"rawMessageQuote": "上个月我举家搬迁到了深圳", "timestamp": 1732096800000},
        }
    ],
    "reviewStatus": "PENDING",
}


@pytest.mark.django_db
def test_seed_json_is_accepted_as_is(agent_client):
    # when
    response = agent_client.post(URL, SEED_KPR, format="json")
    # then
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["reviewStatus"] == "PENDING"
    assert body["mergeStatus"] == "UNMERGED"
    assert body["id"] != SEED_KPR["id"]  # the server owns ids
    assert body["createdAt"]
    assert body["operations"][0]["oldValue"] == "Beijing"
    assert body["operations"][0]["evidence"]["rawMessageQuote"] == "上个月我举家搬迁到了深圳"
    pull = KnowledgePullRequest.objects.get(pk=body["id"])
    assert pull.subject == "default"
    event = AuditEvent.objects.get(pull_id=pull.id, event_type="pull.submitted")
    assert event.actor == "agent:proposer"
    assert event.payload["operations"] == [
        {"action": "UPDATE", "category": "user_profile", "key": "home_city"}
    ]


@pytest.mark.django_db
def test_extensions_round_trip(agent_client):
    op = operation_payload(
        category="derived",
        key="offer_coffee_when_tired",
        newValue="Offer coffee when the user is tired",
        importance=0.4,
        validFrom="2026-11-30T00:00:00Z",
        validTo="2026-12-07T00:00:00Z",
        derivedFrom=["likes_coffee"],
    )
    body = pull_payload(op, namespace="demo", idempotencyKey="k-1")
    response = agent_client.post(URL, body, format="json")
    assert response.status_code == 201, response.content
    out = response.json()["operations"][0]
    assert out["derivedFrom"] == ["likes_coffee"]
    assert out["importance"] == 0.4
    assert out["validTo"].startswith("2026-12-07")
    assert response.json()["idempotencyKey"] == "k-1"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda b: b["operations"][0].update(confidence=1.5), "operations[0].confidence"),
        (lambda b: b["operations"][0].update(confidence="high"), "operations[0].confidence"),
        (lambda b: b["operations"][0].pop("confidence"), "operations[0].confidence"),
        (lambda b: b["operations"][0].update(action="MERGE"), "operations[0].action"),
        (lambda b: b["operations"][0].update(category="gossip"), "operations[0].category"),
        (lambda b: b["operations"][0].update(key=""), "operations[0].key"),
        (lambda b: b["operations"][0].update(key="has space"), "operations[0].key"),
        (lambda b: b["operations"][0].update(oldValue="x"), "operations[0].oldValue"),
        (lambda b: b["operations"][0].update(newValue=None), "operations[0].newValue"),
        (lambda b: b["operations"][0].update(action="UPDATE", oldValue=None), "operations[0].oldValue"),
        (
            lambda b: b["operations"][0].update(action="DELETE", oldValue="a", newValue="b"),
            "operations[0].newValue",
        ),
        (lambda b: b["operations"][0].update(importance=-0.1), "operations[0].importance"),
        (
            lambda b: b["operations"][0].update(
                validFrom="2026-12-02T00:00:00Z", validTo="2026-12-01T00:00:00Z"
            ),
            "operations[0].validTo",
        ),
        (lambda b: b["operations"][0].update(validFrom="next tuesday"), "operations[0].validFrom"),
        (lambda b: b["operations"][0].update(relation="LOVES"), "operations[0].relation"),
        (lambda b: b["operations"][0].update(derivedFrom="likes_coffee"), "operations[0].derivedFrom"),
        (lambda b: b["operations"][0].update(derivedFrom=["home_city"]), "operations[0].derivedFrom"),
        (lambda b: b["operations"][0].update(evidence={"quote": "x"}), "operations[0].evidence.quote"),
        (
            lambda b: b["operations"][0].update(evidence={"rawMessageQuote": "x", "timestamp": "yesterday"}),
            "operations[0].evidence.timestamp",
        ),
        (lambda b: b["operations"][0].update(confidance=0.9), "operations[0].confidance"),
        (lambda b: b["operations"][0].update(newValue="a\x00b"), "operations[0].newValue"),
        (lambda b: b.update(operations=[]), "operations"),
        (lambda b: b.update(operations="all of them"), "operations"),
        (lambda b: b.pop("operations"), "operations"),
        (lambda b: b.update(subject=""), "subject"),
        (lambda b: b.update(namespace="not a slug!"), "namespace"),
        (lambda b: b.update(extra=1), "extra"),
    ],
)
def test_malformed_input_names_the_field(agent_client, mutate, field):
    # given
    body = pull_payload(operation_payload())
    mutate(body)
    # when
    response = agent_client.post(URL, body, format="json")
    # then
    assert response.status_code == 400, response.content
    fields = [error["field"] for error in response.json()["errors"]]
    assert field in fields
    assert response.json()["detail"]
    assert KnowledgePullRequest.objects.count() == 0
    assert Operation.objects.count() == 0


@pytest.mark.django_db
def test_field_path_points_at_the_third_operation(agent_client):
    ops = [operation_payload(key=f"k{i}") for i in range(3)]
    ops[2]["confidence"] = 7
    response = agent_client.post(URL, pull_payload(*ops), format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "operations[2].confidence"


@pytest.mark.django_db
def test_duplicate_key_in_one_pull_is_rejected(agent_client):
    response = agent_client.post(URL, pull_payload(operation_payload(), operation_payload()), format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "operations[1].key"


@pytest.mark.django_db
def test_body_that_is_not_json_is_a_400(agent_client):
    response = agent_client.post(URL, "{not json", content_type="application/json")
    assert response.status_code == 400
    assert "JSON" in response.json()["detail"]


@pytest.mark.django_db
def test_size_limits_say_the_limit(agent_client, settings):
    settings.MEMORYPR_MAX_OPERATIONS = 3
    settings.MEMORYPR_MAX_VALUE_BYTES = 100
    too_many = pull_payload(*[operation_payload(key=f"k{i}") for i in range(4)])
    response = agent_client.post(URL, too_many, format="json")
    assert response.status_code == 400
    assert "limit is 3" in response.json()["detail"]
    too_big = pull_payload(operation_payload(newValue="x" * 200))
    response = agent_client.post(URL, too_big, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "operations[0].newValue"
    assert "limit is 100 bytes" in response.json()["detail"]


@pytest.mark.django_db
def test_missing_or_bad_token_is_401(api_client, agent_and_token):
    assert api_client.post(URL, pull_payload(), format="json").status_code == 401
    api_client.credentials(HTTP_AUTHORIZATION="Bearer nope")
    assert api_client.post(URL, pull_payload(), format="json").status_code == 401
    api_client.credentials(HTTP_AUTHORIZATION="Token " + agent_and_token[1])
    assert api_client.get(URL).status_code == 401


@pytest.mark.django_db
def test_namespace_outside_the_agents_scope_is_403(agent_client):
    response = agent_client.post(URL, pull_payload(namespace="other"), format="json")
    assert response.status_code == 403
    assert KnowledgePullRequest.objects.count() == 0


@pytest.mark.django_db
def test_agent_with_several_namespaces_must_name_one(client_for):
    client = client_for(name="multi", namespaces=["a", "b"])
    response = client.post(URL, pull_payload(), format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "namespace"
    assert client.post(URL, pull_payload(namespace="b"), format="json").status_code == 201


@pytest.mark.django_db
def test_other_tenants_pull_is_404(agent_client, client_for):
    other = client_for(name="other", namespaces=["elsewhere"])
    pull_id = other.post(URL, pull_payload(), format="json").json()["id"]
    assert agent_client.get(f"{URL}/{pull_id}").status_code == 404
    assert other.get(f"{URL}/{pull_id}").status_code == 200
    assert agent_client.get(f"{URL}/00000000-0000-0000-0000-000000000000").status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_pulls_cannot_be_changed_through_the_api(agent_client, method):
    pull_id = agent_client.post(URL, pull_payload(), format="json").json()["id"]
    response = getattr(agent_client, method)(f"{URL}/{pull_id}", {"reviewStatus": "APPROVED"}, format="json")
    assert response.status_code == 405
    assert getattr(agent_client, method)(URL, {}, format="json").status_code == 405
    assert KnowledgePullRequest.objects.get(pk=pull_id).review_status == "PENDING"


@pytest.mark.django_db
def test_idempotency_key_returns_the_first_pull(agent_client):
    body = pull_payload(idempotencyKey="abc")
    first = agent_client.post(URL, body, format="json")
    second = agent_client.post(URL, body, format="json")
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json()["id"] == second.json()["id"]
    assert KnowledgePullRequest.objects.count() == 1
    assert AuditEvent.objects.filter(event_type="pull.submitted").count() == 1


@pytest.mark.django_db
def test_a_new_idempotency_key_is_stored_without_a_read_before_it(agent_client):
    # when a KPR with a key never used before is sent, and then sent again
    with CaptureQueriesContext(connection) as first:
        assert agent_client.post(URL, pull_payload(idempotencyKey="fresh"), format="json").status_code == 201
    with CaptureQueriesContext(connection) as retry:
        assert agent_client.post(URL, pull_payload(idempotencyKey="fresh"), format="json").status_code == 200
    # then the first statement on the KPR table is its INSERT: the unique key tells a new key
    touching = [q["sql"] for q in first.captured_queries if "pulls_knowledgepullrequest" in q["sql"]]
    assert touching[0].lstrip().upper().startswith("INSERT")
    # and the retry stored nothing: one KPR, its operations once, one audit event
    assert any("pulls_knowledgepullrequest" in q["sql"] for q in retry.captured_queries)
    assert KnowledgePullRequest.objects.count() == 1
    assert Operation.objects.count() == len(pull_payload()["operations"])
    assert AuditEvent.objects.filter(event_type="pull.submitted").count() == 1


@pytest.mark.django_db
def test_the_answer_to_a_submit_is_the_stored_kpr_without_reading_it_back(agent_client, settings):
    # given a server whose review runs on a worker, later
    settings.CELERY_TASK_ALWAYS_EAGER = False
    payload = pull_payload(operations=[operation_payload(key="home_city"), operation_payload(key="pets")])
    # when a KPR is submitted
    with CaptureQueriesContext(connection) as submitted:
        response = agent_client.post(URL, payload, format="json")
    # then its answer shows the operations and comments a read shows, and none was read back
    assert response.status_code == 201, response.content
    body = response.json()
    read = agent_client.get(f"{URL}/{body['id']}").json()
    assert body["operations"] == read["operations"]
    assert [op["key"] for op in body["operations"]] == ["home_city", "pets"]
    assert body["reviewerFeedbackDetail"] == read["reviewerFeedbackDetail"] == []
    selects = [q["sql"] for q in submitted.captured_queries if q["sql"].lstrip().upper().startswith("SELECT")]
    assert not [sql for sql in selects if "pulls_operation" in sql or "pulls_reviewcomment" in sql]


@pytest.mark.django_db
def test_idempotency_key_is_per_agent(agent_client, client_for):
    # given two agents sending the same body with the same idempotency key
    other = client_for(name="other", namespaces=["demo"])
    body = pull_payload(idempotencyKey="abc")
    first = agent_client.post(URL, body, format="json")
    second = other.post(URL, body, format="json")
    # then each gets a KPR of its own
    assert first.status_code == second.status_code == 201
    assert first.json()["id"] != second.json()["id"]
    assert KnowledgePullRequest.objects.filter(idempotency_key="abc").count() == 2
    # and each agent's retry returns its own first KPR, storing nothing new
    assert agent_client.post(URL, body, format="json").json()["id"] == first.json()["id"]
    assert other.post(URL, body, format="json").json()["id"] == second.json()["id"]
    assert KnowledgePullRequest.objects.filter(idempotency_key="abc").count() == 2


@pytest.mark.django_db
def test_reused_idempotency_key_with_other_payload_is_409(agent_client):
    assert agent_client.post(URL, pull_payload(idempotencyKey="abc"), format="json").status_code == 201
    changed = pull_payload(operation_payload(newValue="Shanghai"), idempotencyKey="abc")
    response = agent_client.post(URL, changed, format="json")
    assert response.status_code == 409
    assert "idempotencyKey" in response.json()["detail"]
    assert KnowledgePullRequest.objects.count() == 1


@pytest.mark.django_db
def test_throttling_per_agent_is_429(agent_client, client_for, settings):
    settings.MEMORYPR_AGENT_RATE = "3/min"
    from django.core.cache import cache

    cache.clear()
    codes = [agent_client.get(URL).status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    other = client_for(name="other", namespaces=["demo"])
    assert other.get(URL).status_code == 200


@pytest.mark.django_db
def test_list_filters_and_paginates(agent_client):
    for i in range(3):
        agent_client.post(URL, pull_payload(subject=f"user-{i % 2}"), format="json")
    everything = agent_client.get(URL).json()
    assert everything["count"] == 3
    assert agent_client.get(URL, {"subject": "user-1"}).json()["count"] == 1
    assert agent_client.get(URL, {"reviewStatus": "PENDING", "namespace": "demo"}).json()["count"] == 3
    assert agent_client.get(URL, {"reviewStatus": "APPROVED"}).json()["count"] == 0
    assert agent_client.get(URL, {"since": "2999-01-01T00:00:00Z"}).json()["count"] == 0
    page = agent_client.get(URL, {"pageSize": 2}).json()
    assert len(page["results"]) == 2 and page["next"]
    assert agent_client.get(URL, {"reviewStatus": "MAYBE"}).status_code == 400
    assert agent_client.get(URL, {"namespace": "other"}).status_code == 403
