"""Merge an APPROVED KPR into the fact store and the vector store (DESIGN §5).

Embeddings are computed first, outside any transaction (one batch per KPR). Then one
transaction: lock the KPR, lock its subject, re-check every base against the current
facts (something may have merged since the review), and either record a CONFLICT with the
current values and write nothing, or write the versions, edges, stale propagation,
vectors and audit events and mark the KPR MERGED. An exception anywhere rolls all of it
back; the failure is then recorded (merge_status FAILED) in a transaction of its own.

Edges, by operation:
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
from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from memorypr.audit.services import audit_record
from memorypr.common.canonical import canonical_json
from memorypr.common.locks import lock_rows, lock_subjects
from memorypr.facts.models import QUALIFIER_SUFFIX, EdgeType, FactEdge, FactStatus, FactVersion
from memorypr.facts.services.stale import fact_stale_propagate
from memorypr.pulls.models import (
    Action,
    KnowledgePullRequest,
    MergeStatus,
    Operation,
    Relation,
    ReviewEvent,
    ReviewStatus,
)
from memorypr.pulls.selectors import pull_lock
from memorypr.vectors.store import VectorDocument, vector_documents, vector_upsert

logger = logging.getLogger(__name__)

ACTOR = "system:merge"
KEY_MAX_LENGTH = 200
DEFAULT_IMPORTANCE = 0.5
_LINK_RELATIONS = {Relation.CONTRADICTS, Relation.SUPPORTS, Relation.CONTEXT_FOR}


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


@dataclass
class _Step:
    """One operation resolved against the current facts."""

    operation: Operation
    category: str
    key: str  # the stored key (differs from the operation's for a qualifier)
    previous: FactVersion | None = None  # the active version this step retires
    retire_as: str | None = None
    version: int | None = None  # the new version's number; None for a DELETE
    qualified: FactVersion | None = None
    derived: list[FactVersion | _Step] = field(default_factory=list)
    new: FactVersion | None = None


@dataclass
class _Plan:
    steps: list[_Step]
    conflicts: list[dict[str, Any]]


def stored_key(operation: Operation) -> str:
    """The key an operation writes: its own, or `<key>:qualifier` for a QUALIFIES update."""
    if operation.action == Action.UPDATE and operation.relation == Relation.QUALIFIES:
        return operation.key + QUALIFIER_SUFFIX
    return operation.key


def _same_value(a: Any, b: Any) -> bool:
    # The review's base rule compares the same way (canonical JSON).
    return canonical_json(a) == canonical_json(b)


def _skip_reason(pull: KnowledgePullRequest) -> str:
    if pull.merge_status == MergeStatus.MERGED:
        return "already merged"
    if pull.merge_status == MergeStatus.CONFLICT:
        return "conflicted: the proposer submits a new KPR against the current values"
    if pull.review_status != ReviewStatus.APPROVED:
        return f"review status is {pull.review_status}; only APPROVED KPRs merge"
    return ""


def excluded_positions(*, pull: KnowledgePullRequest) -> set[int]:
    """Operations the final approval left out (a human may exclude single operations)."""
    event = (
        ReviewEvent.objects.filter(pull=pull, status_after=ReviewStatus.APPROVED)
        .order_by("-created_at", "-id")
        .first()
    )
    return {int(position) for position in (event.excluded_operations if event else [])}


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
    started = time.perf_counter()
    pull = KnowledgePullRequest.objects.filter(pk=pull_id).first()
    if pull is None:
        logger.warning("merge of unknown KPR %s skipped", pull_id)
        skip = MergeOutcome(pull_id=str(pull_id), merge_status="", merged=False, detail="unknown KPR")
        return MergePreparation(str(pull_id), [], {}, 0.0, started, skip=skip)
    reason = _skip_reason(pull)
    if reason:
        skip = MergeOutcome(pull_id=str(pull.pk), merge_status=pull.merge_status, merged=False, detail=reason)
        return MergePreparation(str(pull.pk), [], {}, 0.0, started, skip=skip)
    operations = list(Operation.objects.filter(pull=pull).order_by("position"))
    embed_started = time.perf_counter()
    documents = _documents(operations)
    return MergePreparation(str(pull.pk), operations, documents, time.perf_counter() - embed_started, started)


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
    except Exception as exc:  # rolled back; record why, in a transaction of its own
        logger.exception("merge of KPR %s failed", pull_id)
        detail = _merge_failed(pull_id=pull_id, error=exc)
        outcome = MergeOutcome(pull_id=pull_id, merge_status=MergeStatus.FAILED, merged=False, detail=detail)
    return replace(
        outcome, embed_seconds=preparation.embed_seconds, seconds=time.perf_counter() - preparation.started
    )


def _documents(operations: list[Operation]) -> dict[int, VectorDocument]:
    """Vector documents of every value the KPR may write, by operation position, in one batch."""
    writes = [op for op in operations if op.action in (Action.CREATE, Action.UPDATE)]
    documents = vector_documents(items=[(stored_key(op), op.new_value) for op in writes])
    return {op.position: document for op, document in zip(writes, documents, strict=True)}


def _merge_locked(
    *, pull_id: str, operations: list[Operation], documents: dict[int, VectorDocument]
) -> MergeOutcome:
    pull = pull_lock(pull_id=pull_id)
    skip = _skip_reason(pull)
    if skip:  # another worker got here first
        return MergeOutcome(pull_id=pull_id, merge_status=pull.merge_status, merged=False, detail=skip)
    namespace = pull.namespace
    lock_subjects(keys=[(namespace.name, pull.subject)])
    now = timezone.now()  # after the locks: versions of one subject are ordered in time
    excluded = excluded_positions(pull=pull)
    plan = _plan(pull=pull, operations=[op for op in operations if op.position not in excluded])
    if plan.conflicts:
        return _record_conflict(pull=pull, conflicts=plan.conflicts, excluded=excluded)
    _write_versions(pull=pull, steps=plan.steps, documents=documents, now=now)
    _write_edges(pull=pull, steps=plan.steps)
    _audit_steps(pull=pull, steps=plan.steps)
    stale = fact_stale_propagate(
        retired_ids=[step.previous.pk for step in plan.steps if step.previous is not None],
        now=now,
        actor=ACTOR,
        namespace=namespace.name,
        subject=pull.subject,
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


# --- plan: re-check every base against the facts as they are now ------------------------


def _conflict(
    op: Operation, reason: str, current: FactVersion | None, key: str | None = None
) -> dict[str, Any]:
    return {
        "operation": op.position,
        "action": op.action,
        "category": op.category,
        "key": key or op.key,
        "reason": reason,
        "expected": op.old_value,
        "current": current.value if current is not None else None,
        "currentVersion": current.version if current is not None else None,
    }


def _plan(*, pull: KnowledgePullRequest, operations: list[Operation]) -> _Plan:
    keys = {op.key for op in operations} | {stored_key(op) for op in operations}
    keys |= {key for op in operations for key in (op.derived_from or [])}
    scope = FactVersion.objects.filter(namespace_id=pull.namespace_id, subject=pull.subject)
    active = {
        (fact.category, fact.key): fact
        for fact in lock_rows(scope.filter(status=FactStatus.ACTIVE, key__in=sorted(keys)))
    }
    latest: dict[tuple[str, str], int] = {
        (row["category"], row["key"]): row["latest"]
        for row in scope.filter(key__in=sorted(keys))
        .values("category", "key")
        .annotate(latest=Max("version"))
    }
    steps: list[_Step] = []
    conflicts: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for op in operations:
        key = stored_key(op)
        if (op.category, key) in seen:
            conflicts.append(_conflict(op, "another operation of this KPR writes the same fact", None, key))
            continue
        seen.add((op.category, key))
        current = active.get((op.category, op.key))
        next_version = latest.get((op.category, key), 0) + 1
        if op.action == Action.CREATE:
            if current is not None:
                conflicts.append(
                    _conflict(op, "the key already has an active value; send an UPDATE", current)
                )
                continue
            steps.append(_Step(operation=op, category=op.category, key=key, version=next_version))
            continue
        if current is None:
            conflicts.append(_conflict(op, f"no active value to {op.action.lower()}", None))
            continue
        if not _same_value(current.value, op.old_value):
            conflicts.append(_conflict(op, "oldValue is not the current value", current))
            continue
        if op.action == Action.DELETE:
            steps.append(
                _Step(
                    operation=op,
                    category=op.category,
                    key=key,
                    previous=current,
                    retire_as=FactStatus.RETRACTED,
                )
            )
        elif op.relation == Relation.QUALIFIES:
            if len(key) > KEY_MAX_LENGTH:
                conflicts.append(_conflict(op, f"key too long for a qualifier ({len(key)} > 200)", current))
                continue
            previous = active.get((op.category, key))
            steps.append(
                _Step(
                    operation=op,
                    category=op.category,
                    key=key,
                    previous=previous,
                    retire_as=FactStatus.SUPERSEDED if previous is not None else None,
                    version=next_version,
                    qualified=current,
                )
            )
        else:
            steps.append(
                _Step(
                    operation=op,
                    category=op.category,
                    key=key,
                    previous=current,
                    retire_as=FactStatus.SUPERSEDED,
                    version=next_version,
                )
            )
    conflicts.extend(_resolve_derivations(scope=scope, active=active, steps=steps))
    return _Plan(steps=steps, conflicts=conflicts)


def _resolve_derivations(
    *, scope: Any, active: dict[tuple[str, str], FactVersion], steps: list[_Step]
) -> list[dict[str, Any]]:
    """Link each written version to what it rests on, as the facts will be after this merge."""
    carried: dict[int, list[str]] = {}
    previous_ids = [s.previous.pk for s in steps if s.version and s.previous and not s.operation.derived_from]
    if previous_ids:
        for source_id, target_key in FactEdge.objects.filter(
            source_id__in=previous_ids, edge_type=EdgeType.DERIVED_FROM
        ).values_list("source_id", "target__key"):
            carried.setdefault(source_id, []).append(target_key)
    wanted = {key for keys in carried.values() for key in keys} - {key for _, key in active}
    if wanted:
        active.update(
            {(f.category, f.key): f for f in scope.filter(status=FactStatus.ACTIVE, key__in=sorted(wanted))}
        )
    retired = {s.previous.pk for s in steps if s.previous is not None}
    after: dict[str, list[FactVersion | _Step]] = defaultdict(list)
    for (_, key), fact in sorted(active.items()):
        if fact.pk not in retired:
            after[key].append(fact)
    for step in steps:
        if step.version is not None:
            after[step.key].append(step)
    conflicts = []
    for step in steps:
        if step.version is None:
            continue
        explicit = list(dict.fromkeys(step.operation.derived_from or []))
        inherited = carried.get(step.previous.pk, []) if step.previous is not None and not explicit else []
        for key in explicit:
            targets = [t for t in after.get(key, []) if t is not step]
            if not targets:
                conflicts.append(_conflict(step.operation, f"derivedFrom '{key}' has no active fact", None))
            step.derived.extend(targets)
        for key in dict.fromkeys(inherited):
            step.derived.extend(t for t in after.get(key, []) if t is not step)
    return conflicts


# --- writes ----------------------------------------------------------------------------


def _write_versions(
    *, pull: KnowledgePullRequest, steps: list[_Step], documents: dict[int, VectorDocument], now: datetime
) -> None:
    # Retire first: the partial unique index allows one active version per key at any moment.
    for status in (FactStatus.SUPERSEDED, FactStatus.RETRACTED):
        ids = [s.previous.pk for s in steps if s.previous is not None and s.retire_as == status]
        if not ids:
            continue
        changed = FactVersion.objects.filter(pk__in=ids, status=FactStatus.ACTIVE).update(
            status=status, retired_at=now, retired_by_pull=pull, updated_at=now
        )
        if changed != len(ids):  # the row locks make this unreachable short of a bypassing writer
            raise RuntimeError(f"{len(ids) - changed} fact version(s) changed under the merge lock")
    fresh = []
    for step in steps:
        if step.version is None:
            continue
        op = step.operation
        basis = step.previous or step.qualified
        step.new = FactVersion(
            namespace_id=pull.namespace_id,
            subject=pull.subject,
            category=step.category,
            key=step.key,
            value=op.new_value,
            version=step.version,
            status=FactStatus.ACTIVE,
            confidence=op.confidence,
            importance=op.importance
            if op.importance is not None
            else (basis.importance if basis is not None else DEFAULT_IMPORTANCE),
            valid_from=op.valid_from,
            valid_to=op.valid_to,
            operation=op,
            pull=pull,
            created_at=now,
        )
        fresh.append(step.new)
    FactVersion.objects.bulk_create(fresh)
    vector_upsert(documents={s.new.pk: documents[s.operation.position] for s in steps if s.new is not None})


def _target(item: FactVersion | _Step) -> FactVersion:
    fact = item.new if isinstance(item, _Step) else item
    assert fact is not None
    return fact


def _write_edges(*, pull: KnowledgePullRequest, steps: list[_Step]) -> None:
    edges: dict[tuple[int, int, str], FactEdge] = {}

    def link(source: FactVersion, target: FactVersion, edge_type: str) -> None:
        if source.pk != target.pk:
            edges.setdefault(
                (source.pk, target.pk, edge_type),
                FactEdge(source=source, target=target, edge_type=edge_type, pull=pull),
            )

    for step in steps:
        new, relation = step.new, step.operation.relation
        if new is None:
            continue
        if step.previous is not None:
            link(new, step.previous, EdgeType.UPDATES)
        if step.qualified is not None:
            link(new, step.qualified, EdgeType.QUALIFIES)
        for item in step.derived:
            link(new, _target(item), EdgeType.DERIVED_FROM)
        if relation in _LINK_RELATIONS:
            if step.operation.action == Action.UPDATE and step.previous is not None:
                link(new, step.previous, relation)
            elif step.operation.action == Action.CREATE:
                for item in step.derived:
                    link(new, _target(item), relation)
    FactEdge.objects.bulk_create(edges.values())


def _audit_steps(*, pull: KnowledgePullRequest, steps: list[_Step]) -> None:
    namespace = pull.namespace.name
    for step in steps:
        op, new, previous = step.operation, step.new, step.previous
        payload: dict[str, Any] = {
            "operation": op.position,
            "category": step.category,
            "key": step.key,
            "factId": new.pk if new is not None else None,
            "version": new.version if new is not None else None,
            "newValue": op.new_value,
            "previous": None
            if previous is None
            else {
                "factId": previous.pk,
                "version": previous.version,
                "value": previous.value,
                "to": step.retire_as,
            },
            "derivedFrom": sorted(_target(item).pk for item in step.derived),
            "relation": op.relation or "",
        }
        if step.qualified is not None:
            event_type = "fact.qualified"
            payload["qualified"] = {"factId": step.qualified.pk, "key": step.qualified.key}
        elif op.action == Action.DELETE:
            event_type = "fact.retracted"
        elif op.action == Action.UPDATE:
            event_type = "fact.updated"
        else:
            event_type = "fact.created"
        audit_record(
            event_type=event_type,
            actor=ACTOR,
            namespace=namespace,
            pull_id=pull.pk,
            subject=pull.subject,
            payload=payload,
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
        pull = pull_lock(pull_id=pull_id)
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
