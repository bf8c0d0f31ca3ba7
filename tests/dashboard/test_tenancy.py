"""A reviewer acts only in their own namespaces, and only with the page's CSRF token."""

from __future__ import annotations

import pytest
from django.test import Client

from memorypr.audit.models import AuditEvent
from memorypr.pulls.models import KnowledgePullRequest, ReviewEvent

ACTIONS = {
    "decide": {"verdict": "APPROVE", "reason": "looks right"},
    "claim": {},
    "rereview": {"reason": "again"},
    "revert": {"reason": "wrong"},
}


def _state(pull: KnowledgePullRequest) -> tuple[str, str, int, int]:
    pull.refresh_from_db()
    return (
        pull.review_status,
        pull.merge_status,
        ReviewEvent.objects.filter(pull=pull).count(),
        AuditEvent.objects.filter(pull_id=pull.pk).count(),
    )


@pytest.mark.django_db
@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_a_reviewer_cannot_act_on_another_namespaces_kpr(reviewer_client, queued_pull, action):
    # given a KPR waiting in a namespace the reviewer does not review
    pull = queued_pull(namespace="elsewhere", key="allergy", newValue="shrimp", importance=0.95)
    before = _state(pull)
    # when the reviewer posts the action on it
    response = reviewer_client.post(f"/review/pulls/{pull.pk}/{action}", ACTIONS[action])
    # then it is refused as if it did not exist, and nothing changed
    assert response.status_code in (403, 404)
    assert b"shrimp" not in response.content
    assert _state(pull) == before


@pytest.mark.django_db
def test_a_reviewer_cannot_open_another_namespaces_kpr(reviewer_client, queued_pull):
    pull = queued_pull(namespace="elsewhere", key="allergy", newValue="shrimp", importance=0.95)
    response = reviewer_client.get(f"/review/pulls/{pull.pk}/")
    assert response.status_code in (403, 404)
    assert b"shrimp" not in response.content


@pytest.mark.django_db
def test_a_decision_without_the_csrf_token_is_refused(reviewer, queued_pull):
    # given a logged-in reviewer whose client enforces CSRF, as a browser's would
    pull = queued_pull(key="allergy", newValue="shrimp", importance=0.95)
    client = Client(enforce_csrf_checks=True)
    assert client.login(username="ann", password="ann-password-1")
    before = _state(pull)
    # when a form is posted without the token (a cross-site request)
    response = client.post(f"/review/pulls/{pull.pk}/decide", ACTIONS["decide"])
    # then it is refused and nothing is decided
    assert response.status_code == 403
    assert _state(pull) == before
