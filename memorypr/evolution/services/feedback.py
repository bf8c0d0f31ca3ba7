"""Feedback on retrieved facts: confidence moves at once, in the open (docs/architecture.md §7).

success +0.1, failure −0.2, clamped to 0..1, one audit event per fact in the same
transaction. A fact that falls below the forgetting bar is marked; the forgetting job
proposes its DELETE as a KPR, so no fact disappears without review.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db import connection, transaction
from django.utils import timezone

from memorypr.agents.models import Agent
from memorypr.audit.services import audit_batch, audit_record
from memorypr.common.locks import lock_subjects
from memorypr.evolution.conf import conf
from memorypr.facts.models import FactStatus


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
    """What one fact looks like after the feedback: the fields the API answers with."""

    fact_id: int
    category: str
    key: str
    version: int
    status: str
    confidence: float
    confidence_before: float
    marked_for_forgetting: bool


def confidence_adjusted(*, confidence: float, outcome: str) -> float:
    delta = conf(
        "MEMORYPR_FEEDBACK_SUCCESS_DELTA" if outcome == Outcome.SUCCESS else "MEMORYPR_FEEDBACK_FAILURE_DELTA"
    )
    # Rounded so 0.3 − 0.2 is 0.1, not 0.09999999999999998.
    return round(min(1.0, max(0.0, confidence + delta)), 6)


# Feedback follows retrievals (an agent reports on what it was served), so it runs as often as
# any write: its statements are written once, not compiled by the ORM on every call.
_SCOPES_SQL = """
    SELECT DISTINCT n.name, f.subject FROM facts_factversion f JOIN agents_namespace n ON n.id = f.namespace_id
    WHERE f.id = ANY(%s) AND f.namespace_id = ANY(%s)
"""
_LOCK_SQL = """
    SELECT f.id, n.name, f.subject, f.category, f.key, f.version, f.status, f.confidence,
           m.id, m.pull_id
    FROM facts_factversion f
    JOIN agents_namespace n ON n.id = f.namespace_id
    LEFT JOIN evolution_forgettingmark m ON m.fact_id = f.id
    WHERE f.id = ANY(%s) AND f.namespace_id = ANY(%s)
    ORDER BY f.id
    FOR UPDATE OF f
"""
_UPDATE_SQL = """
    UPDATE facts_factversion f SET confidence = moved.confidence, updated_at = %s
    FROM unnest(%s::bigint[], %s::double precision[]) AS moved (id, confidence)
    WHERE f.id = moved.id
"""
_MARK_SQL = """
    INSERT INTO evolution_forgettingmark (fact_id, reason, confidence, marked_at)
    SELECT marked.fact_id, 'low_confidence', marked.confidence, %s
    FROM unnest(%s::bigint[], %s::double precision[]) AS marked (fact_id, confidence)
"""
_UNMARK_SQL = "DELETE FROM evolution_forgettingmark WHERE id = ANY(%s)"


@dataclass(frozen=True)
class _Locked:
    fact_id: int
    namespace: str
    subject: str
    category: str
    key: str
    version: int
    status: str
    confidence: float
    mark_id: int | None
    mark_pull_id: uuid.UUID | None


def feedback_record(
    *, agent: Agent, fact_ids: list[int], outcome: str, session_id: str = ""
) -> list[FeedbackApplied]:
    """Apply one outcome to facts of the agent's namespaces; all or nothing.

    A fact that falls below the forgetting bar while active is marked; an unproposed mark is
    lifted once its fact is back at or above the bar. Raises FactsNotFound (nothing written)
    when any id is unknown or in another tenant.
    """
    if outcome not in Outcome.CHOICES:
        raise ValueError(f"unknown outcome {outcome!r}")
    ids = sorted(set(fact_ids))
    namespace_ids = [namespace.pk for namespace in agent.namespaces.all()]
    bar = float(conf("MEMORYPR_FORGET_CONFIDENCE"))
    actor = f"agent:{agent.name}"
    now = timezone.now()
    with transaction.atomic(), audit_batch():
        with connection.cursor() as cursor:
            cursor.execute(_SCOPES_SQL, [ids, namespace_ids])
            scopes = [(str(name), str(subject)) for name, subject in cursor.fetchall()]
        # Subject locks first, as the merge takes them: feedback and merge never deadlock.
        lock_subjects(keys=scopes)
        with connection.cursor() as cursor:
            cursor.execute(_LOCK_SQL, [ids, namespace_ids])
            facts = [_Locked(*row) for row in cursor.fetchall()]
        missing = sorted(set(ids) - {fact.fact_id for fact in facts})
        if missing:
            raise FactsNotFound(missing)
        applied = [_applied(fact, outcome=outcome, bar=bar) for fact in facts]
        # An active fact newly below the bar gets a mark; an unproposed mark goes once its
        # fact's confidence is back at or above the bar.
        marks = [item for fact, item in zip(facts, applied, strict=True) if item.marked_for_forgetting
                 and fact.mark_id is None]  # fmt: skip
        lifts = [fact for fact, item in zip(facts, applied, strict=True)
                 if fact.mark_id is not None and fact.mark_pull_id is None and item.confidence >= bar]  # fmt: skip
        with connection.cursor() as cursor:
            cursor.execute(
                _UPDATE_SQL, [now, [item.fact_id for item in applied], [item.confidence for item in applied]]
            )
            if marks:
                cursor.execute(
                    _MARK_SQL, [now, [item.fact_id for item in marks], [item.confidence for item in marks]]
                )
            if lifts:
                cursor.execute(_UNMARK_SQL, [[fact.mark_id for fact in lifts]])
        marked_ids = {item.fact_id for item in marks}
        lifted_ids = {fact.fact_id for fact in lifts}
        for fact, item in zip(facts, applied, strict=True):
            if fact.fact_id in marked_ids or fact.fact_id in lifted_ids:
                _audit_mark(fact, item, actor=actor, bar=bar, marked=fact.fact_id in marked_ids)
            _audit_feedback(fact, item, actor=actor, outcome=outcome, session_id=session_id)
    return applied


def _applied(fact: _Locked, *, outcome: str, bar: float) -> FeedbackApplied:
    confidence = confidence_adjusted(confidence=fact.confidence, outcome=outcome)
    below = confidence < bar
    return FeedbackApplied(
        fact_id=fact.fact_id,
        category=fact.category,
        key=fact.key,
        version=fact.version,
        status=fact.status,
        confidence=confidence,
        confidence_before=fact.confidence,
        # An active fact below the bar is marked now; a mark already there stays while it is below.
        marked_for_forgetting=below and (fact.status == FactStatus.ACTIVE or fact.mark_id is not None),
    )


def _audit_mark(fact: _Locked, item: FeedbackApplied, *, actor: str, bar: float, marked: bool) -> None:
    audit_record(
        event_type="fact.marked_for_forgetting" if marked else "fact.unmarked_for_forgetting",
        actor=actor,
        namespace=fact.namespace,
        subject=fact.subject,
        payload={"factId": fact.fact_id, "key": fact.key, "confidence": item.confidence, "bar": bar},
    )


def _audit_feedback(
    fact: _Locked, item: FeedbackApplied, *, actor: str, outcome: str, session_id: str
) -> None:
    audit_record(
        event_type="fact.feedback",
        actor=actor,
        namespace=fact.namespace,
        subject=fact.subject,
        payload={
            "factId": fact.fact_id,
            "category": fact.category,
            "key": fact.key,
            "version": fact.version,
            "outcome": outcome,
            "from": fact.confidence,
            "to": item.confidence,
            "sessionId": session_id,
            "markedForForgetting": item.marked_for_forgetting,
        },
    )
