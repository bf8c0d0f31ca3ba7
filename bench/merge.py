"""Merge benchmark: KPRs/s and operations/s into the fact store, embeddings included.

Setup (not timed): per subject, two KPRs of five operations, submitted through the service
(their review hand-off dropped) and approved by a system review event:
  1. CREATE four facts and one derived policy resting on the first of them;
  2. UPDATE the four facts (the policy goes stale) and CREATE a new policy on the new value.
Timed: every KPR merged one after another by `pull_merge` in this process, as one worker
does: read, batch-embed the KPR's values (all-MiniLM-L6-v2 on CPU), then the transaction
(locks, base re-check, versions, edges, stale propagation, vectors, audit, MERGED).

MEMORYPR_EMBEDDING_THREADS=1 pins torch to one thread (see memorypr.vectors.embedding).
The share of merge time spent embedding is the embedding time over the whole merge time.
A second pass merges the same workload with the embedding left out of the clock (the
values embedded for all KPRs at once beforehand), which is what the transaction alone costs.
"""

from __future__ import annotations

import os
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from django.db import transaction

from bench._http import percentile
from memorypr.agents.models import Agent, Namespace
from memorypr.agents.services import agent_create
from memorypr.common.locks import lock_pull
from memorypr.facts.models import FactStatus, FactVersion
from memorypr.facts.receivers import merge_enqueue
from memorypr.facts.services import pull_merge, pull_merge_apply
from memorypr.facts.services.merge import MergePreparation
from memorypr.facts.services.plan import stored_key
from memorypr.facts.services.stale import stale_max_depth
from memorypr.pulls.models import KnowledgePullRequest, Operation, ReviewEvent
from memorypr.pulls.services import pull_record_review, pull_submit
from memorypr.pulls.signals import pull_approved, pull_submitted
from memorypr.pulls.specs import OperationSpec, PullSpec
from memorypr.vectors.embedding import embed_texts
from memorypr.vectors.store import hnsw_parameters, vector_documents
from reviewer.receivers import review_enqueue

EVIDENCE = {"rawMessageQuote": "上个月我举家搬迁到了深圳, and I stopped drinking coffee", "timestamp": 0}
FACTS = [
    ("likes_coffee", "likes a strong coffee in the morning", "no longer drinks coffee"),
    ("home_city", "lives in Beijing near the Second Ring Road", "上个月我举家搬迁到了深圳"),
    ("job", "works as a nurse on night shifts", "teaches mathematics at a middle school"),
    ("pet", "has a cat called Miso", "has a cat and a small dog"),
]


def _op(action: str, key: str, new: Any = None, old: Any = None, **extra: Any) -> OperationSpec:
    category = extra.pop("category", "user_profile")
    return OperationSpec(
        action=action, category=category, key=key, old_value=old, new_value=new, confidence=0.9,
        evidence=EVIDENCE, **extra,
    )  # fmt: skip


def _workload(subject_index: int) -> list[list[OperationSpec]]:
    n = subject_index
    first = [_op("CREATE", key, f"{before} ({n})") for key, before, _ in FACTS]
    first.append(_op("CREATE", "offer_coffee", f"offer coffee when tired ({n})", category="derived",
                     derived_from=["likes_coffee"]))  # fmt: skip
    second = [_op("UPDATE", key, f"{after} ({n})", old=f"{before} ({n})") for key, before, after in FACTS]
    second.append(_op("CREATE", "offer_tea", f"offer green tea when tired ({n})", category="derived",
                      derived_from=["likes_coffee"]))  # fmt: skip
    return [first, second]


@contextmanager
def _no_handoffs() -> Iterator[None]:
    """The benchmark approves and merges its KPRs itself; review and merge tasks stay out of the way."""
    subscriptions = [
        (pull_submitted, review_enqueue, "reviewer.review_enqueue"),
        (pull_approved, merge_enqueue, "facts.merge_enqueue"),
    ]
    for signal, _, dispatch_uid in subscriptions:
        signal.disconnect(dispatch_uid=dispatch_uid)
    try:
        yield
    finally:
        for signal, receiver, dispatch_uid in subscriptions:
            signal.connect(receiver, dispatch_uid=dispatch_uid)


def _approve(pull: KnowledgePullRequest) -> None:
    with transaction.atomic():
        pull_record_review(
            pull=lock_pull(pull_id=str(pull.pk)), reviewer_kind="system", reviewer="bench",
            verdict=ReviewEvent.Verdict.APPROVE, status_after="APPROVED", reasons="benchmark",
        )  # fmt: skip


def _prepare_rounds(*, agent: Agent, namespace: Namespace, subjects: int) -> list[list[KnowledgePullRequest]]:
    rounds: list[list[KnowledgePullRequest]] = [[], []]
    with _no_handoffs():
        for s in range(subjects):
            for round_index, ops in enumerate(_workload(s)):
                spec = PullSpec(subject=f"user-{s}", operations=ops, proposed_by="bench")
                pull, _ = pull_submit(agent=agent, namespace=namespace, spec=spec)
                _approve(pull)
                rounds[round_index].append(pull)
    return rounds


def _summary(outcomes: list[Any], seconds: float, operations: int) -> dict[str, Any]:
    latencies = [o.seconds * 1000 for o in outcomes]
    embed = sum(o.embed_seconds for o in outcomes)
    merge_time = sum(o.seconds for o in outcomes)
    return {
        "kprs": len(outcomes),
        "operations": operations,
        "seconds": round(seconds, 3),
        "kprsPerSecond": round(len(outcomes) / seconds, 1),
        "operationsPerSecond": round(operations / seconds, 1),
        "embedSeconds": round(embed, 3),
        "embedShareOfMergeTime": round(embed / merge_time, 3) if merge_time else None,
        "mergeMs": {
            "p50": round(percentile(latencies, 50), 1),
            "p95": round(percentile(latencies, 95), 1),
            "max": round(max(latencies), 1),
        },
        "transactionMs": {
            "p50": round(percentile([(o.seconds - o.embed_seconds) * 1000 for o in outcomes], 50), 1),
            "p95": round(percentile([(o.seconds - o.embed_seconds) * 1000 for o in outcomes], 95), 1),
        },
        "statuses": dict(Counter(o.merge_status for o in outcomes)),
        "staleChanges": sum(o.stale for o in outcomes),
    }


def _merge_all(pulls: list[KnowledgePullRequest]) -> tuple[list[Any], float]:
    started = time.perf_counter()
    outcomes = [pull_merge(pull_id=str(p.pk)) for p in pulls]
    return outcomes, time.perf_counter() - started


def _merge_pre_embedded(pulls: list[KnowledgePullRequest]) -> tuple[list[Any], float]:
    """The same merges with every value embedded beforehand in one batch (off the clock)."""
    operations = list(Operation.objects.filter(pull__in=pulls).order_by("pull_id", "position"))
    writes = [op for op in operations if op.action in ("CREATE", "UPDATE")]
    documents = vector_documents(items=[(stored_key(op), op.new_value) for op in writes])
    by_pull: dict[Any, dict[int, Any]] = {}
    for op, document in zip(writes, documents, strict=True):
        by_pull.setdefault(op.pull_id, {})[op.position] = document
    ops_by_pull: dict[Any, list[Operation]] = {}
    for op in operations:
        ops_by_pull.setdefault(op.pull_id, []).append(op)
    started = time.perf_counter()
    outcomes = [
        pull_merge_apply(
            preparation=MergePreparation(
                pull_id=str(p.pk), operations=ops_by_pull[p.pk], documents=by_pull.get(p.pk, {}),
                embed_seconds=0.0, started=time.perf_counter(),
            )
        )
        for p in pulls
    ]  # fmt: skip
    return outcomes, time.perf_counter() - started


def run(options: dict[str, Any]) -> dict[str, Any]:
    subjects = 10 if options.get("quick") else 100
    embed_texts(["warm up the model before the clock starts"])
    load_before = os.getloadavg()
    tag = uuid.uuid4().hex[:8]
    agent, _ = agent_create(name=f"bench-merge-{tag}", namespaces=[f"bench-merge-{tag}"])
    namespace = Namespace.objects.get(name=f"bench-merge-{tag}")
    rounds = _prepare_rounds(agent=agent, namespace=namespace, subjects=subjects)
    # pass 1: merges as a worker runs them, embedding included (creates, then updates)
    outcomes, seconds = [], 0.0
    for pulls in rounds:
        merged, elapsed = _merge_all(pulls)
        outcomes += merged
        seconds += elapsed
    with_embedding = _summary(outcomes, seconds, operations=5 * len(outcomes))
    # pass 2: the same workload in a fresh namespace, values embedded beforehand
    agent2, _ = agent_create(name=f"bench-merge-{tag}-b", namespaces=[f"bench-merge-{tag}-b"])
    namespace2 = Namespace.objects.get(name=f"bench-merge-{tag}-b")
    rounds2 = _prepare_rounds(agent=agent2, namespace=namespace2, subjects=subjects)
    outcomes2, seconds2 = [], 0.0
    for pulls in rounds2:
        merged, elapsed = _merge_pre_embedded(pulls)
        outcomes2 += merged
        seconds2 += elapsed
    pre_embedded = _summary(outcomes2, seconds2, operations=5 * len(outcomes2))
    pre_embedded.pop("embedSeconds")
    pre_embedded.pop("embedShareOfMergeTime")
    active = FactVersion.objects.filter(namespace=namespace, status=FactStatus.ACTIVE).count()
    return {
        "workload": f"{subjects} subjects x 2 KPRs x 5 operations (creates, then updates that stale a policy)",
        "cpus": os.cpu_count(),
        "loadAverage1m": {"before": round(load_before[0], 2), "after": round(os.getloadavg()[0], 2)},
        "embeddingModel": "all-MiniLM-L6-v2 (CPU, one batch per KPR)",
        "embeddingThreads": torch.get_num_threads(),
        "hnsw": hnsw_parameters(),
        "staleMaxDepth": stale_max_depth(),
        "withEmbedding": with_embedding,
        "transactionOnly": pre_embedded,
        "activeFactsAfter": active,
    }
