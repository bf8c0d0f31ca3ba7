"""The client against the real API: answers, errors with field paths, tenancy, paging."""

from __future__ import annotations

import pytest

from memorypr.formation.client import ApiError, MemoryprClient
from tests.factories import agent_with_token

pytestmark = pytest.mark.django_db(transaction=True)


def _pull(**op_overrides):  # type: ignore[no-untyped-def]
    op = {
        "action": "CREATE",
        "category": "user_profile",
        "key": "home_city",
        "oldValue": None,
        "newValue": "Beijing",
        "confidence": 0.9,
        "evidence": {"rawMessageQuote": "I live in Beijing.", "timestamp": 1732000000000},
    }
    op.update(op_overrides)
    return {"subject": "user-1", "sourceSessionId": "s-1", "operations": [op]}


def test_malformed_input_raises_with_the_apis_field_paths(api):
    # when
    with pytest.raises(ApiError) as caught:
        api.submit_pull(_pull(key="not a key!", confidence=3))
    # then
    error = caught.value
    assert error.status == 400
    assert set(error.fields) == {"operations[0].confidence", "operations[0].key"}
    assert "operations[0]" in str(error)


def test_the_same_idempotency_key_returns_the_first_kpr(api):
    # when
    first = api.submit_pull(_pull(), idempotency_key="k-1")
    again = api.submit_pull(_pull(), idempotency_key="k-1")
    # then
    assert again["id"] == first["id"]
    assert first["idempotencyKey"] == "k-1"


def test_wait_for_decision_returns_the_settled_kpr(api):
    # given
    pull = api.submit_pull(_pull())
    # when
    decision = api.wait_for_decision(pull["id"], timeout=30)
    # then
    assert (decision.review_status, decision.merge_status, decision.settled) == ("APPROVED", "MERGED", True)
    assert api.get_pull(pull["id"])["reviews"], "the detail carries the review events"


def test_a_kpr_answered_settled_needs_no_further_request(api):
    # given a KPR the server reviewed and merged within the submit's request
    pull = api.submit_pull(_pull())
    assert (pull["reviewStatus"], pull["mergeStatus"]) == ("APPROVED", "MERGED")
    # when the client waits on that answer with no server to ask
    with MemoryprClient("http://127.0.0.1:9", "mpr_unused") as offline:
        decision = offline.wait_for_decision(pull, timeout=1)
    # then the answer is the decision
    assert (decision.pull_id, decision.merged, decision.settled) == (str(pull["id"]), True, True)


def test_a_kpr_answered_pending_is_polled_by_its_id(api):
    # given an answer that says the KPR is still pending
    pull = api.submit_pull(_pull())
    pending = {**pull, "reviewStatus": "PENDING", "mergeStatus": "UNMERGED"}
    # when the client waits on it
    decision = api.wait_for_decision(pending, timeout=30)
    # then it asked the server, which knows it merged
    assert (decision.pull_id, decision.merged) == (str(pull["id"]), True)


def test_a_bad_token_and_another_namespaces_kpr_are_errors(live_server, api):
    # given
    pull = api.submit_pull(_pull())
    _, other_token = agent_with_token(name="other", namespaces=["elsewhere"])
    # when / then
    with MemoryprClient(live_server.url, "mpr_not_a_token") as stranger, pytest.raises(ApiError) as caught:
        stranger.get_pull(pull["id"])
    assert caught.value.status == 401
    with MemoryprClient(live_server.url, other_token) as other, pytest.raises(ApiError) as caught:
        other.get_pull(pull["id"])
    assert caught.value.status == 404


def test_facts_are_listed_across_pages_and_turns_are_recorded(api):
    # given
    for index in range(3):
        api.wait_for_decision(api.submit_pull(_pull(key=f"k{index}", newValue=f"v{index}"))["id"])
    # when
    facts = api.list_facts(subject="user-1", page_size=2)
    turn = api.post_turn(session_id="s-1", role="user", content="I live in Beijing.")
    # then
    assert sorted(f["key"] for f in facts) == ["k0", "k1", "k2"]
    assert turn["content"] == "I live in Beijing." and turn["role"] == "user"


def test_facts_are_listed_by_key_and_prefix_over_as_many_requests_as_the_filters_need(api, monkeypatch):
    # given three facts, and at most two key filters per request
    for key in ("k0", "k1", "pet.dog"):
        api.wait_for_decision(api.submit_pull(_pull(key=key, newValue=key))["id"])
    monkeypatch.setattr("memorypr.formation.client.FILTERS_PER_REQUEST", 2)
    # when two keys (one unknown) and a prefix are asked for, three filters in all
    facts = api.list_facts(subject="user-1", keys={"k1", "nothing"}, key_prefixes={"pet."})
    # then each fact matched comes back once
    assert sorted(f["key"] for f in facts) == ["k1", "pet.dog"]
    first, more = api.list_facts_page(subject="user-1", page_size=2)
    assert (len(first), more) == (2, True)


def test_a_url_that_is_not_http_is_refused():
    with pytest.raises(ValueError):
        MemoryprClient("ftp://example.invalid", "token")
