"""Real concurrent merges: one thread (and one database connection) per merge, on committed data."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from memorypr.audit.models import AuditEvent
from memorypr.facts.models import FactStatus, FactVersion
from memorypr.facts.services import MergeOutcome, pull_merge_apply, pull_merge_drain, pull_merge_prepare
from memorypr.pulls.models import KnowledgePullRequest, MergeStatus
from tests.facts.kprs import approved, create, merged, update

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("no_review_handoff", "no_merge_handoff"),
]


def run_concurrently(calls: list[Callable[[], Any]]) -> list[Any]:
    """Start every call at the same moment, each in its own thread with its own connection."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)
    errors: list[BaseException] = []

    def worker(index: int, call: Callable[[], Any]) -> None:
        try:
            barrier.wait(timeout=30)
            results[index] = call()
        except BaseException as exc:  # surfaced below: a thread must not fail silently
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    assert not any(thread.is_alive() for thread in threads)
    return results


def merge_call(pull: KnowledgePullRequest) -> Callable[[], MergeOutcome]:
    """The embedding happens here, up front, so that the merge transactions really overlap."""
    preparation = pull_merge_prepare(pull_id=str(pull.pk))
    return lambda: pull_merge_apply(preparation=preparation)


def _drain_the_rest(pulls: list[KnowledgePullRequest], outcomes: list[MergeOutcome]) -> list[MergeOutcome]:
    """The KPRs that waited their turn in the concurrent round, merged as the drain would (in
    approval order); every KPR's final outcome, in the order given."""
    final = {o.pull_id: o for o in outcomes if o.merge_status != MergeStatus.UNMERGED}
    for outcome in pull_merge_drain(pull_id=str(pulls[-1].pk)):
        final.setdefault(outcome.pull_id, outcome)
    return [final[str(p.pk)] for p in pulls]


def test_twenty_concurrent_updates_of_one_base_have_exactly_one_winner(proposer, namespace):
    # given one fact and 20 approved KPRs that all update it from the same base
    merged(proposer, namespace, create("home_city", "Beijing"))
    pulls = [approved(proposer, namespace, update("home_city", "Beijing", f"city-{i}")) for i in range(20)]
    # when all 20 merge at once
    outcomes = run_concurrently([merge_call(p) for p in pulls])
    # then the first approved won; none of the others wrote anything: each conflicted or waited
    # for the KPRs of its subject approved before it
    assert outcomes[0].merged and not any(o.merged for o in outcomes[1:])
    assert {o.merge_status for o in outcomes[1:]} <= {MergeStatus.CONFLICT, MergeStatus.UNMERGED}
    # and when those that waited merge in their turn, each conflicts and names the winner's value
    outcomes = _drain_the_rest(pulls, outcomes)
    assert Counter(o.merge_status for o in outcomes) == {MergeStatus.MERGED: 1, MergeStatus.CONFLICT: 19}
    winner_value = pulls[0].operations.get().new_value
    for pull in pulls[1:]:
        pull.refresh_from_db()
        assert pull.merge_status == MergeStatus.CONFLICT
        assert f'current value "{winner_value}" (v2)' in pull.merge_feedback
    # and the store has one active version, the winner's, over the superseded base
    rows = list(
        FactVersion.objects.filter(key="home_city")
        .order_by("version")
        .values_list("version", "value", "status")
    )
    assert rows == [(1, "Beijing", FactStatus.SUPERSEDED), (2, winner_value, FactStatus.ACTIVE)]
    assert AuditEvent.objects.filter(event_type="pull.merged", pull_id__in=[p.pk for p in pulls]).count() == 1
    assert AuditEvent.objects.filter(event_type="pull.merge_conflict").count() == 19
    assert AuditEvent.objects.filter(event_type="fact.updated").count() == 1


def test_concurrent_merges_one_winner_per_base_and_no_lost_update(proposer, namespace):
    # given four facts with five competing updates each, and five independent creations
    keys = [f"key-{k}" for k in range(4)]
    merged(proposer, namespace, *[create(key, "v0") for key in keys])
    competing = [
        approved(proposer, namespace, update(key, "v0", f"{key}-by-{i}")) for key in keys for i in range(5)
    ]
    independent = [approved(proposer, namespace, create(f"new-{i}", i)) for i in range(5)]
    # when all 25 merge at once, and those that waited for their turn merge after
    outcomes = run_concurrently([merge_call(p) for p in competing + independent])
    outcomes = _drain_the_rest(competing + independent, outcomes)
    # then every base has exactly one winner, the first approved, and no independent write is lost
    by_key: dict[str, Counter[str]] = {key: Counter() for key in keys}
    for pull, outcome in zip(competing, outcomes[:20], strict=True):
        by_key[pull.operations.get().key][outcome.merge_status] += 1
    assert all(counts == {MergeStatus.MERGED: 1, MergeStatus.CONFLICT: 4} for counts in by_key.values()), (
        by_key
    )
    assert [o.merged for o in outcomes[:20]] == [i % 5 == 0 for i in range(20)]
    assert all(o.merge_status == MergeStatus.MERGED for o in outcomes[20:])
    for key in keys:
        assert FactVersion.objects.filter(key=key, status=FactStatus.ACTIVE).count() == 1
        assert FactVersion.objects.filter(key=key).count() == 2
    assert FactVersion.objects.filter(key__startswith="new-", status=FactStatus.ACTIVE).count() == 5


def test_the_same_kpr_merged_by_five_workers_at_once_merges_once(proposer, namespace):
    # given
    pull = approved(proposer, namespace, create("home_city", "Beijing"), create("likes_tea", True))
    # when five workers pick it up together (a redelivered task, say)
    outcomes = run_concurrently([merge_call(pull)] * 5)
    # then one merged it; the others found it merged
    assert sum(o.merged for o in outcomes) == 1
    assert all(o.detail == "already merged" for o in outcomes if not o.merged)
    assert FactVersion.objects.count() == 2
    assert AuditEvent.objects.filter(event_type="pull.merged").count() == 1
