"""Hybrid retrieval over what is true now (or was true at a past moment): docs/architecture.md §6.

candidates (HNSW top-N + full-text top-N + exact key/entity hits) → drop anything resting
on a retired fact → Reciprocal Rank Fusion (k=60) → optional cross-encoder → score
relevance × (1 + 0.5 × recency) → confidence bar → top k, with what each fact replaced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils import timezone

from memorypr.agents.models import Namespace
from memorypr.evolution.conf import conf as evolution_conf
from memorypr.facts.models import FactVersion
from memorypr.facts.selectors import (
    fact_versions_by_id,
    fact_versions_replaced,
    fact_versions_with_replaced,
)
from memorypr.retrieval import rerank
from memorypr.retrieval.candidates import (
    Candidates,
    ServableFact,
    candidates_collect,
)
from memorypr.retrieval.conf import conf
from memorypr.retrieval.context import context_block
from memorypr.retrieval.scoring import final_scores, rrf_scores
from memorypr.vectors.embedding import embed_text, fact_text, value_text
from memorypr.vectors.nearest import Scope


@dataclass(kw_only=True)
class Score:
    """How a candidate ranked: fused relevance, recency, the final score and each channel's part."""

    relevance: float
    recency: float
    final: float
    decay_exempt: bool
    vector_rank: int | None = None
    similarity: float | None = None
    text_rank: int | None = None
    text_score: float | None = None
    exact_rank: int | None = None
    rerank: float | None = None


@dataclass(kw_only=True)
class ScoredFact(Score):
    fact: FactVersion
    updates: FactVersion | None = None
    history: list[FactVersion] = field(default_factory=list)


@dataclass
class Retrieval:
    namespace: Namespace
    subject: str
    query: str
    as_of: datetime | None
    results: list[ScoredFact]
    context: str
    reformation_needed: bool
    candidate_count: int
    below_confidence: int


def _rank_of(ranking: list[int]) -> dict[int, int]:
    return {fact_id: position for position, fact_id in enumerate(ranking, start=1)}


@dataclass
class _Ranking:
    """The servable candidates best first, and what their scores are made of.

    Every candidate's final score is computed to order them; the breakdown of a score
    (`parts`) is made only for the facts served, as their full rows are read only for them.
    """

    found: Candidates
    order: list[int]
    relevance: dict[int, float]
    recency: dict[int, float]
    final: dict[int, float]
    exempt: set[int]
    positions: tuple[dict[int, int], dict[int, int], dict[int, int]]
    reranked: dict[int, float]

    def parts(self, fact_id: int) -> dict[str, Any]:
        vector_pos, text_pos, exact_pos = self.positions
        return {
            "relevance": self.relevance[fact_id],
            "recency": self.recency[fact_id],
            "final": self.final[fact_id],
            "decay_exempt": fact_id in self.exempt,
            "vector_rank": vector_pos.get(fact_id),
            "similarity": self.found.similarity.get(fact_id),
            "text_rank": text_pos.get(fact_id),
            "text_score": self.found.text_rank.get(fact_id),
            "exact_rank": exact_pos.get(fact_id),
            "rerank": self.reranked.get(fact_id),
        }


def _reranked(ordered: list[int], *, query: str) -> tuple[list[int], dict[int, float]]:
    ordered = ordered[: int(conf("MEMORYPR_RERANK_CANDIDATES"))]
    facts = fact_versions_by_id(ids=ordered)
    ordered = [i for i in ordered if i in facts]
    texts = [fact_text(key=facts[i].key, value=facts[i].value) for i in ordered]
    return ordered, dict(zip(ordered, rerank.rerank_scores(query=query, texts=texts), strict=True))


def _rank(*, found: Candidates, servable: dict[int, ServableFact], query: str, at: datetime) -> _Ranking:
    rankings = [
        [i for i in ranking if i in servable] for ranking in (found.vector, found.full_text, found.exact)
    ]
    fused = rrf_scores(rankings)
    vector_pos, text_pos, exact_pos = (_rank_of(r) for r in rankings)
    relevance = fused
    reranked: dict[int, float] = {}
    if rerank.rerank_enabled():
        # the cross-encoder reads the best fused candidates only
        ordered, reranked = _reranked(sorted(fused, key=lambda i: (-fused[i], -i)), query=query)
        relevance = reranked
    else:
        ordered = list(fused)  # every candidate, in no order yet: the final score orders them
    exempt_at = evolution_conf("MEMORYPR_DECAY_EXEMPT_IMPORTANCE")
    exempt = {fact_id for fact_id in ordered if servable[fact_id].importance >= exempt_at}
    scores = final_scores(((i, relevance[i], servable[i].last_touched, i in exempt) for i in ordered), now=at)
    recent = {fact_id: factor for fact_id, (factor, _) in scores.items()}
    final = {fact_id: score for fact_id, (_, score) in scores.items()}
    return _Ranking(
        found=found,
        order=sorted(ordered, key=lambda i: (-final[i], -i)),
        relevance=relevance,
        recency=recent,
        final=final,
        exempt=exempt,
        positions=(vector_pos, text_pos, exact_pos),
        reranked=reranked,
    )


def _attach_updates(
    results: list[ScoredFact], *, first_hop: dict[int, FactVersion], max_hops: int = 5
) -> None:
    """The version each result replaced, through its UPDATES edges (`first_hop`: already read).

    A version that only changed confidence (same value, e.g. after a consolidation
    conflict) is looked through, so "updates an older memory" names the last different value.
    """
    pending = {item.fact.pk: item for item in results}
    cursor = {fact_id: fact_id for fact_id in pending}  # result id -> version whose predecessor we need
    for hop in range(max_hops):
        if not cursor:
            break
        previous = first_hop if hop == 0 else fact_versions_replaced(ids=cursor.values())
        next_cursor = {}
        for result_id, at in cursor.items():
            replaced = previous.get(at)
            if replaced is None:
                continue
            item = pending[result_id]
            item.updates = replaced
            if value_text(replaced.value) == value_text(item.fact.value):
                next_cursor[result_id] = replaced.pk
        cursor = next_cursor


def _attach_history(results: list[ScoredFact]) -> None:
    for item in results:
        fact = item.fact
        item.history = list(
            FactVersion.objects.filter(
                namespace_id=fact.namespace_id, subject=fact.subject, category=fact.category, key=fact.key
            )
            .defer("embedding", "search_text", "search_vector")
            .order_by("version")
        )


def retrieve(
    *,
    namespace: Namespace,
    subject: str,
    query: str,
    top_k: int = 5,
    categories: tuple[str, ...] = (),
    as_of: datetime | None = None,
    include_history: bool = False,
    now: datetime | None = None,
    embedding: list[float] | None = None,
) -> Retrieval:
    """The top k facts for a query, alive now (or at `as_of`), and a context block for a prompt.

    When the best k candidates are all at or below the confidence bar the result is empty
    and `reformation_needed` is set (the seed: return nothing and re-form the memory).
    `embedding` is the query's vector when the caller already has it.
    """
    at = as_of or now or timezone.now()
    scope = Scope(
        namespace_id=namespace.pk, subject=subject, at=at, historical=as_of is not None, categories=categories
    )
    limit = int(conf("MEMORYPR_RETRIEVAL_CANDIDATES"))
    found = candidates_collect(
        scope=scope, query=query, embedding=embedding or embed_text(query), limit=limit
    )
    servable = found.servable
    ranking = _rank(found=found, servable=servable, query=query, at=at)

    bar = float(conf("MEMORYPR_RETRIEVAL_MIN_CONFIDENCE"))
    head = ranking.order[:top_k]
    reformation_needed = bool(head) and all(servable[i].confidence <= bar for i in head)
    confident = [i for i in ranking.order if servable[i].confidence > bar]
    served = [] if reformation_needed else confident[:top_k]
    facts, replaced = fact_versions_with_replaced(ids=served)
    results = [ScoredFact(fact=facts[i], **ranking.parts(i)) for i in served if i in facts]
    _attach_updates(results, first_hop=replaced)
    if include_history:
        _attach_history(results)
    return Retrieval(
        namespace=namespace,
        subject=subject,
        query=query,
        as_of=as_of,
        results=results,
        context=context_block(
            query=query, results=results, as_of=as_of, reformation_needed=reformation_needed
        ),
        reformation_needed=reformation_needed,
        candidate_count=len(ranking.order),
        below_confidence=len(ranking.order) - len(confident),
    )
