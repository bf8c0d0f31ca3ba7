"""Merging several APPROVED KPRs with one embedding batch (docs/architecture.md §3).

Embedding is most of a merge's cost, and the model embeds a batch of texts several times
faster per text than one KPR's few values. So a merge task drains the oldest approved,
unmerged KPRs (at most MEMORYPR_MERGE_BATCH, in approval order), embeds every value they may
write in one batch, outside any transaction, then merges each in its own transaction, in
that order: one KPR's conflict or failure never touches another's, and a KPR approved
later is never merged before one approved earlier in the same batch. One task drains at a
time (`lock_merge_drain`), so two workers never embed the same batch.
"""

from __future__ import annotations

import time
from dataclasses import replace

from memorypr.common.locks import lock_merge_drain
from memorypr.facts.conf import conf
from memorypr.facts.services.merge import (
    MergeOutcome,
    merge_documents,
    pull_merge,
    pull_merge_apply,
    pull_merge_read,
)
from memorypr.pulls.selectors import pull_awaits_merge, pull_ids_merge_queue


def pull_merge_batch(*, pull_ids: list[str]) -> list[MergeOutcome]:
    """Merge the KPRs in the order given, their values embedded in one batch first."""
    started = time.perf_counter()
    preparations = [pull_merge_read(pull_id=pull_id, started=started) for pull_id in pull_ids]
    embed_started = time.perf_counter()
    documents = merge_documents(operations=[op for p in preparations for op in p.operations])
    share = (time.perf_counter() - embed_started) / max(1, len(preparations))
    outcomes = []
    for preparation in preparations:
        ready = replace(
            preparation,
            documents={op.position: documents[op.pk] for op in preparation.operations if op.pk in documents},
            embed_seconds=share if preparation.skip is None else 0.0,
        )
        outcomes.append(pull_merge_apply(preparation=ready))
    return outcomes


def pull_merge_drain(*, pull_id: str) -> list[MergeOutcome]:
    """Merge `pull_id` together with the other KPRs waiting for their merge, oldest approval first.

    Batches of the waiting queue's head are merged until `pull_id` has left the queue
    (merged, conflicted or failed); a KPR that is not waiting (merged already, not approved,
    unknown) is handed to `pull_merge`, which says why it is skipped.
    """
    size = max(1, int(conf("MEMORYPR_MERGE_BATCH")))
    outcomes: list[MergeOutcome] = []
    with lock_merge_drain():
        # Every batch takes its KPRs out of the queue (merged, conflicted, failed), so this ends;
        # a lost database connection raises, and the task is retried.
        while pull_awaits_merge(pull_id=pull_id):
            queue = pull_ids_merge_queue(limit=size)
            outcomes += pull_merge_batch(pull_ids=queue)
            if str(pull_id) in queue:
                break
    if not any(outcome.pull_id == str(pull_id) for outcome in outcomes):
        outcomes.append(pull_merge(pull_id=pull_id))
    return outcomes
