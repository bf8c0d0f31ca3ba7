from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memorypr.audit.models import AuditEvent
from memorypr.facts.tasks import merge_pull, merge_sweep_approved
from memorypr.pulls.models import KnowledgePullRequest, MergeStatus
from memorypr.pulls.selectors import pull_merge_lane
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


def test_the_sweep_merges_approved_kprs_whose_hand_off_was_lost(proposer, namespace, settings):
    # given an approved KPR whose merge task never ran, and a fresh approval
    settings.MEMORYPR_MERGE_SWEEP_AFTER_SECONDS = 60
    lost = approved(proposer, namespace, create("home_city", "Beijing"))
    KnowledgePullRequest.objects.filter(pk=lost.pk).update(reviewed_at=timezone.now() - timedelta(minutes=5))
    fresh = approved(proposer, namespace, create("pet", "cat"))
    # when the sweep runs (eager in the test settings)
    handed_over = merge_sweep_approved()
    # then only the lost one is handed over; its merge takes the other waiting KPR along, after it
    assert handed_over == 1
    lost.refresh_from_db()
    fresh.refresh_from_db()
    assert (lost.merge_status, fresh.merge_status) == (MergeStatus.MERGED, MergeStatus.MERGED)
    assert lost.merged_at <= fresh.merged_at
    # and a second sweep finds nothing
    assert merge_sweep_approved() == 0


def test_the_sweep_hands_over_a_backlog_with_one_task_per_lane(proposer, namespace, settings):
    # given two merge lanes, and lost hand-offs of at least five subjects, in both lanes
    settings.MEMORYPR_MERGE_SWEEP_AFTER_SECONDS = 15
    settings.MEMORYPR_MERGE_LANES = 2
    long_ago = timezone.now() - timedelta(minutes=5)
    lost, lanes = [], set()
    while len(lost) < 5 or lanes != {0, 1}:  # a subject's lane is a hash: take subjects until both are hit
        index = len(lost)
        pull = approved(proposer, namespace, create("home_city", f"City {index}"), subject=f"user-{index}")
        KnowledgePullRequest.objects.filter(pk=pull.pk).update(
            reviewed_at=long_ago + timedelta(seconds=index)
        )
        lost.append(pull.pk)
        lanes.add(pull_merge_lane(pull_id=str(pull.pk), lanes=2))
    # when the sweep runs (eager in the test settings)
    handed_over = merge_sweep_approved()
    # then one task per lane merged every lost KPR
    assert handed_over == 2
    statuses = KnowledgePullRequest.objects.filter(pk__in=lost).values_list("merge_status", flat=True)
    assert set(statuses) == {MergeStatus.MERGED}
    assert AuditEvent.objects.filter(pull_id__in=lost, event_type="pull.merged").count() == len(lost)
    assert merge_sweep_approved() == 0


def test_the_merge_sweep_is_on_the_beat_schedule(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["merge-sweep-approved"]
    assert entry["task"] == merge_sweep_approved.name
