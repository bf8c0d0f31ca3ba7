"""Claims and decisions from the dashboard, against real concurrent transactions."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from memorypr.agents.services import reviewer_create
from memorypr.pulls.models import KnowledgePullRequest, ReviewStatus
from memorypr.pulls.services import pull_submit
from memorypr.pulls.specs import OperationSpec, PullSpec
from reviewer.dashboard.services import ClaimHeld, claim_take, pull_decide_by_reviewer
from reviewer.tasks import review_pull
from tests.factories import agent_with_token


@pytest.mark.django_db(transaction=True)
def test_a_decision_sees_a_claim_taken_while_it_waited_for_the_kpr(monkeypatch):
    # given a committed KPR in the queue (not handed to the review) and two reviewers
    monkeypatch.setattr(review_pull, "delay", lambda pull_id: None)
    agent, _ = agent_with_token(name="proposer", namespaces=["demo"])
    op = OperationSpec(
        action="CREATE", category="user_profile", key="home_city", new_value="Beijing", confidence=0.95,
        evidence={"rawMessageQuote": "I live in Beijing."},
    )  # fmt: skip
    pull, _ = pull_submit(
        agent=agent, namespace=agent.namespaces.get(), spec=PullSpec(subject="user-1", operations=[op])
    )
    ann = reviewer_create(username="ann", password="ann-password-1", namespaces=["demo"])
    bob = reviewer_create(username="bob", password="bob-password-1", namespaces=["demo"])
    claimed, decision_started = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def ann_claims_and_commits_late() -> None:
        try:
            with transaction.atomic():
                claim_take(pull_id=str(pull.pk), user=ann)
                claimed.set()
                decision_started.wait(timeout=30)
                # bob's decision is under way while ann's claim is not committed yet
                threading.Event().wait(0.5)
        except BaseException as exc:  # surfaced below: a thread must not fail silently
            errors.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=ann_claims_and_commits_late)
    thread.start()
    assert claimed.wait(timeout=30)
    # when bob decides while ann's claim is being committed
    decision_started.set()
    try:
        with pytest.raises(ClaimHeld):
            pull_decide_by_reviewer(
                pull_id=str(pull.pk),
                user=bob,
                verdict="APPROVE",
                reason="looks right",
                excluded_operations=[],
            )
    finally:
        thread.join(timeout=60)
    # then bob was told about ann's claim and the KPR is still queued
    assert not errors, errors
    assert KnowledgePullRequest.objects.get(pk=pull.pk).review_status == ReviewStatus.PENDING
