"""Candidate generation: vector (pgvector HNSW), full-text and exact matches, each a ranked id list.

Every query filters to what was alive at the retrieval moment inside the SQL, so an index
scan keeps looking until it has enough live rows: pgvector 0.8's iterative scans
(`hnsw.iterative_scan = relaxed_order`) stop a namespace/subject/status filter from
starving the HNSW result, and the materialised CTE restores exact distance order
(relaxed order may return neighbours slightly out of order).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection

from memorypr.common.db.cursors import generic_plan_fetchall
from memorypr.retrieval.conf import conf
from memorypr.retrieval.query import key_part_terms, key_terms, name_inside, query_tokens, tsquery_text
from memorypr.vectors.conf import conf as vectors_conf
from memorypr.vectors.store import FACT_TABLE as TABLE
from memorypr.vectors.store import GRAPH_GROUPS, GRAPH_INDEX_PREFIX, graph_group_sql, vector_literal


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
    # What scoring reads of the candidates that may be served (see `candidates_servable`); from
    # `candidates_collect`, read in its statement, for every row any channel found.
    servable: dict[int, ServableFact] = field(default_factory=dict)

    def ids(self) -> set[int]:
        return set(self.vector) | set(self.full_text) | set(self.exact)


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


def _scope_sql(scope: Scope, alias: str = "f", *, status_indexed: bool = True) -> tuple[str, dict[str, Any]]:
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


def _key_lookup_sql(scope: Scope) -> str:
    """The live rows of the subject whose key is one of `%(keys)s`: one lookup of the key index per key.

    The retrieval statement is planned once for all values (a generic plan), so the planner
    cannot see how few keys a query names. As `key = ANY(keys)`, where a subject's facts share
    few distinct keys the statistics made the (namespace, subject, status) index look as good,
    and the lookup read every active row of the subject: 54 ms instead of 0.03 ms at 80k facts
    in one subject. Looked up key by key, each lookup matches the key index on all its columns.
    """
    where, _ = _scope_sql(scope, status_indexed=False)
    # OFFSET 0 keeps the lookup a subquery run once per key (not flattened into a join the
    # planner may turn around: it takes a subject for a handful of rows in a generic plan).
    return f"""SELECT f.id, f.key, f.importance FROM unnest(%(keys)s::text[]) AS k(key)
        CROSS JOIN LATERAL (SELECT f.id, f.key, f.importance FROM {TABLE} f
            WHERE {where} AND f.key = k.key OFFSET 0) AS f"""


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
    *, scope: Scope, embedding: list[float], limit: int, exact: bool
) -> tuple[str, dict[str, Any]]:
    """The nearest-neighbour query of a scope: an exact scan, or the HNSW index's order."""
    where, params = _scope_sql(scope)
    params.update(q=vector_literal(embedding), n=limit)
    return (
        f"WITH {_vector_cte(where, exact=exact)} SELECT id, distance FROM v_near ORDER BY {_NEAREST_ORDER}",
        params,
    )


def vector_candidates(*, scope: Scope, embedding: list[float], limit: int) -> list[tuple[int, float]]:
    """(id, cosine similarity), nearest first.

    A subject of at most MEMORYPR_EXACT_SEARCH_MAX_ROWS active facts is searched exactly
    (its rows through the subject index, every distance computed: fast at that size, and
    recall 1); a larger one through the HNSW index with per-query ef_search and an
    iterative scan. The index covers every tenant, so a small subject would otherwise make
    the index walk far past other tenants' rows before it finds enough of its own.
    """
    exact = subject_is_small(scope)
    sql, params = vector_candidates_sql(scope=scope, embedding=embedding, limit=limit, exact=exact)
    rows = _nearest_fetchall(sql, params, limit=limit, exact=exact)
    if not exact and walk_fell_short(scope, found=len(rows), limit=limit):
        sql, params = vector_candidates_sql(scope=scope, embedding=embedding, limit=limit, exact=True)
        rows = _nearest_fetchall(sql, params, limit=limit, exact=True)
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
    where, params = _scope_sql(scope)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {TABLE} f WHERE {where} AND f.embedding IS NOT NULL"
            " LIMIT %(n)s) AS bounded",
            params | {"n": limit},
        )
        row = cursor.fetchone()
    return int(row[0]) if row is not None else 0


KEY_WHOLE = 2  # every part of the key ('japan.official_language' by "official language of Japan")
KEY_ENTITY = 1  # the key's first part, the entity the fact is about ('japan')


@dataclass(frozen=True)
class TextHit:
    fact_id: int
    rank: float
    key: str
    key_named: int  # KEY_WHOLE, KEY_ENTITY or 0: how much of the fact's key the query names
    ranked: bool = True  # in the text ranking; False: returned only as an entity hit


@dataclass(frozen=True)
class KeyHit:
    """A fact whose key the query names: all of it (KEY_WHOLE) or its entity (KEY_ENTITY)."""

    fact_id: int
    key: str
    named: int

    @property
    def entity(self) -> str:
        return self.key.lower().split(".", 1)[0]

    @property
    def named_text(self) -> str:
        return self.key if self.named == KEY_WHOLE else self.entity


# Key words weigh A, the rest of the document (the value) B: ts_rank_cd counts a query
# word found in the key 1.0 and one found only in the value 0.4. A fact whose value the
# query names ("official language of Japan" and `baseball.country_of_origin = Japan`) is
# weaker evidence than one whose key it names, since such a question asks for the value.
# Keys are slugs: '.' and '_' (sometimes '-', ':', '/', ' ') separate their words; a
# translate is several times cheaper than a regular expression on every matched row.
_KEY_WORDS = "string_to_array(translate(lower(m.key), '_-:/ ', '.....'), '.')"
_WEIGHTED = f"setweight(setweight(m.search_vector, 'B'), 'A', {_KEY_WORDS})"
# The containment test runs only on the few rows whose entity is named.
_KEY_NAMED = f"""CASE WHEN split_part(lower(m.key), '.', 1) = ANY(%(terms)s) THEN
    CASE WHEN string_to_array(lower(m.key), '.') <@ %(terms)s::text[] THEN {KEY_WHOLE} ELSE {KEY_ENTITY} END
    ELSE 0 END"""


def _tsquery_sql(tsq: str) -> str:
    """The phase's tsquery, made once per statement.

    The statement runs under a generic plan, where `to_tsquery('simple', $n)` is a call on a
    parameter, not a constant: written in a condition or a ranking, it is parsed again for every
    row. As a scalar subquery it is an InitPlan, run once: in a generic plan over 5,000 rows,
    ranking took 17 ms instead of 26, and matching 1 ms instead of 10.
    """
    return f"(SELECT to_tsquery('simple', %({tsq})s))"


def _text_phase_sql(name: str, *, tsq: str, gate: str = "", among_nearest: bool = False) -> str:
    """CTEs `{name}_matched`, `{name}_scored` and `{name}_hits` of one full-text phase.

    `gate` is a condition on the other CTEs (the OR phase runs only when the AND phase found
    too few rows); a false gate is a one-time filter, so the phase reads nothing.
    `among_nearest`: the phase matches only the rows the vector channel found (`v_near`), not
    the whole subject (see `_text_ctes`).
    """
    gated = f" AND {gate}" if gate else ""
    if among_nearest:
        # The nearest rows are in scope and alive already; a filter on fifty rows needs no index.
        matched = f"""SELECT m.id, m.key, m.search_vector FROM {TABLE} m
            WHERE m.id IN (SELECT id FROM v_near) AND m.search_vector @@ {_tsquery_sql(tsq)}{gated}"""
    else:
        # The match goes through fact_text_matches() (facts migrations 0005, 0006): under row-level
        # security a `@@` condition here could not use the GIN index. It applies the scope and the
        # moment itself, checks the caller's tenancy, and returns what ranking reads.
        matched = f"""SELECT m.id, m.key, m.search_vector
            FROM fact_text_matches(%(ns)s, %(subject)s, {_tsquery_sql(tsq)}, %(at)s,
                                   %(historical)s, %(text_categories)s, %(cap)s) AS m WHERE true{gated}"""
    return f"""
        {name}_matched AS MATERIALIZED (
            {matched}
        ), {name}_scored AS (
            SELECT m.id, m.key, ts_rank_cd({_WEIGHTED}, {_tsquery_sql(tsq)}) AS rank,
                   {_KEY_NAMED} AS named
            FROM {name}_matched m
        ), {name}_hits AS MATERIALIZED (
            SELECT hits.*, row_number() OVER (
                ORDER BY head DESC, CASE WHEN head THEN 0 ELSE named END DESC, rank DESC, id DESC
            ) AS ord
            FROM (
                (SELECT id, key, rank, named, true AS head FROM {name}_scored
                 ORDER BY rank DESC, id DESC LIMIT %(n)s)
                UNION ALL
                (SELECT id, key, rank, named, false FROM {name}_scored WHERE named > 0
                 ORDER BY named DESC, rank DESC, id DESC LIMIT %(n)s)
            ) AS hits
        )"""


def _text_phases(query: str) -> list[tuple[str, str]]:
    """(CTE name, tsquery) of the full-text phases: all words (when several), then any."""
    tokens = query_tokens(query)
    if not tokens:
        return []
    every = [("t_all", tsquery_text(tokens, operator="&"))] if len(tokens) > 1 else []
    return every + [("t_any", tsquery_text(tokens))]


def _text_hits(rows: list[tuple[str, int, str, float, int, bool]]) -> list[TextHit]:
    """The phases' rows (in phase order, each phase's head first, then its entity hits) as hits;
    a row found in an earlier phase, or in the head and as an entity hit, counts once."""
    hits: dict[int, TextHit] = {}
    for _, fact_id, key, rank, named, head in rows:
        if int(fact_id) not in hits:
            hits[int(fact_id)] = TextHit(int(fact_id), float(rank), key, int(named), bool(head))
    return list(hits.values())


def _text_params(scope: Scope, query: str, limit: int) -> dict[str, Any]:
    phases = _text_phases(query)
    return {
        "terms": key_part_terms(query),
        "n": limit,
        "cap": int(conf("MEMORYPR_FTS_MAX_MATCHES")),
        "historical": scope.historical,
        "text_categories": list(scope.categories) or None,
        **{f"{name}_q": tsq for name, tsq in phases},
    }


def _text_ctes(phases: list[tuple[str, str]], *, any_among_nearest: bool = False) -> list[str]:
    """The phases' CTEs. With `any_among_nearest` (a large subject) the OR phase matches the
    vector channel's rows only: there, common words match thousands of rows, the phase would
    rank an arbitrary MEMORYPR_FTS_MAX_MATCHES of them (the first found, not the best), and
    finding them costs more than the whole vector search. Among the nearest rows it still
    tells which of them share the query's words. The AND phase (or a one-word query's only
    phase) still searches the whole subject.
    """
    ctes = []
    for index, (name, _) in enumerate(phases):
        # the OR phase only when the AND phase ranked fewer than `limit` rows
        gate = f"(SELECT count(*) FROM {phases[0][0]}_hits WHERE head) < %(n)s" if index else ""
        ctes.append(
            _text_phase_sql(name, tsq=f"{name}_q", gate=gate, among_nearest=bool(index) and any_among_nearest)
        )
    return ctes


def full_text_candidates(*, scope: Scope, query: str, limit: int) -> list[TextHit]:
    """Best first: facts holding all query words, then any of them, over the `simple` tsvector.

    Ranked with key words weighted over value words. An OR of common words can match a
    large share of a big subject, and ranking reads every matching row; so each phase ranks
    at most MEMORYPR_FTS_MAX_MATCHES matches, and the OR phase runs only when the AND phase
    ranked fewer than `limit` rows. Rows whose key the query names are returned beyond the
    top `limit` too (at most `limit` of them): they are the exact channel's entity hits,
    found on the rows this phase reads anyway.
    """
    phases = _text_phases(query)
    if not phases:
        return []
    _, params = _scope_sql(scope)
    selects = " UNION ALL ".join(
        f"(SELECT '{name}', id, key, rank, named, head, ord FROM {name}_hits)" for name, _ in phases
    )
    sql = "WITH " + ",".join(_text_ctes(phases)) + f" SELECT * FROM ({selects}) AS t ORDER BY 1, ord"
    with connection.cursor() as cursor:
        cursor.execute(sql, params | _text_params(scope, query, limit))
        rows = cursor.fetchall()
    return _text_hits([row[:6] for row in _phase_ordered(rows, phases)])


def _phase_ordered(rows: list[tuple[Any, ...]], phases: list[tuple[str, str]]) -> list[tuple[Any, ...]]:
    order = {name: index for index, (name, _) in enumerate(phases)}
    return sorted(rows, key=lambda row: (order[row[0]], row[-1]))


def key_candidates(*, scope: Scope, query: str, limit: int) -> list[KeyHit]:
    """Facts whose whole key the query names verbatim ('home city' names home_city), through the key index."""
    keys = key_terms(query)
    if not keys:
        return []
    _, params = _scope_sql(scope)
    params.update(keys=keys, n=limit)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT f.id, f.key FROM ({_key_lookup_sql(scope)}) AS f"
            " ORDER BY f.importance DESC, f.id DESC LIMIT %(n)s",
            params,
        )
        return [KeyHit(int(fact_id), key, KEY_WHOLE) for fact_id, key in cursor.fetchall()]


def exact_ranking(*, hits: list[KeyHit], similarity: dict[int, float], limit: int) -> list[int]:
    """The exact channel: facts whose whole key the query names, then those whose entity it names.

    The longest name wins: "Windows Server 2008" names windows_server_2008, so facts about
    windows_server, a name inside it, are no exact hits. Within a tier the longer named
    text comes first (the more specific), then the nearer fact (vector similarity), then
    the order found: "capital of Japan" names the entity of every japan.* fact, and the
    vector channel tells which of them the question is about.
    """
    best: dict[int, KeyHit] = {}
    for hit in hits:
        if hit.fact_id not in best or hit.named > best[hit.fact_id].named:
            best[hit.fact_id] = hit
    entities = {hit.entity for hit in best.values()}
    kept = [hit for hit in best.values() if not any(name_inside(hit.entity, other) for other in entities)]
    order = {hit.fact_id: position for position, hit in enumerate(kept)}
    ranked = sorted(
        kept,
        key=lambda hit: (
            -hit.named,
            -len(hit.named_text),
            -similarity.get(hit.fact_id, -2.0),
            order[hit.fact_id],
        ),
    )
    return [hit.fact_id for hit in ranked[:limit]]


def _hnsw_settings(limit: int) -> list[str]:
    """Values of hnsw.ef_search, hnsw.iterative_scan and hnsw.max_scan_tuples for a search of `limit`."""
    return [
        str(max(int(vectors_conf("MEMORYPR_HNSW_EF_SEARCH")), limit)),
        str(vectors_conf("MEMORYPR_HNSW_ITERATIVE_SCAN")),
        str(int(vectors_conf("MEMORYPR_HNSW_MAX_SCAN_TUPLES"))),
    ]


_SET_HNSW = (
    "SELECT set_config('hnsw.ef_search', %(ef)s, %(local)s),"
    " set_config('hnsw.iterative_scan', %(iterative)s, %(local)s),"
    " set_config('hnsw.max_scan_tuples', %(tuples)s, %(local)s)"
)
# Per server connection, the HNSW settings it holds for its session (see _hnsw_settings_apply).
_SESSION_HNSW: weakref.WeakKeyDictionary[Any, tuple[str, ...]] = weakref.WeakKeyDictionary()


def _nearest_fetchall(sql: str, params: dict[str, Any], *, limit: int, exact: bool) -> list[tuple[Any, ...]]:
    """Run a statement that finds the nearest rows by an exact scan or through the HNSW index.

    Either way the statement's best plan is the same for all its values, so it runs under a
    generic plan: prepared like any hot statement (after psycopg's prepare_threshold) and
    planned once per connection. Planning the retrieval statement for each query's values cost
    more than running it: for a small subject 1.9 ms against 0.8 ms (as the web role); at 100k
    facts in one subject, parsing and planning took 1.5-2.3 ms of the 4-5.5 ms the server
    spent. An exact scan reads the subject's rows through its btree index whatever the values;
    a walk goes through `fact_nearest()`, whose one plan walks the graph. The walk needs the
    HNSW search settings; an exact scan none.
    """
    if not exact:
        _hnsw_settings_apply(limit=limit)
    return generic_plan_fetchall(sql, params)


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
_NEAREST_ORDER = "distance + 0, id"


def _vector_cte(where: str, *, exact: bool) -> str:
    """CTE `v_near`: the nearest rows, by an exact scan (a small subject) or through the HNSW index.

    The walk of the index is `fact_nearest()` (facts migrations 0012, 0014), whose plans walk the
    graph of the subject's group whatever the subject: the statement around it may then be
    prepared and planned once.
    """
    if not exact:
        return """v_near AS MATERIALIZED (SELECT n.id, n.distance FROM fact_nearest(
            %(ns)s, %(subject)s, %(q)s::vector, %(at)s, %(nearest_categories)s, %(n)s) AS n)"""
    # `+ 0` makes the ordering an expression the HNSW index cannot serve: an exact scan.
    return f"""v_near AS MATERIALIZED (SELECT f.id, f.embedding <=> %(q)s::vector AS distance FROM {TABLE} f
        WHERE {where} AND f.embedding IS NOT NULL ORDER BY (f.embedding <=> %(q)s::vector) + 0 LIMIT %(n)s)"""


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
    MEMORYPR_EXACT_SEARCH_MAX_ROWS active facts that a walk would not serve faster
    (`_walk_pays`), or categories of a subject that hold at most that many.

    The bounded count reads up to that many index entries, a few milliseconds for a large
    subject on every query; a subject's size moves slowly, so it is kept for a minute in
    this process. Either way the search is right: the choice is only exact scan or index.
    A few categories of a large subject are searched exactly too: the walk of the index
    (`fact_nearest()`) would pass over every other category's rows on its way.
    """
    ceiling = int(conf("MEMORYPR_EXACT_SEARCH_MAX_ROWS"))
    if scope.historical:
        return True
    now = time.monotonic()
    rows = _cached_subject_rows(scope, ceiling, now)
    if rows <= ceiling and not _walk_pays(scope=scope, rows=rows, now=now):
        return True
    return bool(scope.categories) and _cached_category_rows(scope, ceiling, now) <= ceiling


def _walk_pays(*, scope: Scope, rows: int, now: float) -> bool:
    """Whether a walk of the HNSW graph finds a subject's nearest rows faster than a scan of them.

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


# What scoring reads of a candidate (`ServableFact`, in its order), for both reads of it.
_SCORING_COLUMNS = "f.confidence, f.importance, coalesce(f.last_accessed_at, f.created_at)"
# The columns every channel's rows share: (channel, id, key, distance or rank, named, head,
# confidence, importance, last touched, order); the scoring columns only on the 's' rows.
_NO_SCORING = "NULL::float8, NULL::float8, NULL::timestamptz"


def candidates_collect(
    *, scope: Scope, query: str, embedding: list[float], limit: int, exact: bool | None = None
) -> Candidates:
    """The three channels in one statement (one round trip, one plan): vector, full text, exact,
    and what `candidates_servable` reads of the rows they found.

    `exact` forces the exact scan (True) or the HNSW walk (False); by default the subject's
    size decides (`subject_is_small`), and a walk that fell short is done again exactly.
    The same rows, in the same order, as `vector_candidates`, `full_text_candidates` and
    `key_candidates` one after another, except that in a large subject the any-word phase ranks
    only the vector channel's rows (`_text_ctes`); `servable` holds at least every candidate that
    `candidates_servable` would return for `ids()`, with the same columns.
    """
    where, params = _scope_sql(scope)
    phases = _text_phases(query)
    keys = key_terms(query)
    params |= _text_params(scope, query, limit) | {
        "q": vector_literal(embedding),
        "keys": keys,
    }
    small = subject_is_small(scope) if exact is None else exact
    ctes = [_vector_cte(where, exact=small), *_text_ctes(phases, any_among_nearest=not small)]
    selects = [
        f"""(SELECT 'v', id, NULL, distance, 0, true, {_NO_SCORING}, row_number() OVER (ORDER BY {_NEAREST_ORDER})
            FROM v_near)"""
    ]
    selects += [
        f"(SELECT '{name}', id, key, rank, named, head, {_NO_SCORING}, ord FROM {name}_hits)"
        for name, _ in phases
    ]
    found_ids = ["SELECT id FROM v_near"]
    found_ids += [f"SELECT id FROM {name}_hits" for name, _ in phases]
    if keys:
        ctes.append(
            f"""k_hits AS MATERIALIZED (SELECT f.id, f.key, row_number() OVER (ORDER BY f.importance DESC,
                f.id DESC) AS ord FROM ({_key_lookup_sql(scope)}) AS f
                ORDER BY f.importance DESC, f.id DESC LIMIT %(n)s)"""
        )
        selects.append(f"(SELECT 'k', id, key, NULL, 0, true, {_NO_SCORING}, ord FROM k_hits)")
        found_ids.append("SELECT id FROM k_hits")
    # The scoring columns of every row found, read here rather than in a statement of their own.
    selects.append(
        f"""(SELECT 's', f.id, NULL, NULL, 0, true, {_SCORING_COLUMNS}, 0 FROM {TABLE} f
            WHERE f.id IN ({" UNION ".join(found_ids)}) AND NOT {_resting_on_dead_sql(scope, "f")})"""
    )
    sql = "WITH " + ",\n".join(ctes) + "\nSELECT * FROM (" + " UNION ALL ".join(selects) + ") AS c"
    rows = _nearest_fetchall(sql, params, limit=limit, exact=small)
    by_channel: dict[str, list[tuple[Any, ...]]] = {}
    for row in sorted(rows, key=lambda row: int(row[-1])):
        by_channel.setdefault(row[0], []).append(row)
    if not small and walk_fell_short(scope, found=len(by_channel.get("v", [])), limit=limit):
        return candidates_collect(scope=scope, query=query, embedding=embedding, limit=limit, exact=True)
    found = Candidates(
        servable={
            int(row[1]): ServableFact(float(row[6]), float(row[7]), row[8]) for row in by_channel.get("s", [])
        }
    )
    for _, fact_id, _, distance, *_ in by_channel.get("v", []):
        found.vector.append(int(fact_id))
        found.similarity[int(fact_id)] = 1.0 - float(distance)
    text_hits = _text_hits([row[:6] for name, _ in phases for row in by_channel.get(name, [])])
    for hit in [hit for hit in text_hits if hit.ranked][:limit]:
        found.full_text.append(hit.fact_id)
        found.text_rank[hit.fact_id] = hit.rank
    named = [KeyHit(hit.fact_id, hit.key, hit.key_named) for hit in text_hits if hit.key_named]
    key_hits = [KeyHit(int(row[1]), row[2], KEY_WHOLE) for row in by_channel.get("k", [])]
    found.exact = exact_ranking(hits=key_hits + named, similarity=found.similarity, limit=limit)
    return found


@dataclass(frozen=True)
class ServableFact:
    """What scoring reads of a candidate: the full row is read only for the facts served."""

    confidence: float
    importance: float
    last_touched: datetime  # last accessed, or created when never accessed


def _resting_on_dead_sql(scope: Scope, alias: str) -> str:
    return f"""EXISTS (SELECT 1 FROM facts_factedge e JOIN {TABLE} t ON t.id = e.target_id
        WHERE e.source_id = {alias}.id AND e.edge_type = 'DERIVED_FROM'
          AND NOT ({alive_sql("t", historical=scope.historical)}))"""


def candidates_servable(*, fact_ids: list[int], scope: Scope) -> dict[int, ServableFact]:
    """The candidates that may be served, with their scoring columns, in one statement.

    Left out: any candidate resting (DERIVED_FROM) on a fact that is not alive at the
    retrieval moment. The merge marks such conclusions stale; this is a second guard so a
    derived policy is never served on a retired basis, whatever the order of events.
    """
    if not fact_ids:
        return {}
    sql = f"""
        SELECT f.id, {_SCORING_COLUMNS}
        FROM {TABLE} f WHERE f.id = ANY(%(ids)s) AND NOT {_resting_on_dead_sql(scope, "f")}
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, {"ids": fact_ids, "at": scope.at})
        rows = cursor.fetchall()
    return {int(row[0]): ServableFact(float(row[1]), float(row[2]), row[3]) for row in rows}
