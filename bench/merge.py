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
Then the same workload is merged by `pull_merge_batch` in batches of 1, 5, 10, 20 and 50 KPRs
(one embedding batch per batch of KPRs, each KPR in its own transaction), and finally through
a real Celery worker (concurrency 2) on this benchmark's broker: every approved KPR's merge
task is enqueued at once, in approval order, and the clock stops when the last is merged. That
pass also counts the CPU each KPR cost the worker, PostgreSQL and the whole machine: the
machine's cores over its figure bound what any worker setup could merge here.
"""

from __future__ import annotations

import os
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
from django.conf import settings
from django.db import connection, transaction

from bench._http import percentile
from bench._processes import (
    celery_worker,
    cpu_meter,
    cpu_ms_per,
    database_server_group,
    process_tree,
    worker_settled,
)
from memorypr.agents.models import Agent, Namespace
from memorypr.agents.services import agent_create
from memorypr.celery import app as celery_app
from memorypr.common.locks import lock_pull
from memorypr.facts.conf import conf as facts_conf
from memorypr.facts.models import FactStatus, FactVersion
from memorypr.facts.receivers import merge_enqueue
from memorypr.facts.services import pull_merge, pull_merge_apply, pull_merge_batch
from memorypr.facts.services.batch import merge_lanes
from memorypr.facts.services.merge import MergePreparation
from memorypr.facts.services.plan import stored_key
from memorypr.facts.services.stale import stale_max_depth
from memorypr.facts.tasks import merge_pull
from memorypr.pulls.models import KnowledgePullRequest, MergeStatus, Operation, ReviewEvent
from memorypr.pulls.services import pull_record_review, pull_submit
from memorypr.pulls.signals import pull_approved, pull_submitted
from memorypr.pulls.specs import OperationSpec, PullSpec
from memorypr.vectors.bulk import BF16_FLAGS, cpu_flags
from memorypr.vectors.embedding import embed_texts, embedding_cache
from memorypr.vectors.shared_cache import shared_vectors_clear
from memorypr.vectors.store import hnsw_parameters, vector_documents
from reviewer.receivers import review_enqueue

# A machine that runs workers only, set as README's deployment notes suggest: merges embedded in
# bfloat16 where the CPU multiplies it, and about one lane per worker process (two here).
WORKER_MACHINE = {"MEMORYPR_EMBEDDING_BULK": "auto", "MEMORYPR_MERGE_LANES": "2"}
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


def _merge_batched(size: int) -> Callable[[list[KnowledgePullRequest]], tuple[list[Any], float]]:
    def merge(pulls: list[KnowledgePullRequest]) -> tuple[list[Any], float]:
        started = time.perf_counter()
        outcomes = []
        for start in range(0, len(pulls), size):
            outcomes += pull_merge_batch(pull_ids=[str(p.pk) for p in pulls[start : start + size]])
        return outcomes, time.perf_counter() - started

    return merge


def _fresh_rounds(tag: str, subjects: int) -> tuple[Namespace, list[list[KnowledgePullRequest]]]:
    agent, _ = agent_create(name=f"bench-merge-{tag}", namespaces=[f"bench-merge-{tag}"])
    namespace = Namespace.objects.get(name=f"bench-merge-{tag}")
    return namespace, _prepare_rounds(agent=agent, namespace=namespace, subjects=subjects)


def _pass(
    tag: str, subjects: int, merge: Callable[[list[KnowledgePullRequest]], tuple[list[Any], float]]
) -> dict[str, Any]:
    """The workload in a fresh namespace, creates then updates, merged by `merge`."""
    _, rounds = _fresh_rounds(tag, subjects)
    # Every pass merges the same values: the vectors an earlier pass left in this process's
    # cache and in the shared store would make this one's embedding free.
    embedding_cache().clear()
    shared_vectors_clear()
    outcomes, seconds = [], 0.0
    for pulls in rounds:
        merged, elapsed = merge(pulls)
        outcomes += merged
        seconds += elapsed
    return _summary(outcomes, seconds, operations=5 * len(outcomes))


def _wait_merged(waiting: Any, timeout: float = 600) -> None:
    deadline = time.perf_counter() + timeout
    while waiting.exists():
        if time.perf_counter() > deadline:
            raise RuntimeError(f"{waiting.count()} KPR(s) not merged by the worker in {timeout:.0f} s")
        time.sleep(0.02)


def _through_worker(tag: str, subjects: int, *, settings_env: dict[str, str] | None = None) -> dict[str, Any]:
    """Every merge task enqueued at once on a real worker's queue; seconds until the last is merged.

    `settings_env`: the worker's own settings on top of this process's (a worker machine's).
    """
    queue = f"bench-merge-{tag}"
    env = {
        "DJANGO_SETTINGS_MODULE": "memorypr.settings",
        "DATABASE_URL": settings.DATABASE_URL,
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        **(settings_env or {}),
    }
    with celery_worker(queue=queue, env=env, concurrency=2, ready_timeout=120) as worker:
        # the worker's first merges load the embedding model: off the clock
        warm_namespace, warm_rounds = _fresh_rounds(f"{tag}-warm", 1)
        for pull in (p for r in warm_rounds for p in r):
            merge_pull.apply_async(args=[str(pull.pk)], queue=queue)
        _wait_merged(
            KnowledgePullRequest.objects.filter(namespace=warm_namespace, merge_status=MergeStatus.UNMERGED)
        )
        worker_settled(worker)  # and each child has loaded its models in the background
        # approved after the warm-up has drained the queue, so none of them is merged before the clock
        namespace, rounds = _fresh_rounds(tag, subjects)
        # the first pass left these values' vectors in the shared store: the worker embeds them itself
        shared_vectors_clear()
        pulls = sorted((p for r in rounds for p in r), key=lambda p: (p.reviewed_at, p.created_at, p.pk))
        waiting = KnowledgePullRequest.objects.filter(namespace=namespace, merge_status=MergeStatus.UNMERGED)
        groups = {
            "worker": lambda: process_tree(worker.proc.pid),
            "postgres": database_server_group(),
        }
        with cpu_meter(groups) as cpu:
            started = time.perf_counter()
            for pull in pulls:
                merge_pull.apply_async(args=[str(pull.pk)], queue=queue)
            _wait_merged(waiting)
            seconds = time.perf_counter() - started
    statuses = Counter(
        KnowledgePullRequest.objects.filter(namespace=namespace).values_list("merge_status", flat=True)
    )
    return {
        "kprs": len(pulls),
        "seconds": round(seconds, 3),
        "kprsPerSecond": round(len(pulls) / seconds, 1),
        "operationsPerSecond": round(5 * len(pulls) / seconds, 1),
        # the worker's processes (embedding, merge transactions, Celery), PostgreSQL's, the machine's
        "cpuMsPerKpr": cpu_ms_per(cpu, len(pulls)),
        "statuses": dict(statuses),
        "workerConcurrency": 2,
        "mergeBatch": int(facts_conf("MEMORYPR_MERGE_BATCH")),
        "mergeLanes": int(env.get("MEMORYPR_MERGE_LANES") or merge_lanes()),
        "embeddingBulk": {**os.environ, **env}.get("MEMORYPR_EMBEDDING_BULK", "off"),
    }


# Every fact this benchmark merged, in any run: its namespaces are all named bench-merge-*.
_MERGED_HERE = """SELECT f.id FROM facts_factversion f JOIN agents_namespace n ON n.id = f.namespace_id
    WHERE n.name LIKE 'bench-merge-%%'"""


def _forget_merged_facts() -> None:
    """The facts (with their edges and marks) that this benchmark merged, gone from the store.

    The benchmarks share one store. Each run leaves about 4,400 active facts that are nearly
    the same text ("likes a strong coffee in the morning (17)"), and the retrieval and API
    benchmarks that run after it walk one HNSW index over every namespace: after sixteen runs
    (70k such facts), a walk for "does the user like latte" met 20,000 of them before any
    fact of its own subject, and every such query fell back to an exact scan (110-160 ms
    instead of 5). The KPRs and their audit events stay: they are history, not memory.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM facts_factedge WHERE source_id IN ({_MERGED_HERE}) OR target_id IN ({_MERGED_HERE})"
        )
        cursor.execute(f"DELETE FROM evolution_forgettingmark WHERE fact_id IN ({_MERGED_HERE})")
        cursor.execute(f"DELETE FROM facts_factversion WHERE id IN ({_MERGED_HERE})")
        # The deleted versions stay in the HNSW graphs and the heap until a vacuum: left to
        # autovacuum, it would start during a later pass and be measured with it (the first
        # worker pass after a cleanup cost PostgreSQL 19-20 ms per KPR instead of 9-11).
        for table in ("facts_factedge", "evolution_forgettingmark", "facts_factversion"):
            cursor.execute(f"VACUUM ANALYZE {table}")


def _store_size() -> dict[str, int]:
    """The fact store the merges write into: its versions, and its active ones (in the graphs)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*), count(*) FILTER (WHERE status = 'active') FROM facts_factversion")
        versions, active = cursor.fetchone()
    return {"versions": int(versions), "activeInGraphs": int(active)}


def run(options: dict[str, Any]) -> dict[str, Any]:
    subjects = 10 if options.get("quick") else 100
    _forget_merged_facts()  # what earlier runs left
    embed_texts(["warm up the model before the clock starts"])
    shared_vectors_clear()  # a run minutes ago leaves the same values' vectors there
    load_before = os.getloadavg()
    store_before = _store_size()
    tag = uuid.uuid4().hex[:8]
    # pass 1: merges as a worker ran them one by one, embedding included (creates, then updates)
    namespace, rounds = _fresh_rounds(tag, subjects)
    outcomes, seconds = [], 0.0
    for pulls in rounds:
        merged, elapsed = _merge_all(pulls)
        outcomes += merged
        seconds += elapsed
    with_embedding = _summary(outcomes, seconds, operations=5 * len(outcomes))
    # pass 2: the same workload in a fresh namespace, values embedded beforehand
    pre_embedded = _pass(f"{tag}-b", subjects, _merge_pre_embedded)
    pre_embedded.pop("embedSeconds")
    pre_embedded.pop("embedShareOfMergeTime")
    # pass 3: one embedding batch per batch of KPRs
    by_batch = {}
    for size in (1, 5, 10, 20, 50):
        summary = _pass(f"{tag}-batch{size}", subjects, _merge_batched(size))
        by_batch[str(size)] = {k: summary[k] for k in ("kprsPerSecond", "operationsPerSecond", "statuses")}
    # pass 4: a real worker, fed every task at once
    celery_app.conf.task_always_eager = False
    worker = _through_worker(f"{tag}-worker", subjects)
    # pass 5: the same, with a worker machine's settings: bfloat16 merges where the CPU has them,
    # and one lane per worker process
    worker_machine: dict[str, Any] = {"skipped": "this CPU multiplies no bfloat16 in hardware"}
    if BF16_FLAGS & cpu_flags():
        worker_machine = _through_worker(f"{tag}-bf16", subjects, settings_env=WORKER_MACHINE)
    active = FactVersion.objects.filter(namespace=namespace, status=FactStatus.ACTIVE).count()
    _forget_merged_facts()
    return {
        "workload": f"{subjects} subjects x 2 KPRs x 5 operations (creates, then updates that stale a policy)",
        "cpus": os.cpu_count(),
        "loadAverage1m": {"before": round(load_before[0], 2), "after": round(os.getloadavg()[0], 2)},
        "embeddingModel": "all-MiniLM-L6-v2 (CPU, one batch per KPR)",
        "embeddingThreads": torch.get_num_threads(),
        "hnsw": hnsw_parameters(),
        "staleMaxDepth": stale_max_depth(),
        # Each new version joins its subject group's HNSW graph: the larger the graphs, the dearer
        # an insert (2.3-3.9 ms a row here in graphs of 4k-18k rows, against 0.7 ms without).
        "storeBefore": store_before,
        "withEmbedding": with_embedding,
        "transactionOnly": pre_embedded,
        "batchedByKprs": by_batch,
        "throughWorker": worker,
        "throughWorkerMachineSettings": worker_machine,
        "withEmbeddingToTransactionOnly": round(
            with_embedding["kprsPerSecond"] / pre_embedded["kprsPerSecond"], 3
        ),
        "batch20ToTransactionOnly": round(by_batch["20"]["kprsPerSecond"] / pre_embedded["kprsPerSecond"], 3),
        "activeFactsAfter": active,
    }
