"""The merge plan: every operation re-checked against the facts as they are at merge time.

Runs inside the merge transaction, after the subject lock: reads (and row-locks) the active
versions involved, and turns each operation into a step (what to retire, which version to
write, what it rests on) or a conflict (the base changed, the key exists, a derivedFrom key
has no active fact). A KPR with any conflict writes nothing.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from memorypr.common.canonical import same_value
from memorypr.common.locks import lock_fact_versions_active
from memorypr.facts.models import (
    QUALIFIER_SUFFIX,
    VECTOR_STORE_FIELDS,
    EdgeType,
    FactEdge,
    FactStatus,
    FactVersion,
)
from memorypr.facts.selectors import fact_latest_versions
from memorypr.pulls.models import Action, KnowledgePullRequest, Operation, Relation

KEY_MAX_LENGTH = 200


@dataclass
class Step:
    """One operation resolved against the current facts."""

    operation: Operation
    category: str
    key: str  # the stored key (differs from the operation's for a qualifier)
    previous: FactVersion | None = None  # the active version this step retires
    retire_as: str | None = None
    version: int | None = None  # the new version's number; None for a DELETE
    qualified: FactVersion | None = None
    derived: list[FactVersion | Step] = field(default_factory=list)
    new: FactVersion | None = None


@dataclass
class Plan:
    steps: list[Step]
    conflicts: list[dict[str, Any]]


def stored_key(operation: Operation) -> str:
    """The key an operation writes: its own, or `<key>:qualifier` for a QUALIFIES update."""
    if operation.action == Action.UPDATE and operation.relation == Relation.QUALIFIES:
        return operation.key + QUALIFIER_SUFFIX
    return operation.key


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


@dataclass(frozen=True)
class _Facts:
    """The facts a plan is made against, read once, under lock."""

    active: dict[tuple[str, str], FactVersion]
    latest: dict[tuple[str, str], int]

    def next_version(self, category: str, key: str) -> int:
        return self.latest.get((category, key), 0) + 1


Resolution = Step | dict[str, Any]  # a step to write, or a conflict


def merge_plan(*, pull: KnowledgePullRequest, operations: list[Operation]) -> Plan:
    keys = {op.key for op in operations} | {stored_key(op) for op in operations}
    keys |= {key for op in operations for key in (op.derived_from or [])}
    # The plan reasons about values: the vector store's columns stay in the database.
    scope = FactVersion.objects.filter(namespace_id=pull.namespace_id, subject=pull.subject).defer(
        *VECTOR_STORE_FIELDS
    )
    locked = lock_fact_versions_active(
        namespace_id=pull.namespace_id, subject=pull.subject, keys=keys, deferred=VECTOR_STORE_FIELDS
    )
    facts = _Facts(
        active={(fact.category, fact.key): fact for fact in locked},
        latest=fact_latest_versions(namespace_id=pull.namespace_id, subject=pull.subject, keys=keys),
    )
    steps: list[Step] = []
    conflicts: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for op in operations:
        key = stored_key(op)
        if (op.category, key) in seen:
            conflicts.append(_conflict(op, "another operation of this KPR writes the same fact", None, key))
            continue
        seen.add((op.category, key))
        resolution = _plan_operation(op=op, key=key, facts=facts)
        if isinstance(resolution, Step):
            steps.append(resolution)
        else:
            conflicts.append(resolution)
    conflicts.extend(_resolve_derivations(scope=scope, active=facts.active, steps=steps))
    return Plan(steps=steps, conflicts=conflicts)


def _plan_operation(*, op: Operation, key: str, facts: _Facts) -> Resolution:
    current = facts.active.get((op.category, op.key))
    if op.action == Action.CREATE:
        return _plan_create(op=op, key=key, current=current, facts=facts)
    if current is None:
        return _conflict(op, f"no active value to {op.action.lower()}", None)
    if not same_value(current.value, op.old_value):
        return _conflict(op, "oldValue is not the current value", current)
    if op.action == Action.DELETE:
        return _plan_delete(op=op, key=key, current=current)
    if op.relation == Relation.QUALIFIES:
        return _plan_qualify(op=op, key=key, current=current, facts=facts)
    return _plan_update(op=op, key=key, current=current, facts=facts)


def _plan_create(*, op: Operation, key: str, current: FactVersion | None, facts: _Facts) -> Resolution:
    if current is not None:
        return _conflict(op, "the key already has an active value; send an UPDATE", current)
    return Step(operation=op, category=op.category, key=key, version=facts.next_version(op.category, key))


def _plan_delete(*, op: Operation, key: str, current: FactVersion) -> Resolution:
    # A fact deleted once its valid time has run out expired; otherwise it was retracted.
    expired = current.valid_to is not None and current.valid_to <= timezone.now()
    return Step(
        operation=op,
        category=op.category,
        key=key,
        previous=current,
        retire_as=FactStatus.EXPIRED if expired else FactStatus.RETRACTED,
    )


def _plan_qualify(*, op: Operation, key: str, current: FactVersion, facts: _Facts) -> Resolution:
    """A QUALIFIES update writes `<key>:qualifier` beside the fact it qualifies, which stays."""
    if len(key) > KEY_MAX_LENGTH:
        return _conflict(op, f"key too long for a qualifier ({len(key)} > 200)", current)
    previous = facts.active.get((op.category, key))
    return Step(
        operation=op,
        category=op.category,
        key=key,
        previous=previous,
        retire_as=FactStatus.SUPERSEDED if previous is not None else None,
        version=facts.next_version(op.category, key),
        qualified=current,
    )


def _plan_update(*, op: Operation, key: str, current: FactVersion, facts: _Facts) -> Resolution:
    return Step(
        operation=op,
        category=op.category,
        key=key,
        previous=current,
        retire_as=FactStatus.SUPERSEDED,
        version=facts.next_version(op.category, key),
    )


def _resolve_derivations(
    *, scope: QuerySet[FactVersion], active: dict[tuple[str, str], FactVersion], steps: list[Step]
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
    after: dict[str, list[FactVersion | Step]] = defaultdict(list)
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
