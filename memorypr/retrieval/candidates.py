"""Candidate generation: vector (pgvector HNSW), full-text and exact matches, each a ranked id list.

Every query filters to what was alive at the retrieval moment inside the SQL. The vector
channel is the store's nearest-neighbour search (memorypr.vectors.nearest: an exact scan of a
small subject, a walk of its HNSW graph otherwise); this module adds the text and key channels
and collects all three in one statement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from operator import itemgetter
from typing import Any, NamedTuple

from django.db import connection

from memorypr.common.db.arrays import TextArrayParam
from memorypr.common.db.vectors import VectorParam
from memorypr.retrieval.common_words import subject_common_words
from memorypr.retrieval.conf import conf
from memorypr.retrieval.query import name_inside, query_terms, tsquery_text
from memorypr.vectors.nearest import (
    NEAREST_ORDER,
    Scope,
    alive_sql,
    nearest_cte,
    nearest_fetchall,
    scope_sql,
    scoring_columns_sql,
    subject_is_small,
    walk_fell_short,
)
from memorypr.vectors.store import FACT_TABLE as TABLE


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


def _key_lookup_sql(scope: Scope) -> str:
    """The live rows of the subject whose key is one of `%(keys)s`: one lookup of the key index per key.

    The retrieval statement is planned once for all values (a generic plan), so the planner
    cannot see how few keys a query names. As `key = ANY(keys)`, where a subject's facts share
    few distinct keys the statistics made the (namespace, subject, status) index look as good,
    and the lookup read every active row of the subject: 54 ms instead of 0.03 ms at 80k facts
    in one subject. Looked up key by key, each lookup matches the key index on all its columns.
    """
    where, _ = scope_sql(scope, status_indexed=False)
    # OFFSET 0 keeps the lookup a subquery run once per key (not flattened into a join the
    # planner may turn around: it takes a subject for a handful of rows in a generic plan).
    return f"""SELECT f.id, f.key, f.importance FROM unnest(%(keys)s::text[]) AS k(key)
        CROSS JOIN LATERAL (SELECT f.id, f.key, f.importance FROM {TABLE} f
            WHERE {where} AND f.key = k.key OFFSET 0) AS f"""


KEY_WHOLE = 2  # every part of the key ('japan.official_language' by "official language of Japan")
KEY_ENTITY = 1  # the key's first part, the entity the fact is about ('japan')


class TextHit(NamedTuple):
    fact_id: int
    rank: float
    key: str
    key_named: int  # KEY_WHOLE, KEY_ENTITY or 0: how much of the fact's key the query names
    ranked: bool = True  # in the text ranking; False: returned only as an entity hit


class KeyHit(NamedTuple):
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


# Key words weigh A, the rest of the document (the value) B: ts_rank counts a query word
# found in the key 1.0 and one found only in the value 0.4. (ts_rank, not ts_rank_cd: a fact's
# text is a key and a short value, where the nearness of the words that ts_rank_cd measures
# tells facts apart no better, and it cost 11 µs a row against 2: 0.6 ms of a retrieval's
# 7.9 at 100k facts in one subject, where the any-word phase ranks 50 rows.) A fact whose value the
# query names ("official language of Japan" and `baseball.country_of_origin = Japan`) is
# weaker evidence than one whose key it names, since such a question asks for the value.
# Keys are slugs: '.' and '_' (sometimes '-', ':', '/', ' ') separate their words; a
# translate is several times cheaper than a regular expression on every matched row.
_KEY_WORDS = "string_to_array(translate(lower(m.key), '_-:/ ', '.....'), '.')"
# The value's words keep the documents' own weight (D), which the ranking counts as B's 0.4:
# the same ranks as weighing them B first, without a copy of every matched row's document.
_RANK_WEIGHTS = "'{0.4, 0.2, 0.4, 1.0}'::float4[]"  # D, C, B, A
_WEIGHTED = f"setweight(m.search_vector, 'A', {_KEY_WORDS})"
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


def _text_phase_sql(
    name: str, *, tsq: str, gate: str = "", among_nearest: bool = False, nearest_too: bool = False
) -> str:
    """CTEs `{name}_matched`, `{name}_scored` and `{name}_hits` of one full-text phase.

    `gate` is a condition on the other CTEs (the OR phase runs only when the AND phase found
    too few rows); a false gate is a one-time filter, so the phase reads nothing.
    `among_nearest`: the phase matches only the rows the vector channel found (`v_near`), not
    the whole subject (see `_text_ctes`).
    `nearest_too` (a statement that has `v_near`): when the search of the whole subject stopped
    at MEMORYPR_FTS_MAX_MATCHES rows (the first found, not the best), the nearest rows that match
    are ranked too. Without them, in a subject of 1,500 facts where "country" matched most rows,
    "Which country was heartland rock created in?" ranked 200 other rows: the fact whose key
    names heartland rock, the vector channel's 4th, was never seen as the entity hit it is.
    """
    gated = f" AND {gate}" if gate else ""
    if among_nearest:
        # The nearest rows are in scope and alive already, and came with their documents.
        matched = f"""SELECT m.id, m.key, m.search_vector FROM v_near m
            WHERE m.search_vector @@ {_tsquery_sql(tsq)}{gated}"""
    else:
        # The match goes through fact_text_matches() (facts migrations 0005, 0006): under row-level
        # security a `@@` condition here could not use the GIN index. It applies the scope and the
        # moment itself, checks the caller's tenancy, and returns what ranking reads.
        matched = f"""SELECT m.id, m.key, m.search_vector
            FROM fact_text_matches(%(ns)s, %(subject)s, {_tsquery_sql(tsq)}, %(at)s,
                                   %(historical)s, %(text_categories)s, %(cap)s) AS m WHERE true{gated}"""
    if nearest_too and not among_nearest:
        # The count is a one-time filter: below the cap, the nearest rows are not read.
        matched_ctes = f"""{name}_found AS MATERIALIZED (
            {matched}
        ), {name}_matched AS MATERIALIZED (
            SELECT m.id, m.key, m.search_vector FROM {name}_found m
            UNION ALL
            SELECT m.id, m.key, m.search_vector FROM v_near m
            WHERE (SELECT count(*) FROM {name}_found) >= %(cap)s
              AND m.search_vector @@ {_tsquery_sql(tsq)}
              AND m.id NOT IN (SELECT f.id FROM {name}_found f)
        )"""
    else:
        matched_ctes = f"""{name}_matched AS MATERIALIZED (
            {matched}
        )"""
    return f"""
        {matched_ctes}, {name}_scored AS (
            SELECT m.id, m.key, ts_rank({_RANK_WEIGHTS}, {_WEIGHTED}, {_tsquery_sql(tsq)}) AS rank,
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


@lru_cache(maxsize=1024)
def _text_phases(query: str) -> tuple[tuple[str, str], ...]:
    """(CTE name, tsquery) of the full-text phases: all words (when several), then any."""
    tokens = list(query_terms(query).tokens)
    if not tokens:
        return ()
    every = [("t_all", tsquery_text(tokens, operator="&"))] if len(tokens) > 1 else []
    return (*every, ("t_any", tsquery_text(tokens)))


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
        "terms": TextArrayParam(query_terms(query).key_parts),
        "n": limit,
        "cap": int(conf("MEMORYPR_FTS_MAX_MATCHES")),
        "historical": scope.historical,
        "text_categories": list(scope.categories) or None,
        **{f"{name}_q": tsq for name, tsq in phases},
    }


def _text_ctes(
    phases: Sequence[tuple[str, str]],
    *,
    any_among_nearest: bool = False,
    all_among_nearest: bool = False,
    nearest_too: bool = False,
) -> list[str]:
    """The phases' CTEs. With `any_among_nearest` (a large subject) the OR phase matches the
    vector channel's rows only: there, common words match thousands of rows, the phase would
    rank an arbitrary MEMORYPR_FTS_MAX_MATCHES of them (the first found, not the best), and
    finding them costs more than the whole vector search. Among the nearest rows it still
    tells which of them share the query's words. The AND phase (or a one-word query's only
    phase) still searches the whole subject, unless every word of the query is that common
    there too (`all_among_nearest`, memorypr.retrieval.common_words). With `nearest_too`, a phase
    that searched the whole subject up to its cap ranks the matching nearest rows too (`_text_phase_sql`).
    """
    ctes = []
    for index, (name, _) in enumerate(phases):
        # the OR phase only when the AND phase ranked fewer than `limit` rows
        gate = f"(SELECT count(*) FROM {phases[0][0]}_hits WHERE head) < %(n)s" if index else ""
        among_nearest = all_among_nearest or (bool(index) and any_among_nearest)
        ctes.append(
            _text_phase_sql(
                name, tsq=f"{name}_q", gate=gate, among_nearest=among_nearest, nearest_too=nearest_too
            )
        )
    return ctes


def _words_all_common(scope: Scope, query: str) -> bool:
    """Whether each word of the query's text phases is common in the subject (`subject_common_words`)."""
    tokens = query_terms(query).tokens
    return bool(tokens) and set(tokens) <= subject_common_words(scope=scope)


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
    _, params = scope_sql(scope)
    selects = " UNION ALL ".join(
        f"(SELECT '{name}', id, key, rank, named, head, ord FROM {name}_hits)" for name, _ in phases
    )
    sql = "WITH " + ",".join(_text_ctes(phases)) + f" SELECT * FROM ({selects}) AS t ORDER BY 1, ord"
    with connection.cursor() as cursor:
        cursor.execute(sql, params | _text_params(scope, query, limit))
        rows = cursor.fetchall()
    return _text_hits([row[:6] for row in _phase_ordered(rows, phases)])


def _phase_ordered(rows: list[tuple[Any, ...]], phases: Sequence[tuple[str, str]]) -> list[tuple[Any, ...]]:
    order = {name: index for index, (name, _) in enumerate(phases)}
    return sorted(rows, key=lambda row: (order[row[0]], row[-1]))


def key_candidates(*, scope: Scope, query: str, limit: int) -> list[KeyHit]:
    """Facts whose whole key the query names verbatim ('home city' names home_city), through the key index."""
    keys = list(query_terms(query).keys)
    if not keys:
        return []
    _, params = scope_sql(scope)
    params.update(keys=TextArrayParam(keys), n=limit)
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


# What scoring reads of a candidate (`ServableFact`, in its order), for both reads of it.
_SCORING_COLUMNS = scoring_columns_sql("f")
# The columns every channel's rows share: (channel, id, key, distance or rank, named, head,
# confidence, importance, last touched, order); the scoring columns on the rows that may be
# served: the vector channel's (which came with them) and the 's' rows of the other channels.
_NO_SCORING = "NULL::float8, NULL::float8, NULL::timestamptz"
# A vector channel's row resting on a retired fact comes without its confidence: it may not be served.
_VECTOR_SCORING = (
    "CASE WHEN {dead} THEN NULL ELSE v_near.confidence END, v_near.importance, v_near.last_touched"
)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _sql_shape(scope: Scope) -> Scope:
    """What of a scope shapes the text of its statements (its values travel as parameters)."""
    return Scope(
        namespace_id=0,
        subject="",
        at=_EPOCH,
        historical=scope.historical,
        categories=("",) * bool(scope.categories),
    )


@lru_cache(maxsize=256)
def _collect_sql(shape: Scope, phases: tuple[str, ...], *, keys: bool, small: bool, common: bool) -> str:
    """The statement of `candidates_collect`, written once per shape: its text depends on nothing else."""
    where, _ = scope_sql(shape)
    named = [(name, f"{name}_q") for name in phases]
    ctes = [
        nearest_cte(where, exact=small),
        *_text_ctes(named, any_among_nearest=not small, all_among_nearest=common, nearest_too=True),
    ]
    selects = [
        f"""(SELECT 'v', id, NULL, distance, 0, true, {_VECTOR_SCORING.format(dead=_resting_on_dead_sql(shape, "v_near"))},
            row_number() OVER (ORDER BY {NEAREST_ORDER}) FROM v_near)"""
    ]
    selects += [
        f"(SELECT '{name}', id, key, rank, named, head, {_NO_SCORING}, ord FROM {name}_hits)"
        for name in phases
    ]
    found_ids = [f"SELECT id FROM {name}_hits" for name in phases]
    if keys:
        ctes.append(
            f"""k_hits AS MATERIALIZED (SELECT f.id, f.key, row_number() OVER (ORDER BY f.importance DESC,
                f.id DESC) AS ord FROM ({_key_lookup_sql(shape)}) AS f
                ORDER BY f.importance DESC, f.id DESC LIMIT %(n)s)"""
        )
        selects.append(f"(SELECT 'k', id, key, NULL, 0, true, {_NO_SCORING}, ord FROM k_hits)")
        found_ids.append("SELECT id FROM k_hits")
    # The scoring columns of the other channels' rows, read here rather than in a statement of
    # their own (the vector channel's came with its rows).
    if found_ids:
        # The rows the vector channel found are left out of the ids before they are looked up
        # (as a condition on the row, each was read first: 50 lookups for nothing in a large subject).
        selects.append(
            f"""(SELECT 's', f.id, NULL, NULL, 0, true, {_SCORING_COLUMNS}, 0 FROM {TABLE} f
                WHERE f.id IN (SELECT found.id FROM ({" UNION ".join(found_ids)}) AS found (id)
                               WHERE found.id NOT IN (SELECT id FROM v_near))
                  AND NOT {_resting_on_dead_sql(shape, "f")})"""
        )
    return "WITH " + ",\n".join(ctes) + "\nSELECT * FROM (" + " UNION ALL ".join(selects) + ") AS c"


def candidates_collect(
    *, scope: Scope, query: str, embedding: list[float], limit: int, exact: bool | None = None
) -> Candidates:
    """The three channels in one statement (one round trip, one plan): vector, full text, exact,
    and what `candidates_servable` reads of the rows they found.

    `exact` forces the exact scan (True) or the HNSW walk (False); by default the subject's
    size decides (`subject_is_small`), and a walk that fell short is done again exactly.
    The same rows, in the same order, as `vector_candidates`, `full_text_candidates` and
    `key_candidates` one after another, except that in a large subject the any-word phase ranks
    only the vector channel's rows, and so does the all-words phase when every word of the query is
    common there, and a phase that stopped at its cap ranks the nearest rows that match too
    (`_text_ctes`); `servable` holds at least every candidate that
    `candidates_servable` would return for `ids()`, with the same columns.
    """
    _, params = scope_sql(scope)
    phases = _text_phases(query)
    keys = list(query_terms(query).keys)
    params |= _text_params(scope, query, limit) | {
        "q": VectorParam(embedding),
        "keys": TextArrayParam(keys),
    }
    small = subject_is_small(scope) if exact is None else exact
    common = not small and bool(phases) and _words_all_common(scope, query)
    sql = _collect_sql(
        _sql_shape(scope), tuple(name for name, _ in phases), keys=bool(keys), small=small, common=common
    )
    rows = nearest_fetchall(sql, params, limit=limit, exact=small)
    by_channel: dict[str, list[tuple[Any, ...]]] = {}
    for row in sorted(rows, key=itemgetter(-1)):
        by_channel.setdefault(row[0], []).append(row)
    if not small and walk_fell_short(scope, found=len(by_channel.get("v", [])), limit=limit):
        return candidates_collect(scope=scope, query=query, embedding=embedding, limit=limit, exact=True)
    found = Candidates(
        servable={
            int(row[1]): ServableFact(float(row[6]), float(row[7]), row[8])
            for channel in ("v", "s")
            for row in by_channel.get(channel, [])
            if row[6] is not None
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


class ServableFact(NamedTuple):
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
