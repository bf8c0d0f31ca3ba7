"""Feedback on retrieved facts: confidence moves at once, in the open (docs/architecture.md §7).

success +0.1, failure −0.2, clamped to 0..1, one audit event per fact in the same
transaction. A fact that falls below the forgetting bar is marked; the forgetting job
proposes its DELETE as a KPR, so no fact disappears without review.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from memorypr.agents.models import Agent
from memorypr.audit.services import audit_record
from memorypr.common.locks import lock_rows, lock_subjects
from memorypr.evolution.conf import conf
from memorypr.evolution.models import ForgettingMark
from memorypr.facts.models import FactStatus, FactVersion


class Outcome:
    SUCCESS = "success"
    FAILURE = "failure"
    CHOICES = (SUCCESS, FAILURE)


class FactsNotFound(Exception):
    def __init__(self, missing: list[int]) -> None:
        super().__init__(f"no such facts in this agent's namespaces: {missing}")
        self.missing = missing


@dataclass(frozen=True)
class FeedbackApplied:
    fact: FactVersion
    confidence_before: float
    marked_for_forgetting: bool


def confidence_adjusted(*, confidence: float, outcome: str) -> float:
    delta = conf(
        "MEMORYPR_FEEDBACK_SUCCESS_DELTA" if outcome == Outcome.SUCCESS else "MEMORYPR_FEEDBACK_FAILURE_DELTA"
    )
    # Rounded so 0.3 − 0.2 is 0.1, not 0.09999999999999998.
    return round(min(1.0, max(0.0, confidence + delta)), 6)


def feedback_record(
    *, agent: Agent, fact_ids: list[int], outcome: str, session_id: str = ""
) -> list[FeedbackApplied]:
    """Apply one outcome to facts of the agent's namespaces; all or nothing.

    Raises FactsNotFound (nothing written) when any id is unknown or in another tenant.
    """
    if outcome not in Outcome.CHOICES:
        raise ValueError(f"unknown outcome {outcome!r}")
    ids = sorted(set(fact_ids))
    visible = FactVersion.objects.filter(pk__in=ids, namespace__in=agent.namespaces.all())
    scopes = set(visible.values_list("namespace__name", "subject"))
    bar = conf("MEMORYPR_FORGET_CONFIDENCE")
    applied: list[FeedbackApplied] = []
    with transaction.atomic():
        # Subject locks first, as the merge takes them: feedback and merge never deadlock.
        lock_subjects(keys=scopes)
        facts = lock_rows(visible.select_related("namespace"))
        missing = sorted(set(ids) - {f.pk for f in facts})
        if missing:
            raise FactsNotFound(missing)
        for fact in facts:
            before = fact.confidence
            fact.confidence = confidence_adjusted(confidence=before, outcome=outcome)
            fact.save(update_fields=["confidence", "updated_at"])
            marked = _mark_change(agent=agent, fact=fact, bar=bar)
            audit_record(
                event_type="fact.feedback",
                actor=f"agent:{agent.name}",
                namespace=fact.namespace.name,
                subject=fact.subject,
                payload={
                    "factId": fact.pk,
                    "category": fact.category,
                    "key": fact.key,
                    "version": fact.version,
                    "outcome": outcome,
                    "from": before,
                    "to": fact.confidence,
                    "sessionId": session_id,
                    "markedForForgetting": marked,
                },
            )
            applied.append(FeedbackApplied(fact=fact, confidence_before=before, marked_for_forgetting=marked))
    return applied


def _mark_change(*, agent: Agent, fact: FactVersion, bar: float) -> bool:
    """Mark an active fact below the bar; lift an unproposed mark when confidence recovers."""
    existing = ForgettingMark.objects.filter(fact=fact).first()
    if fact.confidence < bar and fact.status == FactStatus.ACTIVE:
        if existing is None:
            ForgettingMark.objects.create(fact=fact, reason="low_confidence", confidence=fact.confidence)
            audit_record(
                event_type="fact.marked_for_forgetting",
                actor=f"agent:{agent.name}",
                namespace=fact.namespace.name,
                subject=fact.subject,
                payload={"factId": fact.pk, "key": fact.key, "confidence": fact.confidence, "bar": bar},
            )
        return True
    if existing is not None and existing.pull_id is None and fact.confidence >= bar:
        existing.delete()
        audit_record(
            event_type="fact.unmarked_for_forgetting",
            actor=f"agent:{agent.name}",
            namespace=fact.namespace.name,
            subject=fact.subject,
            payload={"factId": fact.pk, "key": fact.key, "confidence": fact.confidence, "bar": bar},
        )
    return existing is not None and fact.confidence < bar
