"""Merging several APPROVED KPRs with one embedding batch (docs/architecture.md §3).

Embedding is most of a merge's cost, and the model embeds a batch of texts several times
faster per text than one KPR's few values. So a merge task drains the oldest approved,
unmerged KPRs of its merge lane (at most MEMORYPR_MERGE_BATCH, in approval order), embeds
every value they may write in one batch, outside any transaction, then merges each in its own
transaction, in that order: one KPR's conflict or failure never touches another's, and a KPR
approved later is never merged before one of the same subject approved earlier. KPRs of one
subject always share a lane; one task drains a lane at a time (`lock_merge_drain`), so two
workers never embed the same batch, and the lanes (MEMORYPR_MERGE_LANES) drain side by side.

A task that finds the drain taken does not only wait: it embeds the values of KPRs further
down the queue and leaves the vectors in the shared store (`merge_embed_ahead`), where the
drain finds them. The drain's one embedding thread is then no longer the limit of every
worker's merges together.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial

from memorypr.audit.services import audit_flushed_once
from memorypr.common.locks import lock_merge_drain
from memorypr.facts.conf import conf
from memorypr.facts.services.merge import (
    MergeOutcome,
    MergePreparation,
    merge_documents,
    pull_merge,
    pull_merge_apply,
    pull_merge_read_many,
)
from memorypr.facts.services.plan import stored_key
from memorypr.pulls.models import Action, MergeStatus, Operation
from memorypr.pulls.selectors import pull_ids_merge_queue, pull_merge_lane
from memorypr.vectors.embedding import shared_embeddings_fill
from memorypr.vectors.shared_cache import shared_work_claim
from memorypr.vectors.store import VectorDocument, embedding_texts


def pull_merge_batch(*, pull_ids: list[str]) -> list[MergeOutcome]:
    """Merge the KPRs in the order given, their values embedded in one batch first."""
    return _batch_apply(_batch_read(pull_ids=pull_ids, documents=_embedded_now))


@dataclass
class _Batch:
    """KPRs read for their merge, their documents being embedded (a future, maybe on a thread)."""

    pull_ids: list[str]
    preparations: list[MergePreparation]
    documents: Future[dict[int, VectorDocument]]
    embed_started: float


def _embedded_now(operations: list[Operation]) -> Future[dict[int, VectorDocument]]:
    done: Future[dict[int, VectorDocument]] = Future()
    done.set_result(merge_documents(operations=operations))
    return done


def _batch_read(
    *, pull_ids: list[str], documents: Callable[[list[Operation]], Future[dict[int, VectorDocument]]]
) -> _Batch:
    started = time.perf_counter()
    preparations = pull_merge_read_many(pull_ids=pull_ids, started=started)
    embed_started = time.perf_counter()
    return _Batch(
        pull_ids=pull_ids,
        preparations=preparations,
        documents=documents([op for p in preparations for op in p.operations]),
        embed_started=embed_started,
    )


def _batch_apply(batch: _Batch) -> list[MergeOutcome]:
    documents = batch.documents.result()
    share = (time.perf_counter() - batch.embed_started) / max(1, len(batch.preparations))
    outcomes = []
    # The task answers for the whole batch: one wait for the disk after its last commit.
    with audit_flushed_once():
        for preparation in batch.preparations:
            ready = replace(
                preparation,
                documents={
                    op.position: documents[op.pk] for op in preparation.operations if op.pk in documents
                },
                embed_seconds=share if preparation.skip is None else 0.0,
            )
            outcomes.append(pull_merge_apply(preparation=ready))
    return outcomes


def pull_merge_drain(*, pull_id: str) -> list[MergeOutcome]:
    """Merge `pull_id` together with the other KPRs waiting in its merge lane, oldest approval first.

    KPRs of one subject share a lane (MEMORYPR_MERGE_LANES of them); one task at a time drains
    a lane, and the lanes drain side by side, so two workers merge two subjects at once while
    each subject's KPRs merge in approval order. Batches of the lane's head are merged until
    `pull_id` has left the queue (merged, conflicted or failed); a KPR that is not waiting
    (merged already, not approved, unknown) is handed to `pull_merge`, which says why it is
    skipped.

    The batches are a pipeline of two stages: while one batch's transactions run, the next
    batch's values are embedded on a thread (the model releases the GIL, and the database
    waits leave a core free), so a drain costs about the larger of the two, not their sum.
    Nothing about order changes: the next batch is only read ahead, and merged after.
    """
    lanes = merge_lanes()
    lane = pull_merge_lane(pull_id=pull_id, lanes=lanes)
    if lane is None:
        # Most merge tasks find their KPR merged by an earlier task's batch: they end here,
        # without queueing behind the drain lock for the length of someone else's batch.
        return [pull_merge(pull_id=pull_id)]
    size = max(1, int(conf("MEMORYPR_MERGE_BATCH")))
    outcomes: list[MergeOutcome] = []

    def queue(limit: int) -> list[str]:
        return pull_ids_merge_queue(limit=limit, lane=lane, lanes=lanes)

    with (
        lock_merge_drain(lane=lane, while_waiting=partial(merge_embed_ahead, lane=lane)),
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="merge-embed") as embedder,
    ):

        def on_thread(operations: list[Operation]) -> Future[dict[int, VectorDocument]]:
            return embedder.submit(merge_documents, operations=operations)

        # Every batch takes its KPRs out of the queue (merged, conflicted, failed), so this ends;
        # a KPR that must wait for an earlier one of its subject stays, and a batch that moved
        # nothing ends the drain. A lost database connection raises, and the task is retried.
        batch = _batch_read(pull_ids=queue(size), documents=on_thread)
        while batch.pull_ids:
            upcoming = None
            if str(pull_id) not in batch.pull_ids:
                current = set(batch.pull_ids)
                ahead = [i for i in queue(2 * size) if i not in current][:size]
                upcoming = _batch_read(pull_ids=ahead, documents=on_thread)
            applied = _batch_apply(batch)
            outcomes += applied
            if upcoming is None or all(o.merge_status == MergeStatus.UNMERGED for o in applied):
                break
            batch = upcoming
    if not any(outcome.pull_id == str(pull_id) for outcome in outcomes):
        outcomes.append(pull_merge(pull_id=pull_id))
    return outcomes


def merge_lanes() -> int:
    """How many merge lanes drain side by side (MEMORYPR_MERGE_LANES, at least one)."""
    return max(1, int(conf("MEMORYPR_MERGE_LANES")))


def merge_embed_ahead(*, lane: int = 0) -> bool:
    """While another task drains the lane: embed, into the shared store, the values of up to one
    batch of the lane's KPRs waiting past the two batches the drain works on (the one it merges,
    the one it reads ahead), as many as MEMORYPR_MERGE_EMBED_AHEAD_BATCHES batches down the queue.

    True when it embedded some (there may be more to do); False when nothing is left to do, or
    when nothing can be shared. A KPR is claimed first, so that two waiting tasks never embed
    the same one; the drain embeds whatever it does not find, so nothing depends on this.
    """
    size = max(1, int(conf("MEMORYPR_MERGE_BATCH")))
    ahead = int(conf("MEMORYPR_MERGE_EMBED_AHEAD_BATCHES"))
    if ahead <= 0:
        return False
    waiting = pull_ids_merge_queue(limit=(2 + ahead) * size, lane=lane, lanes=merge_lanes())
    claimed = shared_work_claim(names=waiting[2 * size :], limit=size)
    if not claimed:
        return False
    writes = Operation.objects.filter(
        pull_id__in=[uuid.UUID(pull_id) for pull_id in claimed], action__in=(Action.CREATE, Action.UPDATE)
    )
    shared_embeddings_fill(embedding_texts(items=[(stored_key(op), op.new_value) for op in writes]))
    return True
