from __future__ import annotations

import pytest

from memorypr.audit.models import AuditEvent
from memorypr.facts.tasks import merge_pull
from memorypr.pulls.models import KnowledgePullRequest, MergeStatus
from memorypr.pulls.services import pull_human_decide
from tests.facts.kprs import active, approved, create, submit, versions
from tests.worker import wait_for

pytestmark = pytest.mark.django_db


def test_the_task_merges_an_approved_kpr(proposer, namespace):
    pull = approved(proposer, namespace, create("home_city", "Beijing"))
    merge_pull.delay(str(pull.pk))  # eager in the test settings
    pull.refresh_from_db()
    assert pull.merge_status == MergeStatus.MERGED and active(namespace, "home_city").value == "Beijing"


def test_a_human_approval_with_an_exclusion_is_merged_after_commit(
    proposer, namespace, django_capture_on_commit_callbacks
):
    # given a queued KPR
    pull = submit(proposer, namespace, create("home_city", "Beijing"), create("salary", 1000))
    # when a human approves it without the salary, and the approval commits
    with django_capture_on_commit_callbacks(execute=True):
        pull_human_decide(
            pull_id=str(pull.pk),
            reviewer="ann",
            verdict="APPROVE",
            reason="salary is private",
            excluded_operations=[1],
        )
    # then the merge ran with the approved operation only
    pull.refresh_from_db()
    assert pull.merge_status == MergeStatus.MERGED
    assert active(namespace, "home_city").value == "Beijing" and versions(namespace, "salary") == []


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_merges_after_a_human_approval(live_worker, proposer, namespace, no_review_handoff):
    # given a queued KPR and a running worker
    pull = submit(proposer, namespace, create("home_city", "上个月我举家搬迁到了深圳"))
    # when a human approves it (the merge task goes to the broker on commit)
    pull_human_decide(
        pull_id=str(pull.pk), reviewer="ann", verdict="APPROVE", reason="verified with the user"
    )
    # then the worker merges it, embedding included
    wait_for(
        lambda: KnowledgePullRequest.objects.filter(pk=pull.pk, merge_status="MERGED").exists(), timeout=120
    )
    fact = active(namespace, "home_city")
    assert fact.embedding is not None and "深圳" in fact.search_text.split()
    assert AuditEvent.objects.filter(pull_id=pull.pk, event_type="pull.merged", actor="system:merge").exists()
