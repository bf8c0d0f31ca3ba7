from __future__ import annotations

import pytest

from memorypr.agents.models import Namespace
from memorypr.working_memory.models import SessionTurn
from tests.retrieval.factories import fact_put

pytestmark = pytest.mark.django_db


def _turns(client, session, *contents, role="user"):
    for content in contents:
        response = client.post(
            f"/api/v1/sessions/{session}/turns", {"role": role, "content": content}, format="json"
        )
        assert response.status_code == 201, response.content


def test_turns_are_kept_and_the_last_twenty_are_working_memory(agent_client):
    # given
    _turns(agent_client, "s-1", *[f"message {i}" for i in range(25)])
    # when
    response = agent_client.get("/api/v1/sessions/s-1")
    # then
    assert response.status_code == 200
    body = response.json()
    assert [t["content"] for t in body["turns"]] == [f"message {i}" for i in range(5, 25)]
    assert body["totalTurns"] == 25
    assert body["expired"] is False
    assert body["store"] == "postgres"
    assert body["expiresAt"] is not None
    assert SessionTurn.objects.filter(session_id="s-1").count() == 25


def test_turn_response_and_validation(agent_client):
    # when
    created = agent_client.post(
        "/api/v1/sessions/s-2/turns", {"role": "assistant", "content": "Hi!"}, format="json"
    )
    bad_role = agent_client.post(
        "/api/v1/sessions/s-2/turns", {"role": "narrator", "content": "x"}, format="json"
    )
    empty = agent_client.post("/api/v1/sessions/s-2/turns", {"role": "user", "content": ""}, format="json")
    bad_id = agent_client.post(
        "/api/v1/sessions/bad id!/turns", {"role": "user", "content": "x"}, format="json"
    )
    # then
    assert created.status_code == 201
    assert created.json()["role"] == "assistant" and created.json()["content"] == "Hi!"
    assert bad_role.status_code == 400 and bad_role.json()["errors"][0]["field"] == "role"
    assert empty.status_code == 400 and empty.json()["errors"][0]["field"] == "content"
    assert bad_id.status_code == 404


def test_sessions_are_scoped_to_the_namespace(agent_client, client_for):
    # given
    _turns(agent_client, "shared-id", "I live in Beijing.")
    outsider = client_for(name="outsider", namespaces=["elsewhere"])
    # when
    other = outsider.get("/api/v1/sessions/shared-id")
    _turns(outsider, "shared-id", "Different tenant, same id.")
    # then
    assert other.status_code == 404
    mine = agent_client.get("/api/v1/sessions/shared-id").json()
    assert [t["content"] for t in mine["turns"]] == ["I live in Beijing."]
    assert agent_client.get("/api/v1/sessions/unknown").status_code == 404
    assert agent_client.get("/api/v1/sessions/shared-id/context").status_code == 200
    assert outsider.get("/api/v1/sessions/shared-id", {"namespace": "demo"}).status_code == 403


def test_context_joins_working_memory_and_long_term_retrieval(agent_client):
    # given
    demo = Namespace.objects.get(name="demo")
    fact_put(namespace=demo, key="home_city", value="Shenzhen")
    _turns(agent_client, "s-3", "Any good restaurants near where I live?")
    # when: no query given, the last user turn is the query
    response = agent_client.get("/api/v1/sessions/s-3/context", {"subject": "user-1"})
    # then
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["session"]["turns"][0]["content"] == "Any good restaurants near where I live?"
    assert body["retrieval"]["query"] == "Any good restaurants near where I live?"
    assert body["retrieval"]["results"][0]["value"] == "Shenzhen"
    assert body["context"].startswith(
        "Working memory (session s-3, last 1 turns):\nuser: Any good restaurants"
    )
    assert "home city: Shenzhen" in body["context"]
    explicit = agent_client.get(
        "/api/v1/sessions/s-3/context", {"subject": "user-1", "query": "home city"}
    ).json()
    assert explicit["retrieval"]["query"] == "home city"


def test_another_namespace_cannot_read_a_sessions_context(agent_client, client_for):
    # given a session in the demo namespace
    _turns(agent_client, "private-session", "My PIN hint is the name of my first cat, Tofu.")
    outsider = client_for(name="context-outsider", namespaces=["elsewhere"])
    # when an agent of another namespace asks for its context, by id alone or naming demo
    by_id = outsider.get("/api/v1/sessions/private-session/context")
    naming_demo = outsider.get("/api/v1/sessions/private-session/context", {"namespace": "demo"})
    # then it gets nothing of it
    assert by_id.status_code == 404
    assert naming_demo.status_code == 403
    assert b"Tofu" not in by_id.content + naming_demo.content
