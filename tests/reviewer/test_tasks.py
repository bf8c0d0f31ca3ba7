from __future__ import annotations

import pytest

from memorypr.agents.models import Namespace
from memorypr.audit.models import AuditEvent
from memorypr.pulls.models import KnowledgePullRequest
from reviewer.services import review_policy_set
from reviewer.tasks import review_sweep_pending
from tests.factories import agent_with_token, operation_payload, pull_payload
from tests.reviewer.builders import fact
from tests.worker import wait_for


def evidence(quote: str) -> dict[str, object]:
    return {"rawMessageQuote": quote, "timestamp": 1732096800000}


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_on_redis_reviews_kprs_end_to_end(live_worker, api_client):
    # given an agent, the current facts, and a rules-only namespace (the worker's environment
    # decides whether an LLM is configured; this test is about the worker, not the LLM)
    _, token = agent_with_token(name="worker-reviewer-proposer", namespaces=["demo"])
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    review_policy_set(namespace=Namespace.objects.get(name="demo"), actor="test", mode="rules_only")
    fact(key="home_city", value="Beijing")
    fact(key="allergy", value="peanut", importance=0.95)
    bodies = {
        "APPROVED": operation_payload(
            action="UPDATE", oldValue="Beijing", newValue="Shenzhen", evidence=evidence("I moved to Shenzhen last month")
        ),
        "NEEDS_HUMAN_REVIEW": operation_payload(
            action="UPDATE", key="allergy", oldValue="peanut", newValue="shrimp", evidence=evidence("I'm allergic to shrimp")
        ),
        "REJECTED": operation_payload(key="work_location", newValue="Mars", confidence=0.1,
                                      evidence=evidence("I'm going to work on Mars tomorrow")),
    }  # fmt: skip
    # when they are submitted (each review is enqueued on commit, to the worker)
    submitted = {}
    for expected, op in bodies.items():
        response = api_client.post("/api/v1/pulls", pull_payload(op), format="json")
        assert response.status_code == 201
        submitted[response.json()["id"]] = expected

    # then the worker decides every one of them
    def all_decided() -> dict[str, str] | None:
        rows = dict(KnowledgePullRequest.objects.filter(pk__in=submitted).values_list("id", "review_status"))
        return None if "PENDING" in rows.values() else {str(pk): status for pk, status in rows.items()}

    decided = wait_for(all_decided, timeout=60)
    assert decided == submitted
    for pull_id in submitted:
        pull = KnowledgePullRequest.objects.get(pk=pull_id)
        assert [e.reviewer_kind for e in pull.review_events.order_by("id")] == ["rules", "system"]
        assert AuditEvent.objects.filter(pull_id=pull_id, event_type="pull.reviewed").count() == 2


@pytest.mark.django_db
def test_the_sweep_hands_stuck_pending_kprs_to_review_again(proposer, merges, settings):
    # given a KPR whose review hand-off was lost (stored, never reviewed)
    from tests.reviewer.builders import op_spec, submit

    fact(key="home_city", value="Beijing")
    stuck = submit(proposer, op_spec())
    # when the sweep runs (eagerly here) with a threshold it has passed
    settings.MEMORYPR_REVIEW_SWEEP_AFTER_SECONDS = 0
    assert review_sweep_pending() == 1
    # then it is decided, and a second sweep finds nothing to do
    stuck.refresh_from_db()
    assert stuck.review_status == "APPROVED"
    assert review_sweep_pending() == 0


@pytest.mark.django_db
def test_the_sweep_leaves_recent_kprs_to_their_own_hand_off(proposer, settings):
    from tests.reviewer.builders import submit

    submit(proposer)
    settings.MEMORYPR_REVIEW_SWEEP_AFTER_SECONDS = 3600
    assert review_sweep_pending() == 0


def test_the_sweep_is_on_the_beat_schedule(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["review-sweep-pending"]
    assert entry["task"] == review_sweep_pending.name
