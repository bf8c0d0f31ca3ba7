"""Consolidation: near-duplicate facts about the same entity become one (docs/architecture.md §7).

Two facts alive now (active, inside their valid time) of the same namespace, subject and
category whose embeddings have cosine > 0.85 are a pair. Unless they disagree on a key
attribute, one KPR merges them: the survivor (higher confidence, then importance) takes the
fuller value, the higher confidence and importance and the widest valid time, and the other
is deleted. When they do disagree (same attribute, different values: the seed's two
addresses), merging would invent a fact, so one KPR lowers both confidences instead,
expressed as an UPDATE that keeps the value and carries the lower confidence.

Incremental: a cursor remembers the highest fact id scanned, so each run looks only at
new versions (bounded by MEMORYPR_CONSOLIDATION_SCAN); keys are derived from the pair's
content, so a pair is proposed once whatever version ids it gets later.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from memorypr.evolution.conf import conf, conf_int
from memorypr.evolution.models import JobCursor
from memorypr.evolution.services.proposals import (
    JobReport,
    content_key,
    delete_op,
    evidence,
    report_add,
    system_propose,
)
from memorypr.facts.models import FactStatus, FactVersion
from memorypr.facts.selectors import valid_at_q
from memorypr.pulls.models import Action
from memorypr.pulls.specs import OperationSpec
from memorypr.vectors.embedding import embed_texts, value_text
from memorypr.vectors.nearest import Scope, vector_candidates

JOB = "consolidation"
# The nearest facts of the same subject and category looked at for a pair, nearest first.
NEIGHBOURS = 5
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(frozen=True)
class Pair:
    first: FactVersion
    second: FactVersion
    similarity: float


def key_tokens(key: str) -> list[str]:
    return _TOKEN.findall(key.lower())


def same_attribute(a: str, b: str) -> bool:
    """Keys naming the same attribute: same head word (home_city / current_city) or mostly shared words."""
    ta, tb = key_tokens(a), key_tokens(b)
    if not ta or not tb:
        return False
    if ta[-1] == tb[-1]:
        return True
    shared, union = set(ta) & set(tb), set(ta) | set(tb)
    return len(shared) / len(union) >= 0.5


def values_agree(a: FactVersion, b: FactVersion) -> bool:
    """Same words (one value's words all in the other's), or values that mean the same (cosine)."""
    ta, tb = value_text(a.value).strip().lower(), value_text(b.value).strip().lower()
    wa, wb = set(_TOKEN.findall(ta)), set(_TOKEN.findall(tb))
    if ta == tb or (wa and wb and (wa <= wb or wb <= wa)):
        return True
    va, vb = embed_texts([ta, tb])
    cosine = sum(x * y for x, y in zip(va, vb, strict=True))
    return cosine >= conf("MEMORYPR_CONSOLIDATION_VALUE_AGREEMENT")


def fact_neighbours(fact: FactVersion, *, threshold: float, at: datetime) -> list[tuple[int, float]]:
    """(id, cosine) of the facts nearest to `fact` in its subject and category, alive at `at`, whose
    cosine exceeds `threshold`: at most NEIGHBOURS, nearest first.

    Searched as retrieval's vector channel searches (memorypr.vectors.nearest): an exact scan of a
    small scope, the walk of its HNSW graph otherwise. Scanned exactly, a fact of a subject of
    100k facts took 100 ms; a run examines hundreds.
    """
    if fact.embedding is None:  # not embedded yet: nothing to compare it with
        return []
    scope = Scope(namespace_id=fact.namespace_id, subject=fact.subject, at=at, categories=(fact.category,))
    nearest = vector_candidates(scope=scope, embedding=fact.embedding, limit=NEIGHBOURS + 1)
    return [
        (other, similarity) for other, similarity in nearest if other != fact.pk and similarity > threshold
    ][:NEIGHBOURS]


def _survivor(pair: Pair) -> tuple[FactVersion, FactVersion]:
    ranked = sorted(
        (pair.first, pair.second),
        key=lambda f: (f.confidence, f.importance, f.access_count, f.pk),
        reverse=True,
    )
    return ranked[0], ranked[1]


def merge_operations(pair: Pair) -> list[OperationSpec]:
    keep, drop = _survivor(pair)
    keep_text, drop_text = value_text(keep.value), value_text(drop.value)
    merged_value = (
        drop.value
        if drop_text.lower() != keep_text.lower() and keep_text.lower() in drop_text.lower()
        else keep.value
    )
    starts = [f.valid_from for f in (keep, drop)]
    ends = [f.valid_to for f in (keep, drop)]
    valid_from = None if None in starts else min(s for s in starts if s is not None)
    valid_to = None if None in ends else max(e for e in ends if e is not None)
    confidence = max(keep.confidence, drop.confidence)
    importance = max(keep.importance, drop.importance)
    why = (
        f"Consolidate: {keep.key} and {drop.key} say the same thing (cosine {pair.similarity:.2f});"
        f" kept as {keep.key}."
    )
    ops: list[OperationSpec] = []
    changed = (
        merged_value != keep.value
        or confidence != keep.confidence
        or importance != keep.importance
        or (valid_from, valid_to) != (keep.valid_from, keep.valid_to)
    )
    if changed:
        ops.append(
            OperationSpec(
                action=Action.UPDATE,
                category=keep.category,
                key=keep.key,
                old_value=keep.value,
                new_value=merged_value,
                confidence=confidence,
                importance=importance,
                valid_from=valid_from,
                valid_to=valid_to,
                evidence=evidence(why),
            )
        )
    ops.append(delete_op(fact=drop, reason=why))
    return ops


def conflict_operations(pair: Pair) -> list[OperationSpec]:
    penalty = conf("MEMORYPR_CONSOLIDATION_CONFLICT_PENALTY")
    a, b = sorted((pair.first, pair.second), key=lambda f: f.key)
    why = (
        f"Conflict: {a.key}={value_text(a.value)!r} and {b.key}={value_text(b.value)!r} describe the same"
        f" attribute with different values (cosine {pair.similarity:.2f}); not merged, confidence lowered"
        f" by {penalty:.2f} until one is confirmed."
    )
    return [
        OperationSpec(
            action=Action.UPDATE,
            category=f.category,
            key=f.key,
            old_value=f.value,
            new_value=f.value,
            confidence=round(max(0.0, f.confidence - penalty), 6),
            importance=f.importance,
            valid_from=f.valid_from,
            valid_to=f.valid_to,
            evidence=evidence(why),
        )
        for f in (a, b)
    ]


def consolidation_run(*, limit: int | None = None, scan: int | None = None) -> JobReport:
    budget = limit if limit is not None else conf_int("MEMORYPR_EVOLUTION_BATCH")
    scan_size = scan if scan is not None else conf_int("MEMORYPR_CONSOLIDATION_SCAN")
    threshold = conf("MEMORYPR_CONSOLIDATION_SIMILARITY")
    report = JobReport(job=JOB)
    cursor, _ = JobCursor.objects.get_or_create(job=JOB)
    now = timezone.now()
    batch = list(
        FactVersion.objects.filter(pk__gt=cursor.position, status=FactStatus.ACTIVE, embedding__isnull=False)
        .filter(valid_at_q(now))
        .select_related("namespace")
        .defer("search_text", "search_vector")
        .order_by("pk")[:scan_size]
    )
    touched: set[int] = set()
    position = cursor.position
    for fact in batch:
        if report.proposed >= budget:
            break
        position = fact.pk
        report.examined += 1
        if fact.pk in touched:
            continue
        for other_id, similarity in fact_neighbours(fact, threshold=threshold, at=now):
            if other_id in touched:
                continue
            other = FactVersion.objects.select_related("namespace").defer("embedding").get(pk=other_id)
            pair = Pair(fact, other, similarity)
            conflict = same_attribute(fact.key, other.key) and not values_agree(fact, other)
            pull, created = system_propose(
                namespace=fact.namespace,
                subject=fact.subject,
                job=JOB,
                idempotency_key=content_key("conflict" if conflict else "consolidate", fact, other),
                operations=conflict_operations(pair) if conflict else merge_operations(pair),
            )
            report_add(report, pull, created)
            touched.update({fact.pk, other_id})
            break
    JobCursor.objects.filter(pk=cursor.pk).update(position=position, updated_at=timezone.now())
    return report
