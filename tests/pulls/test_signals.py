"""The workflow's hand-offs: pulls announces a submission and an approval, review and merge subscribe."""

from __future__ import annotations

import logging

import pytest
from django.db import transaction
from kombu.exceptions import OperationalError

from memorypr.agents.models import Agent, Namespace
from memorypr.facts.receivers import merge_enqueue
from memorypr.facts.tasks import merge_pull
from memorypr.pulls.models import KnowledgePullRequest, ReviewStatus
from memorypr.pulls.services import pull_human_decide, pull_record_review, pull_submit
from memorypr.pulls.signals import pull_approved, pull_submitted
from memorypr.pulls.specs import OperationSpec, PullSpec
from reviewer.receivers import review_enqueue
from reviewer.tasks import review_pull
from tests.factories import operation_payload, pull_payload

pytestmark = pytest.mark.django_db


@pytest.fixture
def reviews(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The reviews handed to the broker."""
    queued: list[str] = []
    monkeypatch.setattr(review_pull, "delay", queued.append)
    return queued


@pytest.fixture
def merges(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The merges handed to the broker."""
    queued: list[str] = []
    monkeypatch.setattr(merge_pull, "delay", queued.append)
    return queued


@pytest.fixture
def namespace(agent_and_token: tuple[Agent, str]) -> Namespace:
    return Namespace.objects.get(name="demo")


def spec() -> PullSpec:
    evidence = {"rawMessageQuote": "I live in Beijing."}
    op = OperationSpec(
        action="CREATE", category="user_profile", key="home_city", new_value="Beijing", confidence=0.95,
        evidence=evidence,
    )  # fmt: skip
    return PullSpec(subject="user-1", operations=[op], proposed_by="tests")


def submit(agent: Agent, namespace: Namespace) -> KnowledgePullRequest:
    pull, _ = pull_submit(agent=agent, namespace=namespace, spec=spec())
    return pull


@pytest.mark.parametrize(
    ("signal", "receiver", "dispatch_uid"),
    [
        (pull_submitted, review_enqueue, "reviewer.review_enqueue"),
        (pull_approved, merge_enqueue, "facts.merge_enqueue"),
    ],
)
def test_the_review_and_the_merge_subscribe_when_their_apps_are_ready(signal, receiver, dispatch_uid):
    # given the apps are loaded; when the subscription is taken away, then it was there
    try:
        assert signal.disconnect(dispatch_uid=dispatch_uid) is True
    finally:
        signal.connect(receiver, dispatch_uid=dispatch_uid)


def test_a_committed_submission_enqueues_exactly_one_review(
    agent_and_token, namespace, reviews, merges, django_capture_on_commit_callbacks
):
    # when a KPR is submitted and the transaction commits
    with django_capture_on_commit_callbacks(execute=True):
        pull = submit(agent_and_token[0], namespace)
    # then one review, and no merge, is handed over
    assert reviews == [str(pull.pk)]
    assert merges == []


def test_a_rolled_back_submission_enqueues_nothing(
    agent_and_token, namespace, reviews, django_capture_on_commit_callbacks
):
    # when the submission's transaction rolls back
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError), transaction.atomic():
        submit(agent_and_token[0], namespace)
        raise RuntimeError("rolled back")
    # then nothing was handed over
    assert reviews == []


def test_a_resubmission_with_the_same_idempotency_key_enqueues_no_second_review(
    agent_client, reviews, django_capture_on_commit_callbacks
):
    body = pull_payload(operation_payload(), idempotencyKey="once")
    with django_capture_on_commit_callbacks(execute=True):
        first = agent_client.post("/api/v1/pulls", body, format="json")
        again = agent_client.post("/api/v1/pulls", body, format="json")
    assert (first.status_code, again.status_code) == (201, 200)
    assert reviews == [first.json()["id"]]


def test_a_human_approval_enqueues_exactly_one_merge(
    agent_and_token, namespace, reviews, merges, django_capture_on_commit_callbacks
):
    # given a queued KPR
    pull = submit(agent_and_token[0], namespace)
    # when a person approves it and the approval commits
    with django_capture_on_commit_callbacks(execute=True):
        pull_human_decide(pull_id=str(pull.pk), reviewer="ann", verdict="APPROVE", reason="checked")
    # then the merge is handed over once
    assert merges == [str(pull.pk)]


def test_a_human_rejection_enqueues_no_merge(
    agent_and_token, namespace, reviews, merges, django_capture_on_commit_callbacks
):
    pull = submit(agent_and_token[0], namespace)
    with django_capture_on_commit_callbacks(execute=True):
        pull_human_decide(pull_id=str(pull.pk), reviewer="ann", verdict="REJECT", reason="not said")
    assert merges == []


def test_an_event_that_keeps_the_status_announces_nothing(
    agent_and_token, namespace, reviews, merges, django_capture_on_commit_callbacks
):
    # given an approved KPR (approved outside the capture: its announcement is not looked at)
    pull = submit(agent_and_token[0], namespace)
    pull_human_decide(pull_id=str(pull.pk), reviewer="ann", verdict="APPROVE", reason="checked")
    pull.refresh_from_db()
    assert pull.review_status == ReviewStatus.APPROVED
    # when a reviewer's event is recorded without moving the status (a re-review's rules event)
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        pull_record_review(
            pull=pull, reviewer_kind="rules", reviewer="rules", verdict="APPROVE",
            status_after=pull.review_status, reasons="checks", update_status=False,
        )  # fmt: skip
    # then no second merge is handed over
    assert merges == []


def test_a_broker_outage_does_not_fail_the_submission(
    agent_client, monkeypatch, caplog, django_capture_on_commit_callbacks
):
    # given a broker that refuses connections
    def refuse(pull_id: str) -> None:
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(review_pull, "delay", refuse)
    # when an agent submits a KPR
    with (
        caplog.at_level(logging.ERROR, logger="memorypr.pulls.signals"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = agent_client.post("/api/v1/pulls", pull_payload(operation_payload()), format="json")
    # then the KPR is accepted and stays PENDING for the sweep, and the lost hand-off is logged
    assert response.status_code == 201, response.content
    pull = KnowledgePullRequest.objects.get(pk=response.json()["id"])
    assert pull.review_status == ReviewStatus.PENDING
    [record] = [r for r in caplog.records if r.name == "memorypr.pulls.signals"]
    assert str(pull.pk) in record.getMessage() and "sweep" in record.getMessage()
    assert isinstance(record.exc_info[1], OperationalError)
