from __future__ import annotations

import pytest

from memorypr.audit.models import AuditEvent
from memorypr.pulls.models import KnowledgePullRequest
from tests.factories import agent_with_token, operation_payload, pull_payload
from tests.worker import wait_for


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_submitted_pull_reaches_the_worker_on_redis(live_worker, api_client):
    # given an agent and a running worker on the Redis broker
    _, token = agent_with_token(name="worker-proposer", namespaces=["demo"])
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    # when a KPR is submitted (the review task is enqueued after commit)
    response = api_client.post("/api/v1/pulls", pull_payload(operation_payload()), format="json")
    assert response.status_code == 201
    pull_id = response.json()["id"]
    # then the worker picks it up and its review is recorded
    pull = wait_for(
        lambda: KnowledgePullRequest.objects.exclude(review_status="PENDING").filter(pk=pull_id).first(),
        timeout=60,
    )
    assert pull.review_events.exists()
    assert AuditEvent.objects.filter(pull_id=pull_id, event_type="pull.reviewed").exists()
