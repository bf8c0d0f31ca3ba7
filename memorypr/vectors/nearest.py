"""The nearest active versions of a scope: an exact scan of a small one, a walk of its HNSW graph.

Every query filters to what was alive at the search's moment inside the SQL, so an index
scan keeps looking until it has enough live rows: pgvector 0.8's iterative scans
(`hnsw.iterative_scan = relaxed_order`) stop a namespace/subject/status filter from
starving the HNSW result, and the materialised CTE restores exact distance order
(relaxed order may return neighbours slightly out of order). Which of the two a scope takes
(`subject_is_small`) is decided here for every search of the store: retrieval's vector
channel and consolidation's neighbours alike.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy
from django.db import connection

from memorypr.common.db.cursors import generic_plan_fetchall
from memorypr.common.db.vectors import VectorParam
from memorypr.vectors.conf import conf
from memorypr.vectors.store import FACT_TABLE as TABLE
from memorypr.vectors.store import GRAPH_GROUPS, GRAPH_INDEX_PREFIX, graph_group_sql


@dataclass(frozen=True)
class Scope:
    """Where and when to look: one subject of one namespace, now or as of a past moment."""

    namespace_id: int
    subject: str
    at: datetime
    historical: bool = False
    categories: tuple[str, ...] = ()


def alive_sql(alias: str = "f", *, historical: bool = False, status_indexed: bool = True) -> str:
    """Now: active and inside its valid time. As of T: known at T, not yet retired at T, valid at T.

    A retired version with no retired_at cannot be placed in time and is left out of history.
    `status_indexed=False` writes the status test so that no index can serve it (`_key_lookup_sql`).
    """
    valid = (
        f"({alias}.valid_from IS NULL OR {alias}.valid_from <= %(at)s)"
        f" AND ({alias}.valid_to IS NULL OR {alias}.valid_to > %(at)s)"
    )
    if not historical:
        status = f"{alias}.status" if status_indexed else f"({alias}.status || '')"
        return f"{status} = 'active' AND {valid}"
    return f"{alias}.created_at <= %(at)s AND ({alias}.status = 'active' OR {alias}.retired_at > %(at)s) AND {valid}"


def scope_sql(scope: Scope, alias: str = "f", *, status_indexed: bool = True) -> tuple[str, dict[str, Any]]:
    where = f"{alias}.namespace_id = %(ns)s AND {alias}.subject = %(subject)s AND " + alive_sql(
        alias, historical=scope.historical, status_indexed=status_indexed
    )
    params: dict[str, Any] = {
        "ns": scope.namespace_id,
        "subject": scope.subject,
        "at": scope.at,
        "nearest_categories": list(scope.categories) or None,
    }
    if scope.categories:
        where += f" AND {alias}.category = ANY(%(categories)s)"
        params["categories"] = list(scope.categories)
    return where, params


def _subject_rows_bounded(scope: Scope, ceiling: int) -> int:
    """The subject's active rows, counted up to `ceiling` + 1 (an index-only count, bounded)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT count(*) FROM (SELECT 1 FROM {TABLE} f WHERE f.namespace_id = %s AND f.subject = %s
                AND f.status = 'active' LIMIT %s) AS bounded""",
            [scope.namespace_id, scope.subject, ceiling + 1],
        )
        row = cursor.fetchone()
    return int(row[0]) if row is not None else 0


def vector_candidates_sql(
    *, scope: Scope, embedding: Sequence[float] | numpy.ndarray, limit: int, exact: bool
) -> tuple[str, dict[str, Any]]:
    """The nearest-neighbour query of a scope: an exact scan, or the HNSW index's order."""
    where, params = scope_sql(scope)
    params.update(q=VectorParam(embedding), n=limit)
    return (
        f"WITH {nearest_cte(where, exact=exact)} SELECT id, distance FROM v_near ORDER BY {NEAREST_ORDER}",
        params,
    )


def vector_candidates(
    *, scope: Scope, embedding: Sequence[float] | numpy.ndarray, limit: int
) -> list[tuple[int, float]]:
    """(id, cosine similarity), nearest first.

    A subject of at most MEMORYPR_EXACT_SEARCH_MAX_ROWS active facts is searched exactly
    (its rows through the subject index, every distance computed: fast at that size, and
    recall 1); a larger one through the HNSW index with per-query ef_search and an
    iterative scan. The index covers every tenant, so a small subject would otherwise make
    the index walk far past other tenants' rows before it finds enough of its own.
    """
    exact = subject_is_small(scope)
    sql, params = vector_candidates_sql(scope=scope, embedding=embedding, limit=limit, exact=exact)
    rows = nearest_fetchall(sql, params, limit=limit, exact=exact)
    if not exact and walk_fell_short(scope, found=len(rows), limit=limit):
        sql, params = vector_candidates_sql(scope=scope, embedding=embedding, limit=limit, exact=True)
        rows = nearest_fetchall(sql, params, limit=limit, exact=True)
    return [(int(row[0]), 1.0 - float(row[1])) for row in rows]


def walk_fell_short(scope: Scope, *, found: int, limit: int) -> bool:
    """Whether an HNSW walk found fewer rows than the subject holds and the search asked for.

    A walk can end early: many identical vectors (the same fact in many tenants' subjects)
    crowd each other's neighbour lists, and the graph around a query may lead only to other
    tenants' rows. The search then falls back to the exact scan: slower, never empty.
    """
    if found >= limit:
        return False
    if scope.categories:
        # The categories may hold fewer rows than the subject: count them (up to the limit,
        # through the index of active versions by category and key).
        return found < _scope_rows_bounded(scope, limit)
    # Counted up to the limit at least: whether the subject holds more rows than the walk found.
    ceiling = max(int(conf("MEMORYPR_EXACT_SEARCH_MAX_ROWS")), limit)
    return found < _cached_subject_rows(scope, ceiling, time.monotonic())


def _scope_rows_bounded(scope: Scope, limit: int) -> int:
    """The rows the scope's search may find (alive, with a vector), counted up to `limit`."""
    where, params = scope_sql(scope)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {TABLE} f WHERE {where} AND f.embedding IS NOT NULL"
            " LIMIT %(n)s) AS bounded",
            params | {"n": limit},
        )
        row = cursor.fetchone()
    return int(row[0]) if row is not None else 0


def _hnsw_settings(limit: int) -> list[str]:
    """Values of hnsw.ef_search, hnsw.iterative_scan and hnsw.max_scan_tuples for a search of `limit`."""
    return [
        str(max(int(conf("MEMORYPR_HNSW_EF_SEARCH")), limit)),
        str(conf("MEMORYPR_HNSW_ITERATIVE_SCAN")),
        str(int(conf("MEMORYPR_HNSW_MAX_SCAN_TUPLES"))),
    ]


_SET_HNSW = (
    "SELECT set_config('hnsw.ef_search', %(ef)s, %(local)s),"
    " set_config('hnsw.iterative_scan', %(iterative)s, %(local)s),"
    " set_config('hnsw.max_scan_tuples', %(tuples)s, %(local)s)"
)
# Per server connection, the HNSW settings it holds for its session (see _hnsw_settings_apply).
_SESSION_HNSW: weakref.WeakKeyDictionary[Any, tuple[str, ...]] = weakref.WeakKeyDictionary()


def nearest_fetchall(sql: str, params: dict[str, Any], *, limit: int, exact: bool) -> list[tuple[Any, ...]]:
    """Run a statement that finds the nearest rows by an exact scan or through the HNSW index.

    Either way the statement's best plan is the same for all its values, so it runs under a
    generic plan: prepared like any hot statement (after psycopg's prepare_threshold) and
    planned once per connection. Planning the retrieval statement for each query's values cost
    more than running it: for a small subject 1.9 ms against 0.8 ms (as the web role); at 100k
    facts in one subject, parsing and planning took 1.5-2.3 ms of the 4-5.5 ms the server
    spent. An exact scan reads the subject's rows through its btree index whatever the values;
    a walk goes through `fact_nearest()`, whose one plan walks the graph. The walk needs the
    HNSW search settings; an exact scan none. The rows (ids, distances, keys, scores, times) are
    read in binary.
    """
    if not exact:
        _hnsw_settings_apply(limit=limit)
    return generic_plan_fetchall(sql, params, binary=True)


def _hnsw_settings_apply(*, limit: int) -> None:
    """The HNSW search settings for `limit`, in force for the statement that comes next.

    Outside a transaction they are made the connection's session settings, once per server
    connection and again only when they change: they cost a round trip and a transaction
    (BEGIN, SET LOCAL, COMMIT) per query otherwise. Inside the caller's transaction they are
    transaction-local, since a session setting made there would be undone by its rollback
    while this process believed it in force.
    """
    values = _hnsw_settings(limit)
    settings = dict(zip(("ef", "iterative", "tuples"), values, strict=True))
    if connection.in_atomic_block:
        with connection.cursor() as cursor:
            cursor.execute(_SET_HNSW, settings | {"local": True})
        return
    connection.ensure_connection()
    server = connection.connection
    if _SESSION_HNSW.get(server) != tuple(values):
        with connection.cursor() as cursor:
            cursor.execute(_SET_HNSW, settings | {"local": False})
        _SESSION_HNSW[server] = tuple(values)


# Relaxed order may return neighbours slightly out of order: the rows of `v_near` are sorted again,
# as a whole. `+ 0` keeps it a whole sort: the planner takes the CTE's ORDER BY for the order of
# its rows, and would only sort ties by id (an incremental sort on a "presorted" distance).
NEAREST_ORDER = "distance + 0, id"


def scoring_columns_sql(alias: str) -> str:
    """What retrieval's scoring reads of a fact version: confidence, importance, last touched
    (last accessed, or created when never accessed), as `fact_nearest()` returns them too."""
    return f"{alias}.confidence, {alias}.importance, coalesce({alias}.last_accessed_at, {alias}.created_at) AS last_touched"


# The columns of `v_near`, read from each row as it is found (facts migration 0016): its key and
# document for the text channel, and what scoring reads, so retrieval does not read the rows again.
_WALK_COLUMNS = "n.id, n.distance, n.key, n.search_vector, n.confidence, n.importance, n.last_touched"


def nearest_cte(where: str, *, exact: bool) -> str:
    """CTE `v_near`: the nearest rows, by an exact scan (a small subject) or through the HNSW index:
    id, distance, key, search_vector and the scoring columns (`scoring_columns_sql`).

    The walk of the index is `fact_nearest()` (facts migrations 0012, 0014, 0016), whose plans walk the
    graph of the subject's group whatever the subject: the statement around it may then be
    prepared and planned once.
    """
    if not exact:
        return f"""v_near AS MATERIALIZED (SELECT {_WALK_COLUMNS} FROM fact_nearest(
            %(ns)s, %(subject)s, %(q)s::vector, %(at)s, %(nearest_categories)s, %(n)s) AS n)"""
    # `+ 0` makes the ordering an expression the HNSW index cannot serve: an exact scan.
    return f"""v_near AS MATERIALIZED (SELECT f.id, f.embedding <=> %(q)s::vector AS distance, f.key,
            f.search_vector, {scoring_columns_sql("f")}
        FROM {TABLE} f WHERE {where} AND f.embedding IS NOT NULL
        ORDER BY (f.embedding <=> %(q)s::vector) + 0 LIMIT %(n)s)"""


# What a search counts to choose its path, kept for a minute in this process (sizes move slowly):
# key -> (when counted, the count). The subject's and categories' counts are bounded.
_COUNTS: dict[tuple[Any, ...], tuple[float, float]] = {}
SMALL_SUBJECT_TTL_SECONDS = 60.0
_COUNTS_MAX = 10_000


def _counted(key: tuple[Any, ...], count: Callable[[], float], now: float) -> float:
    known = _COUNTS.get(key)
    if known is not None and now - known[0] < SMALL_SUBJECT_TTL_SECONDS:
        return known[1]
    counted = count()
    if len(_COUNTS) >= _COUNTS_MAX:
        _COUNTS.clear()
    _COUNTS[key] = (now, counted)
    return counted


def _cached_subject_rows(scope: Scope, ceiling: int, now: float) -> int:
    """The subject's active rows, counted up to `ceiling` + 1."""
    key = ("subject", scope.namespace_id, scope.subject, ceiling)
    return int(_counted(key, lambda: _subject_rows_bounded(scope, ceiling), now))


def _cached_category_rows(scope: Scope, ceiling: int, now: float) -> int:
    """The rows of the scope's categories, counted up to `ceiling` + 1."""
    key = ("categories", scope.namespace_id, scope.subject, scope.categories, ceiling)
    return int(_counted(key, lambda: _scope_rows_bounded(scope, ceiling + 1), now))


def subject_is_small(scope: Scope) -> bool:
    """Whether the scope is searched exactly: history always; now, a subject of at most
    MEMORYPR_EXACT_SEARCH_MAX_ROWS active facts, or categories of a subject that hold at most
    that many, unless a walk would serve them faster (`_walk_pays`).

    The bounded count reads up to that many index entries, a few milliseconds for a large
    subject on every query; a subject's size moves slowly, so it is kept for a minute in
    this process. Either way the search is right: the choice is only exact scan or index.
    A few categories of a large subject are searched exactly too: the walk of the index
    (`fact_nearest()`) would pass over every other category's rows on its way. Categories
    that are most of the subject's graph are walked, as such a subject is: consolidation
    searches a fact's own category, often the subject's only one.
    """
    ceiling = int(conf("MEMORYPR_EXACT_SEARCH_MAX_ROWS"))
    if scope.historical:
        return True
    now = time.monotonic()
    rows = _cached_subject_rows(scope, ceiling, now)
    if rows <= ceiling and not _walk_pays(scope=scope, rows=rows, now=now):
        return True
    if not scope.categories:
        return False
    held = _cached_category_rows(scope, ceiling, now)
    return held <= ceiling and not _walk_pays(scope=scope, rows=held, now=now)


def _walk_pays(*, scope: Scope, rows: int, now: float) -> bool:
    """Whether a walk of the HNSW graph finds a subject's (or its categories') nearest rows faster
    than a scan of them.

    A scan reads every row of the subject; a walk passes over the other subjects' rows of its
    graph (its group's, memorypr.vectors.store.GRAPH_GROUPS) on its way, about its limit over
    the subject's share of the graph. Measured with one graph for the whole store: a subject of
    12,200 active facts that was all of it, 31-32 ms scanned against 7.5-8.6 ms walked (p50 of a
    retrieval); one of 8,000 that was 4.5% of a store of 176k, 17.9 ms scanned, and the walk
    alone 16.5 ms. The product of rows and share (MEMORYPR_WALK_MIN_WEIGHTED_ROWS) tells them apart.
    """
    least = int(conf("MEMORYPR_WALK_MIN_WEIGHTED_ROWS"))
    graph = _cached_graph_rows(scope, now)
    if least <= 0 or graph <= 0:
        return False
    return rows * min(1.0, rows / graph) >= least


def _cached_graph_rows(scope: Scope, now: float) -> float:
    """The active versions in the graph of the scope's subject: its index's count as the last
    VACUUM, ANALYZE or build left it; before any, the store's versions over the groups.

    Retired versions count in the store's figure: a subject's share is underestimated, never
    over, so the doubt goes to the exact scan.
    """
    return _counted(("graph", scope.namespace_id, scope.subject), lambda: _graph_rows(scope, now), now)


def _graph_rows(scope: Scope, now: float) -> float:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT c.reltuples FROM pg_class c WHERE c.relname = %(prefix)s || "
            f"{graph_group_sql(namespace='%(ns)s::bigint', subject='%(subject)s::text')}",
            {"prefix": GRAPH_INDEX_PREFIX, "ns": scope.namespace_id, "subject": scope.subject},
        )
        row = cursor.fetchone()
    counted = float(row[0]) if row is not None else -1.0
    return counted if counted > 0 else _cached_store_rows(now) / GRAPH_GROUPS


def _cached_store_rows(now: float) -> float:
    """Every version in the fact store: the live rows the statistics system counts as writes
    commit, or the last VACUUM's or ANALYZE's count when that is larger (0: neither knows)."""
    return _counted(("store",), _store_rows, now)


def _store_rows() -> float:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT greatest(pg_stat_get_live_tuples(c.oid), c.reltuples, 0) FROM pg_class c"
            " WHERE c.oid = %s::regclass",
            [TABLE],
        )
        row = cursor.fetchone()
    return float(row[0]) if row is not None else 0.0
