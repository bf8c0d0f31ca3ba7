"""Candidate generation: vector (pgvector HNSW), full-text and exact matches, each a ranked id list.

Every query filters to what was alive at the retrieval moment inside the SQL, so an index
scan keeps looking until it has enough live rows: pgvector 0.8's iterative scans
(`hnsw.iterative_scan = relaxed_order`) stop a namespace/subject/status filter from
starving the HNSW result, and the materialised CTE restores exact distance order
(relaxed order may return neighbours slightly out of order).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection, transaction

from memorypr.retrieval.query import exact_key_terms, exact_value_terms, query_tokens, tsquery_text

TABLE = "facts_factversion"


@dataclass(frozen=True)
class Scope:
    """Where and when to look: one subject of one namespace, now or as of a past moment."""

    namespace_id: int
    subject: str
    at: datetime
    historical: bool = False
    categories: tuple[str, ...] = ()


@dataclass
class Candidates:
    vector: list[int] = field(default_factory=list)
    similarity: dict[int, float] = field(default_factory=dict)
    full_text: list[int] = field(default_factory=list)
    text_rank: dict[int, float] = field(default_factory=dict)
    exact: list[int] = field(default_factory=list)

    def ids(self) -> set[int]:
        return set(self.vector) | set(self.full_text) | set(self.exact)


def alive_sql(alias: str = "f", *, historical: bool = False) -> str:
    """Now: active and inside its valid time. As of T: known at T, not yet retired at T, valid at T.

    A retired version with no retired_at cannot be placed in time and is left out of history.
    """
    valid = (
        f"({alias}.valid_from IS NULL OR {alias}.valid_from <= %(at)s)"
        f" AND ({alias}.valid_to IS NULL OR {alias}.valid_to > %(at)s)"
    )
    if not historical:
        return f"{alias}.status = 'active' AND {valid}"
    return f"{alias}.created_at <= %(at)s AND ({alias}.status = 'active' OR {alias}.retired_at > %(at)s) AND {valid}"


def _scope_sql(scope: Scope, alias: str = "f") -> tuple[str, dict[str, Any]]:
    where = f"{alias}.namespace_id = %(ns)s AND {alias}.subject = %(subject)s AND " + alive_sql(
        alias, historical=scope.historical
    )
    params: dict[str, Any] = {"ns": scope.namespace_id, "subject": scope.subject, "at": scope.at}
    if scope.categories:
        where += f" AND {alias}.category = ANY(%(categories)s)"
        params["categories"] = list(scope.categories)
    return where, params


def vector_literal(vector: list[float]) -> str:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def vector_candidates(*, scope: Scope, embedding: list[float], limit: int) -> list[tuple[int, float]]:
    """(id, cosine similarity), nearest first, from the HNSW index with per-query ef_search."""
    where, params = _scope_sql(scope)
    params.update(q=vector_literal(embedding), n=limit)
    ef_search = max(int(getattr(settings, "MEMORYPR_HNSW_EF_SEARCH", 100)), limit)
    sql = f"""
        WITH nearest AS MATERIALIZED (
            SELECT f.id, f.embedding <=> %(q)s::vector AS distance
            FROM {TABLE} f
            WHERE {where} AND f.embedding IS NOT NULL
            ORDER BY f.embedding <=> %(q)s::vector
            LIMIT %(n)s
        )
        SELECT id, distance FROM nearest ORDER BY distance, id
    """
    with transaction.atomic(), connection.cursor() as cursor:
        # SET LOCAL semantics (is_local = true): the settings end with this transaction.
        cursor.execute(
            "SELECT set_config('hnsw.ef_search', %s, true), set_config('hnsw.iterative_scan', %s, true),"
            " set_config('hnsw.max_scan_tuples', %s, true)",
            [
                str(ef_search),
                str(getattr(settings, "MEMORYPR_HNSW_ITERATIVE_SCAN", "relaxed_order")),
                str(int(getattr(settings, "MEMORYPR_HNSW_MAX_SCAN_TUPLES", 20000))),
            ],
        )
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [(int(row[0]), 1.0 - float(row[1])) for row in rows]


def full_text_candidates(*, scope: Scope, query: str, limit: int) -> list[tuple[int, float]]:
    """(id, ts_rank), best first: an OR of the query's tokens over the `simple` tsvector."""
    tokens = query_tokens(query)
    if not tokens:
        return []
    where, params = _scope_sql(scope)
    params.update(tsq=tsquery_text(tokens), n=limit)
    sql = f"""
        SELECT f.id, ts_rank_cd(f.search_vector, q.query) AS rank
        FROM {TABLE} f, to_tsquery('simple', %(tsq)s) AS q(query)
        WHERE {where} AND f.search_vector @@ q.query
        ORDER BY rank DESC, f.id DESC
        LIMIT %(n)s
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [(int(row[0]), float(row[1])) for row in cursor.fetchall()]


def exact_candidates(*, scope: Scope, query: str, limit: int) -> list[int]:
    """Facts whose key, or whose scalar value (an entity such as a city), the query names verbatim."""
    keys, values, tokens = exact_key_terms(query), exact_value_terms(query), query_tokens(query)
    if not keys and not values:
        return []
    where, params = _scope_sql(scope)
    params.update(keys=keys, values=values, tsq=tsquery_text(tokens) if tokens else "", n=limit)
    # Keys through the (namespace, subject, key) index; values only among rows the GIN index
    # says contain a query word, so a large subject is never scanned value by value.
    value_hits = (
        f"""UNION ALL
            SELECT f.id, 1 AS kind, f.importance FROM {TABLE} f
            WHERE {where} AND f.search_vector @@ to_tsquery('simple', %(tsq)s)
              AND lower(f.value #>> '{{}}') = ANY(%(values)s)"""
        if tokens
        else ""
    )
    sql = f"""
        SELECT id FROM (
            SELECT f.id, 0 AS kind, f.importance FROM {TABLE} f WHERE {where} AND f.key = ANY(%(keys)s)
            {value_hits}
        ) hits
        GROUP BY id ORDER BY min(kind), max(importance) DESC, id DESC
        LIMIT %(n)s
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [int(row[0]) for row in cursor.fetchall()]


def candidates_collect(*, scope: Scope, query: str, embedding: list[float], limit: int) -> Candidates:
    found = Candidates()
    for fact_id, similarity in vector_candidates(scope=scope, embedding=embedding, limit=limit):
        found.vector.append(fact_id)
        found.similarity[fact_id] = similarity
    for fact_id, rank in full_text_candidates(scope=scope, query=query, limit=limit):
        found.full_text.append(fact_id)
        found.text_rank[fact_id] = rank
    found.exact = exact_candidates(scope=scope, query=query, limit=limit)
    return found


def derived_from_dead(*, fact_ids: list[int], scope: Scope) -> set[int]:
    """Candidates resting (DERIVED_FROM) on a fact that is not alive at the retrieval moment.

    The merge marks such conclusions stale; this is a second guard so a derived policy is
    never served on a retired basis, whatever the order of events.
    """
    if not fact_ids:
        return set()
    params: dict[str, Any] = {"ids": fact_ids, "at": scope.at}
    sql = f"""
        SELECT DISTINCT e.source_id FROM facts_factedge e JOIN {TABLE} t ON t.id = e.target_id
        WHERE e.source_id = ANY(%(ids)s) AND e.edge_type = 'DERIVED_FROM' AND NOT ({alive_sql("t", historical=scope.historical)})
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {int(row[0]) for row in cursor.fetchall()}
