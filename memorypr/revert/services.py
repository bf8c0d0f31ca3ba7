"""Revert a merged KPR by proposing a new KPR that restores the previous versions.

The revert is an ordinary KPR (with `reverts` set): reviewed like any other, merged with
the same compare-and-swap. Its bases are the values the reverted KPR wrote, so if those
facts changed since, the revert conflicts instead of silently undoing the later change.

Inverse operations, read from the fact store (so excluded operations are not touched):
- a version the KPR wrote over an older one  -> UPDATE back to the older value;
- a version the KPR created                  -> DELETE it;
- a version the KPR retracted                -> CREATE it again;
- a derived fact the KPR made stale           -> CREATE it again (with its derivedFrom),
  unless its key has an active value by now.
"""

from __future__ import annotations

from memorypr.agents.models import Agent
from memorypr.facts.models import FactStatus, FactVersion
from memorypr.facts.selectors import (
    fact_active_keys,
    fact_dependency_keys,
    fact_versions_retired_by,
    fact_versions_written_by,
)
from memorypr.pulls.models import Action, KnowledgePullRequest, MergeStatus
from memorypr.pulls.services import pull_submit
from memorypr.pulls.specs import OperationSpec, PullSpec


class RevertRefused(Exception):
    """The KPR cannot be reverted (not merged, or nothing it wrote is left to undo)."""


def revert_operations(*, pull: KnowledgePullRequest, reason: str = "") -> list[OperationSpec]:
    """The operations that undo what a merged KPR wrote."""
    written = fact_versions_written_by(pull_id=pull.pk)
    retired = fact_versions_retired_by(pull_id=pull.pk)
    superseded = {(f.category, f.key): f for f in retired if f.status == FactStatus.SUPERSEDED}
    touched = {(f.category, f.key) for f in written}
    active_keys = fact_active_keys(namespace_id=pull.namespace_id, subject=pull.subject)
    # no timestamp: the same revert proposed twice is the same payload (idempotency keys)
    evidence = {"rawMessageQuote": reason or f"Revert of KPR {pull.pk}"}
    undo: list[tuple[FactVersion, str, FactVersion | None]] = []  # (fact, action, what it replaces)
    for fact in written:
        previous = superseded.get((fact.category, fact.key))
        undo.append((previous, Action.UPDATE, fact) if previous is not None else (fact, Action.DELETE, None))
    for fact in retired:
        ident = (fact.category, fact.key)
        if ident in touched:
            continue
        if fact.status in (FactStatus.RETRACTED, FactStatus.EXPIRED) or (
            fact.status == FactStatus.STALE and fact.key not in active_keys
        ):
            undo.append((fact, Action.CREATE, None))
            touched.add(ident)
    deleted = {fact.key for fact, action, _ in undo if action == Action.DELETE}
    restored_keys = (active_keys - deleted) | {
        fact.key for fact, action, _ in undo if action != Action.DELETE
    }
    specs = []
    for fact, action, replaces in undo:
        if action == Action.DELETE:
            specs.append(
                OperationSpec(
                    action=Action.DELETE,
                    category=fact.category,
                    key=fact.key,
                    confidence=1.0,
                    old_value=fact.value,
                    evidence=evidence,
                )
            )
            continue
        specs.append(
            OperationSpec(
                action=action,
                category=fact.category,
                key=fact.key,
                confidence=fact.confidence,
                old_value=replaces.value if replaces is not None else None,
                new_value=fact.value,
                importance=fact.importance,
                evidence=evidence,
                valid_from=fact.valid_from,
                valid_to=fact.valid_to,
                # only keys that will have an active fact, so the restore itself can merge
                derived_from=[key for key in fact_dependency_keys(fact=fact) if key in restored_keys],
            )
        )
    return specs


def pull_revert(
    *,
    pull: KnowledgePullRequest,
    agent: Agent,
    reason: str = "",
    idempotency_key: str | None = None,
    proposed_by: str = "",
) -> tuple[KnowledgePullRequest, bool]:
    """Propose the revert of a merged KPR as a new KPR; returns (kpr, created).

    `proposed_by` names who asked when it is not the agent itself (a human reviewer).
    """
    if pull.merge_status != MergeStatus.MERGED:
        raise RevertRefused(f"KPR {pull.pk} is {pull.merge_status}; only a MERGED KPR can be reverted")
    operations = revert_operations(pull=pull, reason=reason)
    if not operations:
        raise RevertRefused(f"KPR {pull.pk} wrote nothing that can be reverted")
    spec = PullSpec(
        subject=pull.subject,
        operations=operations,
        proposed_by=proposed_by or agent.name,
        source_session_id="",
        idempotency_key=idempotency_key,
    )
    return pull_submit(agent=agent, namespace=pull.namespace, spec=spec, reverts=pull)
