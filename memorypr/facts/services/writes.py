"""The writes of a merge: versions, vectors, edges and one audit event per operation."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memorypr.audit.services import audit_record
from memorypr.facts.models import EdgeType, FactEdge, FactStatus, FactVersion
from memorypr.facts.services.plan import Step
from memorypr.pulls.models import Action, KnowledgePullRequest, Relation
from memorypr.vectors.store import VectorDocument

ACTOR = "system:merge"
DEFAULT_IMPORTANCE = 0.5
_LINK_RELATIONS = {Relation.CONTRADICTS, Relation.SUPPORTS, Relation.CONTEXT_FOR}


def versions_write(
    *, pull: KnowledgePullRequest, steps: list[Step], documents: dict[int, VectorDocument], now: datetime
) -> None:
    # Retire first: the partial unique index allows one active version per key at any moment.
    for status in (FactStatus.SUPERSEDED, FactStatus.RETRACTED, FactStatus.EXPIRED):
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
        document = documents[op.position]
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
            # Written with the row: an UPDATE after the INSERT would write every index entry twice.
            embedding=document.embedding,
            search_text=document.search_text,
        )
        fresh.append(step.new)
    FactVersion.objects.bulk_create(fresh)


def edge_target(item: FactVersion | Step) -> FactVersion:
    fact = item.new if isinstance(item, Step) else item
    assert fact is not None
    return fact


def edges_write(*, pull: KnowledgePullRequest, steps: list[Step]) -> None:
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
            link(new, edge_target(item), EdgeType.DERIVED_FROM)
        if relation in _LINK_RELATIONS:
            if step.operation.action == Action.UPDATE and step.previous is not None:
                link(new, step.previous, relation)
            elif step.operation.action == Action.CREATE:
                for item in step.derived:
                    link(new, edge_target(item), relation)
    FactEdge.objects.bulk_create(edges.values())


def steps_audit(*, pull: KnowledgePullRequest, steps: list[Step]) -> None:
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
            "derivedFrom": sorted(edge_target(item).pk for item in step.derived),
            "relation": op.relation or "",
        }
        if step.qualified is not None:
            event_type = "fact.qualified"
            payload["qualified"] = {"factId": step.qualified.pk, "key": step.qualified.key}
        elif op.action == Action.DELETE:
            event_type = "fact.expired" if step.retire_as == FactStatus.EXPIRED else "fact.retracted"
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
