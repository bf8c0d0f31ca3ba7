"""Review benchmark: rules-only review throughput, and submit → decided latency.

Throughput: KPRs are stored first (their on-commit review hand-off dropped), then reviewed
one after another in this process by the pipeline, each in its own transaction; the merge
hand-off of approved ones is dropped too, so only the review is timed.

Latency: each KPR is submitted through the service with Celery in eager mode, so its review
runs exactly when the submission commits, as a worker would start it; latency is the time
from the KPR's creation to its decision (`reviewed_at − created_at`, same clock).

The KPRs are a mix: two-operation updates that pass, protected keys that escalate, stale
bases that are rejected. The namespace is rules-only, with no rate limit in the way.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from typing import Any

from django.db import connection, transaction

from bench._http import percentile
from memorypr.agents.models import Namespace
from memorypr.agents.services import agent_create
from memorypr.celery import app as celery_app
from memorypr.facts.models import FactStatus, FactVersion
from memorypr.pulls.models import KnowledgePullRequest
from memorypr.pulls.services import pull_submit
from memorypr.pulls.specs import OperationSpec, PullSpec
from reviewer.pipeline import pull_review
from reviewer.services import review_policy_set

QUOTE = {
    "rawMessageQuote": "I moved to Shenzhen last month and I started working as a teacher",
    "timestamp": 0,
}


def _spec(index: int) -> PullSpec:
    """Every 5th KPR changes a protected key (escalates), every 7th has a stale base (rejected)."""
    city_base = "Shanghai" if index % 7 == 3 else "Beijing"
    second = (
        OperationSpec(action="UPDATE", category="user_profile", key="food_allergy", old_value="peanut",
                      new_value="shrimp", confidence=0.9, evidence=QUOTE)
        if index % 5 == 0
        else OperationSpec(action="CREATE", category="user_profile", key="job", new_value="teacher",
                           confidence=0.9, evidence=QUOTE)
    )  # fmt: skip
    return PullSpec(
        subject=f"user-{index}",
        source_session_id=f"session-{index}",
        operations=[
            OperationSpec(action="UPDATE", category="user_profile", key="home_city", old_value=city_base,
                          new_value="Shenzhen", confidence=0.92, evidence=QUOTE),
            second,
        ],
    )  # fmt: skip


def _current_facts(*, namespace: Namespace, subjects: range) -> None:
    FactVersion.objects.bulk_create(
        FactVersion(namespace=namespace, subject=f"user-{i}", category="user_profile", key=key, value=value,
                    version=1, status=FactStatus.ACTIVE, confidence=0.9, importance=0.5)
        for i in subjects
        for key, value in (("home_city", "Beijing"), ("food_allergy", "peanut"))
    )  # fmt: skip


def _drop_on_commit_hand_offs() -> None:
    # The callbacks registered inside the enclosing atomic block (review or merge hand-off);
    # this benchmark runs the review itself, and times nothing but the review.
    connection.run_on_commit.clear()


def run(options: dict[str, Any]) -> dict[str, Any]:
    quick = bool(options.get("quick"))
    throughput_n, latency_n = (100, 50) if quick else (1000, 300)
    tag = uuid.uuid4().hex[:8]
    agent, _ = agent_create(name=f"bench-review-{tag}", namespaces=[f"bench-review-{tag}"])
    namespace = Namespace.objects.get(name=f"bench-review-{tag}")
    review_policy_set(namespace=namespace, actor="bench", mode="rules_only", agent_hourly_limit=10**9)
    _current_facts(namespace=namespace, subjects=range(throughput_n + latency_n))

    # Throughput: store, then review.
    with transaction.atomic():
        ids = [
            str(pull_submit(agent=agent, namespace=namespace, spec=_spec(i))[0].id)
            for i in range(throughput_n)
        ]
        _drop_on_commit_hand_offs()
    per_review: list[float] = []
    started = time.perf_counter()
    for pull_id in ids:
        t0 = time.perf_counter()
        with transaction.atomic():
            pull_review(pull_id=pull_id)
            _drop_on_commit_hand_offs()
        per_review.append((time.perf_counter() - t0) * 1000)
    elapsed = time.perf_counter() - started
    statuses = Counter(
        KnowledgePullRequest.objects.filter(pk__in=ids).values_list("review_status", flat=True)
    )

    # Latency: submit with the review run on commit.
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    try:
        latency_ids = [
            str(pull_submit(agent=agent, namespace=namespace, spec=_spec(i))[0].id)
            for i in range(throughput_n, throughput_n + latency_n)
        ]
    finally:
        celery_app.conf.task_always_eager = previous
    decided = KnowledgePullRequest.objects.filter(pk__in=latency_ids, reviewed_at__isnull=False)
    latencies = [(p.reviewed_at - p.created_at).total_seconds() * 1000 for p in decided if p.reviewed_at]

    return {
        "kprs": throughput_n,
        "operationsPerKpr": 2,
        "rulesOnlyThroughputKprsPerSecond": round(throughput_n / elapsed, 1),
        "rulesOnlyThroughputOperationsPerSecond": round(2 * throughput_n / elapsed, 1),
        "reviewMsP50": round(percentile(per_review, 50), 2),
        "reviewMsP95": round(percentile(per_review, 95), 2),
        "statuses": dict(sorted(statuses.items())),
        "latencySamples": latency_n,
        "latencyDecided": len(latencies),
        "submitToDecidedMsP50": round(percentile(latencies, 50), 2),
        "submitToDecidedMsP95": round(percentile(latencies, 95), 2),
        "note": "one process, embedded PostgreSQL; review in-process (eager) on commit for latency",
    }
