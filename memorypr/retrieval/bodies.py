"""The response body of a retrieval, written out (the hot read path of every agent turn).

`RetrieveOutSerializer` describes the same format for the OpenAPI schema;
tests/retrieval/test_bodies.py holds the two equal.
"""

from __future__ import annotations

from typing import Any

from memorypr.common.wire import current_zone, datetime_text, float_or_none, int_or_none
from memorypr.facts.models import FactVersion
from memorypr.retrieval.selectors import Retrieval, ScoredFact


def fact_brief_body(fact: FactVersion | None) -> dict[str, Any] | None:
    if fact is None:
        return None
    zone = current_zone()
    return {
        "factId": int(fact.pk),
        "category": fact.category,
        "key": fact.key,
        "value": fact.value,
        "version": int(fact.version),
        "status": fact.status,
        "confidence": float(fact.confidence),
        "validFrom": datetime_text(fact.valid_from, zone=zone),
        "validTo": datetime_text(fact.valid_to, zone=zone),
        "createdAt": datetime_text(fact.created_at, zone=zone),
        "retiredAt": datetime_text(fact.retired_at, zone=zone),
    }


def _score_body(item: ScoredFact) -> dict[str, Any]:
    return {
        "final": float(item.final),
        "relevance": float(item.relevance),
        "recency": float(item.recency),
        "decayExempt": bool(item.decay_exempt),
        "vector": (
            {"rank": int(item.vector_rank), "similarity": float_or_none(item.similarity)}
            if item.vector_rank
            else None
        ),
        "fullText": (
            {"rank": int(item.text_rank), "score": float_or_none(item.text_score)} if item.text_rank else None
        ),
        "exactRank": int_or_none(item.exact_rank),
        "rerank": float_or_none(item.rerank),
    }


def result_body(item: ScoredFact, *, history: bool) -> dict[str, Any]:
    zone = current_zone()
    fact = item.fact
    body = {
        "factId": int(fact.pk),
        "category": fact.category,
        "key": fact.key,
        "value": fact.value,
        "version": int(fact.version),
        "confidence": float(fact.confidence),
        "importance": float(fact.importance),
        "validFrom": datetime_text(fact.valid_from, zone=zone),
        "validTo": datetime_text(fact.valid_to, zone=zone),
        "createdAt": datetime_text(fact.created_at, zone=zone),
        "accessCount": int(fact.access_count),
        "lastAccessedAt": datetime_text(fact.last_accessed_at, zone=zone),
        "score": _score_body(item),
        "pull": None if fact.pull_id is None else str(fact.pull_id),
        "updates": fact_brief_body(item.updates),
    }
    if history:
        body["history"] = [fact_brief_body(version) for version in item.history]
    return body


def retrieval_body(found: Retrieval, *, history: bool) -> dict[str, Any]:
    """What `RetrieveOutSerializer` writes; each result's `history` only when asked for."""
    return {
        "namespace": found.namespace.name,
        "subject": found.subject,
        "query": found.query,
        "asOf": datetime_text(found.as_of),
        "results": [result_body(item, history=history) for item in found.results],
        "context": found.context,
        "reformationNeeded": bool(found.reformation_needed),
        "candidateCount": int(found.candidate_count),
        "belowConfidence": int(found.below_confidence),
    }
