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


def _subject_rows_at_most(scope: Scope, ceiling: int) -> bool:
    """Whether the subject holds at most `ceiling` active rows (an index-only count, bounded)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT count(*) FROM (SELECT 1 FROM {TABLE} f WHERE f.namespace_id = %s AND f.subject = %s
                AND f.status = 'active' LIMIT %s) AS bounded""",
            [scope.namespace_id, scope.subject, ceiling + 1],
        )
        row = cursor.fetchone()
    return row is not None and int(row[0]) <= ceiling


def vector_candidates(*, scope: Scope, embedding: list[float], limit: int) -> list[tuple[int, float]]:
    """(id, cosine similarity), nearest first.

    A subject of at most MEMORYPR_EXACT_SEARCH_MAX_ROWS active facts is searched exactly
    (its rows through the subject index, every distance computed: fast at that size, and
    recall 1); a larger one through the HNSW index with per-query ef_search and an
    iterative scan. The index covers every tenant, so a small subject would otherwise make
    the index walk far past other tenants' rows before it finds enough of its own.
    """
    where, params = _scope_sql(scope)
    params.update(q=vector_literal(embedding), n=limit)
    exact = scope.historical or _subject_rows_at_most(
        scope, int(getattr(settings, "MEMORYPR_EXACT_SEARCH_MAX_ROWS", 20000))
    )
    # `+ 0` makes the ordering an expression the HNSW index cannot serve: an exact scan.
    order = "(f.embedding <=> %(q)s::vector) + 0" if exact else "f.embedding <=> %(q)s::vector"
    ef_search = max(int(getattr(settings, "MEMORYPR_HNSW_EF_SEARCH", 100)), limit)
    sql = f"""
        WITH nearest AS MATERIALIZED (
            SELECT f.id, f.embedding <=> %(q)s::vector AS distance
            FROM {TABLE} f
            WHERE {where} AND f.embedding IS NOT NULL
            ORDER BY {order}
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


@dataclass(frozen=True)
class TextHit:
    fact_id: int
    rank: float
    value_named: bool  # the whole value is named verbatim in the query (an entity hit)


def full_text_candidates(*, scope: Scope, query: str, limit: int) -> list[TextHit]:
    """Best first: facts holding all query words, then any of them, over the `simple` tsvector.

    An OR of common words can match a large share of a big subject, and ranking reads every
    matching row; so each phase ranks at most MEMORYPR_FTS_MAX_MATCHES matches, and the
    AND phase first makes sure the rows that hold every word are among those ranked.
    """
    tokens = query_tokens(query)
    if not tokens:
        return []
    where, params = _scope_sql(scope)
    params.update(
        values=exact_value_terms(query), n=limit, cap=int(getattr(settings, "MEMORYPR_FTS_MAX_MATCHES", 2000))
    )
    phases = ([tsquery_text(tokens, operator="&")] if len(tokens) > 1 else []) + [tsquery_text(tokens)]
    hits: dict[int, TextHit] = {}
    with connection.cursor() as cursor:
        for tsq in phases:
            cursor.execute(
                f"""
                WITH matched AS MATERIALIZED (
                    SELECT f.id, f.search_vector, lower(f.value #>> '{{}}') AS value_text FROM {TABLE} f
                    WHERE {where} AND f.search_vector @@ to_tsquery('simple', %(tsq)s)
                    LIMIT %(cap)s
                )
                SELECT m.id, ts_rank_cd(m.search_vector, to_tsquery('simple', %(tsq)s)) AS rank,
                       m.value_text = ANY(%(values)s)
                FROM matched m ORDER BY rank DESC, m.id DESC LIMIT %(n)s
                """,
                params | {"tsq": tsq},
            )
            for fact_id, rank, named in cursor.fetchall():
                hits.setdefault(int(fact_id), TextHit(int(fact_id), float(rank), bool(named)))
            if len(hits) >= limit:
                break
    return list(hits.values())[:limit]


def key_candidates(*, scope: Scope, query: str, limit: int) -> list[int]:
    """Facts whose key the query names verbatim ('home city' names home_city)."""
    keys = exact_key_terms(query)
    if not keys:
        return []
    where, params = _scope_sql(scope)
    params.update(keys=keys, n=limit)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT f.id FROM {TABLE} f WHERE {where} AND f.key = ANY(%(keys)s)"
            " ORDER BY f.importance DESC, f.id DESC LIMIT %(n)s",
            params,
        )
        return [int(row[0]) for row in cursor.fetchall()]


def candidates_collect(*, scope: Scope, query: str, embedding: list[float], limit: int) -> Candidates:
    found = Candidates()
    for fact_id, similarity in vector_candidates(scope=scope, embedding=embedding, limit=limit):
        found.vector.append(fact_id)
        found.similarity[fact_id] = similarity
    text_hits = full_text_candidates(scope=scope, query=query, limit=limit)
    for hit in text_hits:
        found.full_text.append(hit.fact_id)
        found.text_rank[hit.fact_id] = hit.rank
    # Exact hits: keys the query names, then facts whose whole value it names (an entity).
    exact = key_candidates(scope=scope, query=query, limit=limit)
    exact += [hit.fact_id for hit in text_hits if hit.value_named and hit.fact_id not in exact]
    found.exact = exact[:limit]
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
