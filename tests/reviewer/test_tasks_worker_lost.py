"""A worker killed in the middle of a review: the KPR still reaches a final state, decided once.

The review stalls on the (real HTTP) LLM endpoint, so the kill lands mid-task. A killed pool
child's task is given back by its master at once (acks late, reject on worker lost); a whole
worker killed leaves its task unacknowledged: the pending sweep hands the KPR over again, and
a worker that consumes its broker alone (`make run`'s) takes the task back as it starts.
"""

from __future__ import annotations

import json
import signal
import threading

import psutil
import pytest

from memorypr.audit.models import AuditEvent
from memorypr.pulls.models import KnowledgePullRequest, ReviewEvent
from reviewer.tasks import review_sweep_pending
from tests.factories import agent_with_token, operation_payload, pull_payload
from tests.reviewer.llm_server import Reply, request_data, running_llm_server
from tests.worker import running_worker, tasks_to, wait_for


def _first_call_stalls(stalled: threading.Event):  # type: ignore[no-untyped-def]
    """The first review request hangs (the worker is killed meanwhile); later ones approve."""

    def answer(request):  # type: ignore[no-untyped-def]
        ops = [{"index": op["index"], "verdict": "approve", "reason": "stated plainly", "risk": "low"}
               for op in request_data(request)["operations"]]  # fmt: skip
        if not stalled.is_set():
            stalled.set()
            return Reply(content=json.dumps({"operations": ops}), delay=60)
        return Reply(content=json.dumps({"operations": ops}))

    return answer


def _llm_env(base_url: str) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": "test-key",
        "MEMORYPR_REVIEW_MODEL": "test-model",
        "MEMORYPR_REVIEW_TIMEOUT_SECONDS": "90",
        "MEMORYPR_REVIEW_RETRIES": "0",
    }


def _submit(api_client, name: str) -> str:  # type: ignore[no-untyped-def]
    _, token = agent_with_token(name=name, namespaces=["demo"])
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    response = api_client.post("/api/v1/pulls", pull_payload(operation_payload()), format="json")
    assert response.status_code == 201
    return str(response.json()["id"])


def _decided(pull_id: str) -> KnowledgePullRequest | None:
    return KnowledgePullRequest.objects.exclude(review_status="PENDING").filter(pk=pull_id).first()


def _assert_decided_once(pull_id: str) -> None:
    final_events = ReviewEvent.objects.filter(pull_id=pull_id, reviewer_kind="system")
    assert final_events.count() == 1
    assert AuditEvent.objects.filter(pull_id=pull_id, event_type="pull.submitted").count() == 1


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_review_cut_short_by_a_killed_pool_child_is_run_again_at_once(api_client):
    stalled = threading.Event()
    with running_llm_server() as llm:
        llm.scenario = _first_call_stalls(stalled)
        with running_worker(extra_env=_llm_env(llm.base_url)) as worker, tasks_to(worker):
            # given a review in progress in one of the worker's pool children
            pull_id = _submit(api_client, "killed-child-proposer")
            assert stalled.wait(60), "the review never reached the LLM"
            # when every pool child is SIGKILLed (what the OOM killer does)
            for child in psutil.Process(worker.proc.pid).children():
                child.send_signal(signal.SIGKILL)
            # then the master gives the task back, a new child reviews it, and no sweep is needed
            pull = wait_for(lambda: _decided(pull_id), timeout=90)
            assert worker.proc.poll() is None
    assert pull.review_status == "APPROVED"
    _assert_decided_once(pull_id)


def _whole_worker_killed_mid_review(api_client, llm, *, proposer: str) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """A review in progress on a worker, then the whole worker (master and children) SIGKILLed,
    its task left unacknowledged: the KPR's id and the dead worker's queue."""
    stalled = threading.Event()
    llm.scenario = _first_call_stalls(stalled)
    with running_worker(extra_env=_llm_env(llm.base_url)) as doomed, tasks_to(doomed):
        pull_id = _submit(api_client, proposer)
        assert stalled.wait(60), "the review never reached the LLM"
        for process in [psutil.Process(doomed.proc.pid), *psutil.Process(doomed.proc.pid).children()]:
            process.send_signal(signal.SIGKILL)
        doomed.proc.wait(timeout=10)
    assert KnowledgePullRequest.objects.get(pk=pull_id).review_status == "PENDING"
    return pull_id, doomed.queue


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_review_lost_with_its_whole_worker_is_finished_by_the_sweep(api_client, settings):
    with running_llm_server() as llm:
        # given a review lost with its whole worker
        pull_id, _ = _whole_worker_killed_mid_review(api_client, llm, proposer="killed-worker-proposer")
        # when the review sweep runs (on beat) while another worker serves
        settings.MEMORYPR_REVIEW_SWEEP_AFTER_SECONDS = 0
        with running_worker(extra_env=_llm_env(llm.base_url)) as survivor, tasks_to(survivor):
            assert review_sweep_pending() >= 1
            # then the KPR is decided, once
            pull = wait_for(lambda: _decided(pull_id), timeout=90)
    assert pull.review_status == "APPROVED"
    _assert_decided_once(pull_id)


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_review_lost_with_its_whole_worker_is_taken_back_by_the_next_sole_worker(api_client):
    with running_llm_server() as llm:
        # given a review lost with its whole worker
        pull_id, queue = _whole_worker_killed_mid_review(api_client, llm, proposer="sole-worker-proposer")
        # when the next worker on that queue starts as its broker's only consumer (no sweep runs,
        # and the broker's visibility timeout is minutes away)
        sole = {**_llm_env(llm.base_url), "MEMORYPR_WORKER_SOLE_CONSUMER": "1"}
        with running_worker(extra_env=sole, queue=queue) as successor, tasks_to(successor):
            # then it reviews the KPR, once
            pull = wait_for(lambda: _decided(pull_id), timeout=90)
    assert pull.review_status == "APPROVED"
    _assert_decided_once(pull_id)
