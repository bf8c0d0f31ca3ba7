"""Merge an APPROVED KPR into the fact store and the vector store (docs/architecture.md).

Embeddings are computed first, outside any transaction (one batch per KPR, or per batch of
KPRs: `batch`). Then one
transaction: lock the KPR, lock its subject, re-check every base against the current
facts (something may have merged since the review), and either record a CONFLICT with the
current values and write nothing, or write the versions, edges, stale propagation,
vectors and audit events and mark the KPR MERGED. Locks in the documented order
(memorypr.common.locks): the KPR, the subject, the fact rows (the plan's and those the stale
propagation updates), and the audit chain last, so every write comes before the first
audit event. An exception anywhere rolls all of it back; the failure is then recorded
(merge_status FAILED) in a transaction of its own.

The plan (re-check) lives in `plan`, the writes in `writes`. Edges, by operation:
- UPDATE: new version UPDATES the one it supersedes. With relation QUALIFIES the base stays
  active: the new value is written under `<key>:qualifier` and QUALIFIES the base.
  CONTRADICTS / SUPPORTS / CONTEXT_FOR add that edge to the superseded version.
- CREATE: a relation links the new version to its derivedFrom facts with that edge type.
- derivedFrom: DERIVED_FROM edges to the active version of each key (same namespace and
  subject, any category; facts written by the same KPR count). An UPDATE without
  derivedFrom keeps the dependencies of the version it replaces, so a rewritten conclusion
  still goes stale when its basis changes.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, replace
from typing import Any

from django.db import InterfaceError, OperationalError, transaction
from django.utils import timezone

from memorypr.audit.services import audit_batch, audit_record
from memorypr.common.canonical import canonical_json
from memorypr.common.locks import lock_pull, lock_subjects
from memorypr.facts.services.plan import merge_plan, stored_key
from memorypr.facts.services.stale import fact_stale_audit, fact_stale_mark
from memorypr.facts.services.writes import ACTOR, edges_write, steps_audit, versions_write
from memorypr.pulls.models import (
    Action,
    KnowledgePullRequest,
    MergeStatus,
    Operation,
    ReviewStatus,
)
from memorypr.pulls.selectors import pull_final_exclusions, pull_id_merging_first
from memorypr.vectors.store import VectorDocument, vector_documents

logger = logging.getLogger(__name__)

__all__ = [
    "MergeOutcome",
    "MergePreparation",
    "merge_documents",
    "pull_merge",
    "pull_merge_apply",
    "pull_merge_prepare",
    "pull_merge_read",
    "pull_merge_read_many",
    "stored_key",
]


@dataclass(frozen=True)
class MergeOutcome:
    pull_id: str
    merge_status: str
    merged: bool  # this call wrote the merge (False: conflict, failure or no-op)
    detail: str = ""
    operations: int = 0
    stale: int = 0
    embed_seconds: float = 0.0
    seconds: float = 0.0


def _skip_reason(pull: KnowledgePullRequest) -> str:
    if pull.merge_status == MergeStatus.MERGED:
        return "already merged"
    if pull.merge_status == MergeStatus.CONFLICT:
        return "conflicted: the proposer submits a new KPR against the current values"
    if pull.review_status != ReviewStatus.APPROVED:
        return f"review status is {pull.review_status}; only APPROVED KPRs merge"
    return ""


@dataclass(frozen=True)
class MergePreparation:
    """What a merge needs before its transaction: the KPR's operations and their embeddings."""

    pull_id: str
    operations: list[Operation]
    documents: dict[int, VectorDocument]
    embed_seconds: float
    started: float
    skip: MergeOutcome | None = None


def pull_merge(*, pull_id: str) -> MergeOutcome:
    """Merge one APPROVED KPR; merging a merged (or conflicted) KPR is a no-op."""
    return pull_merge_apply(preparation=pull_merge_prepare(pull_id=pull_id))


def pull_merge_prepare(*, pull_id: str) -> MergePreparation:
    """Read the KPR and embed everything it may write, in one batch, outside any transaction."""
    preparation = pull_merge_read(pull_id=pull_id, started=time.perf_counter())
    embed_started = time.perf_counter()
    documents = merge_documents(operations=preparation.operations)
    return replace(
        preparation,
        documents={op.position: documents[op.pk] for op in preparation.operations if op.pk in documents},
        embed_seconds=time.perf_counter() - embed_started,
    )


def pull_merge_read(*, pull_id: str, started: float) -> MergePreparation:
    """The KPR's operations (none, and why, when it is not to be merged); nothing embedded yet."""
    return pull_merge_read_many(pull_ids=[pull_id], started=started)[0]


def pull_merge_read_many(*, pull_ids: list[str], started: float) -> list[MergePreparation]:
    """`pull_merge_read` of each KPR, in the order given, in two queries for them all.

    A drain reads its next batch while the current one merges, on the thread that runs the
    merge transactions: two round trips per KPR there were two more waits per KPR merged.
    """
    keys = [_uuid_or_none(pull_id) for pull_id in pull_ids]
    pulls = {pull.pk: pull for pull in KnowledgePullRequest.objects.filter(pk__in=[k for k in keys if k])}
    operations: dict[uuid.UUID, list[Operation]] = {}
    mergeable = [pk for pk, pull in pulls.items() if not _skip_reason(pull)]
    for op in Operation.objects.filter(pull_id__in=mergeable).order_by("pull_id", "position"):
        operations.setdefault(op.pull_id, []).append(op)
    return [
        _preparation(
            pull_id=str(pull_id), pull=pulls.get(key) if key else None, operations=operations, started=started
        )
        for pull_id, key in zip(pull_ids, keys, strict=True)
    ]


def _uuid_or_none(pull_id: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(pull_id))
    except ValueError:
        return None


def _preparation(
    *,
    pull_id: str,
    pull: KnowledgePullRequest | None,
    operations: dict[uuid.UUID, list[Operation]],
    started: float,
) -> MergePreparation:
    if pull is None:
        logger.warning("merge of unknown KPR %s skipped", pull_id)
        skip = MergeOutcome(pull_id=pull_id, merge_status="", merged=False, detail="unknown KPR")
        return MergePreparation(pull_id, [], {}, 0.0, started, skip=skip)
    reason = _skip_reason(pull)
    if reason:
        skip = MergeOutcome(pull_id=str(pull.pk), merge_status=pull.merge_status, merged=False, detail=reason)
        return MergePreparation(str(pull.pk), [], {}, 0.0, started, skip=skip)
    return MergePreparation(str(pull.pk), operations.get(pull.pk, []), {}, 0.0, started)


def pull_merge_apply(*, preparation: MergePreparation) -> MergeOutcome:
    """The merge transaction itself; on any exception everything is rolled back and FAILED recorded."""
    if preparation.skip is not None:
        return replace(preparation.skip, seconds=time.perf_counter() - preparation.started)
    pull_id = preparation.pull_id
    try:
        with transaction.atomic():
            outcome = _merge_locked(
                pull_id=pull_id, operations=preparation.operations, documents=preparation.documents
            )
    except (OperationalError, InterfaceError):
        # The database went away (a restart, a failover): nothing is wrong with the KPR. It stays
        # APPROVED and unmerged; the task is retried, and the merge sweep hands it over anyway.
        raise
    except Exception as exc:  # rolled back; record why, in a transaction of its own
        logger.exception("merge of KPR %s failed", pull_id)
        detail = _merge_failed(pull_id=pull_id, error=exc)
        outcome = MergeOutcome(pull_id=pull_id, merge_status=MergeStatus.FAILED, merged=False, detail=detail)
    return replace(
        outcome, embed_seconds=preparation.embed_seconds, seconds=time.perf_counter() - preparation.started
    )


def merge_documents(*, operations: list[Operation]) -> dict[int, VectorDocument]:
    """Vector documents of every value the operations may write, by operation id, in one batch."""
    writes = [op for op in operations if op.action in (Action.CREATE, Action.UPDATE)]
    documents = vector_documents(items=[(stored_key(op), op.new_value) for op in writes], shared=True)
    return {op.pk: document for op, document in zip(writes, documents, strict=True)}


def _merge_locked(
    *, pull_id: str, operations: list[Operation], documents: dict[int, VectorDocument]
) -> MergeOutcome:
    pull = lock_pull(pull_id=pull_id)
    skip = _skip_reason(pull)
    if skip:  # another worker got here first
        return MergeOutcome(pull_id=pull_id, merge_status=pull.merge_status, merged=False, detail=skip)
    namespace = pull.namespace
    lock_subjects(keys=[(namespace.name, pull.subject)])
    earlier = pull_id_merging_first(pull=pull)
    if earlier is not None:  # its subject's KPRs merge in approval order: this one waits its turn
        detail = f"waits for KPR {earlier}, approved earlier for the same subject"
        return MergeOutcome(pull_id=pull_id, merge_status=MergeStatus.UNMERGED, merged=False, detail=detail)
    now = timezone.now()  # after the locks: versions of one subject are ordered in time
    excluded = pull_final_exclusions(pull_id=pull.pk)
    plan = merge_plan(pull=pull, operations=[op for op in operations if op.position not in excluded])
    if plan.conflicts:
        return _record_conflict(pull=pull, conflicts=plan.conflicts, excluded=excluded)
    versions_write(pull=pull, steps=plan.steps, documents=documents, now=now)
    edges_write(pull=pull, steps=plan.steps)
    stale = fact_stale_mark(
        retired_ids=[step.previous.pk for step in plan.steps if step.previous is not None],
        now=now,
        pull_id=pull.pk,
    )
    detail = f"merged {len(plan.steps)} operation(s)"
    if excluded:
        detail += f"; excluded by review: {sorted(excluded)}"
    if stale:
        detail += f"; {len(stale)} derived fact(s) now stale"
    pull.merge_status = MergeStatus.MERGED
    pull.merged_at = now
    pull.merge_feedback = detail
    pull.save(update_fields=["merge_status", "merged_at", "merge_feedback"])
    # the audit chain lock is taken here, after every row this transaction writes, once for all events
    with audit_batch():
        steps_audit(pull=pull, steps=plan.steps)
        fact_stale_audit(
            changes=stale, actor=ACTOR, namespace=namespace.name, subject=pull.subject, pull_id=pull.pk
        )
        audit_record(
            event_type="pull.merged",
            actor=ACTOR,
            namespace=namespace.name,
            pull_id=pull.pk,
            subject=pull.subject,
            payload={
                "operations": [step.operation.position for step in plan.steps],
                "excludedOperations": sorted(excluded),
                "written": [step.new.pk for step in plan.steps if step.new is not None],
                "retired": [step.previous.pk for step in plan.steps if step.previous is not None],
                "stale": [change.fact_id for change in stale],
                "mergedAt": now.isoformat(),
            },
        )
    return MergeOutcome(
        pull_id=pull_id,
        merge_status=MergeStatus.MERGED,
        merged=True,
        detail=detail,
        operations=len(plan.steps),
        stale=len(stale),
    )


# --- conflict and failure --------------------------------------------------------------


def _show(value: Any) -> str:
    return canonical_json(value)


def _conflict_feedback(conflicts: list[dict[str, Any]]) -> str:
    lines = ["Conflict: the facts changed since this KPR was proposed; nothing was merged."]
    for c in conflicts:
        current = "none" if c["currentVersion"] is None else f"{_show(c['current'])} (v{c['currentVersion']})"
        lines.append(
            f"operations[{c['operation']}] {c['action']} {c['category']}/{c['key']}: {c['reason']}; "
            f"oldValue {_show(c['expected'])}, current value {current}"
        )
    return "\n".join(lines)


def _record_conflict(
    *, pull: KnowledgePullRequest, conflicts: list[dict[str, Any]], excluded: set[int]
) -> MergeOutcome:
    pull.merge_status = MergeStatus.CONFLICT
    pull.merge_feedback = _conflict_feedback(conflicts)
    pull.save(update_fields=["merge_status", "merge_feedback"])
    audit_record(
        event_type="pull.merge_conflict",
        actor=ACTOR,
        namespace=pull.namespace.name,
        pull_id=pull.pk,
        subject=pull.subject,
        payload={"conflicts": conflicts, "excludedOperations": sorted(excluded)},
    )
    return MergeOutcome(
        pull_id=str(pull.pk), merge_status=MergeStatus.CONFLICT, merged=False, detail=pull.merge_feedback
    )


def _merge_failed(*, pull_id: str, error: Exception) -> str:
    detail = f"Merge failed, nothing was written: {type(error).__name__}: {error}"[:4000]
    with transaction.atomic():
        pull = lock_pull(pull_id=pull_id)
        if pull.merge_status == MergeStatus.MERGED:
            return pull.merge_feedback
        pull.merge_status = MergeStatus.FAILED
        pull.merge_feedback = detail
        pull.save(update_fields=["merge_status", "merge_feedback"])
        audit_record(
            event_type="pull.merge_failed",
            actor=ACTOR,
            namespace=pull.namespace.name,
            pull_id=pull.pk,
            subject=pull.subject,
            payload={"error": type(error).__name__, "message": str(error)[:2000]},
        )
    return detail
