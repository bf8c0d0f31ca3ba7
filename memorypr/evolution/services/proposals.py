"""The `system` proposer: every evolution job changes memory through a KPR.

The purge of old retired versions is the exception: it removes history, not memory, and
keeps their content in the audit trail (docs/architecture.md §7).

Idempotency keys are derived from what a proposal is about (a fact version, or the
content of a pair of facts), so a job that runs twice, or two beats racing, propose once.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from memorypr.agents.models import Agent, Namespace
from memorypr.agents.services import agent_system
from memorypr.common.canonical import canonical_json
from memorypr.evolution.conf import conf
from memorypr.facts.models import FactVersion
from memorypr.pulls.models import Action, KnowledgePullRequest
from memorypr.pulls.services import IdempotencyConflict, pull_submit
from memorypr.pulls.specs import OperationSpec, PullSpec


@dataclass
class JobReport:
    job: str
    examined: int = 0
    proposed: int = 0
    already_proposed: int = 0
    pulls: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "job": self.job,
            "examined": self.examined,
            "proposed": self.proposed,
            "alreadyProposed": self.already_proposed,
            "pulls": self.pulls,
        }


def forget_key(fact_id: int) -> str:
    """One key per fact version, whichever job wants it gone: it is never proposed twice."""
    return f"evolution:forget:{fact_id}"


def content_key(prefix: str, *facts: FactVersion) -> str:
    parts = sorted(canonical_json([f.namespace_id, f.subject, f.category, f.key, f.value]) for f in facts)
    return f"evolution:{prefix}:" + hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:40]


def system_agent_id() -> int | None:
    return Agent.objects.filter(name=Agent.SYSTEM_NAME).values_list("pk", flat=True).first()


def evidence(text: str) -> dict[str, Any]:
    """System evidence: the job's reasoning, with the moment it was made (there is no transcript)."""
    return {"rawMessageQuote": text, "timestamp": timezone.now().isoformat()}


def delete_op(*, fact: FactVersion, reason: str) -> OperationSpec:
    return OperationSpec(
        action=Action.DELETE,
        category=fact.category,
        key=fact.key,
        old_value=fact.value,
        confidence=conf("MEMORYPR_EVOLUTION_PROPOSAL_CONFIDENCE"),
        evidence=evidence(reason),
    )


def system_propose(
    *, namespace: Namespace, subject: str, job: str, idempotency_key: str, operations: list[OperationSpec]
) -> tuple[KnowledgePullRequest, bool]:
    """Submit a KPR as `system`; returns (pull, created). A key seen before returns its first KPR."""
    agent = agent_system(namespace=namespace)
    existing = KnowledgePullRequest.objects.filter(agent=agent, idempotency_key=idempotency_key).first()
    if existing is not None:
        return existing, False
    spec = PullSpec(
        subject=subject,
        operations=operations,
        proposed_by=f"system:{job}",
        source_session_id="",
        idempotency_key=idempotency_key,
    )
    try:
        return pull_submit(agent=agent, namespace=namespace, spec=spec)
    except IdempotencyConflict as exc:  # same key, payload drawn at another moment: still one proposal
        return exc.existing, False


def report_add(report: JobReport, pull: KnowledgePullRequest, created: bool) -> None:
    if created:
        report.proposed += 1
        report.pulls.append(str(pull.pk))
    else:
        report.already_proposed += 1
