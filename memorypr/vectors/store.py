"""The vector store behind one small interface.

Today the vectors live beside the facts: `FactVersion.embedding` (pgvector, HNSW cosine)
and `FactVersion.search_text` (its generated `tsvector` uses the `simple` configuration).
The merge writes a version's `vector_documents` with its row, `reembed` through
`vector_upsert`; retrieval reads with its own queries (`memorypr.retrieval.candidates`),
which filter by what is true at a moment in the same statement as the nearest-neighbour search.

HNSW parameters come from settings, read when used: MEMORYPR_HNSW_M (default 16),
MEMORYPR_HNSW_EF_CONSTRUCTION (default 64) and MEMORYPR_HNSW_EF_SEARCH (default 100, as retrieval;
raised to top_k when smaller).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

from memorypr.vectors.conf import conf
from memorypr.vectors.embedding import embed_texts, fact_text, value_text
from memorypr.vectors.fields import vector_literal
from memorypr.vectors.text import search_text

FACT_TABLE = "facts_factversion"  # the vectors live in the fact versions' own rows

# The active versions' vectors are in GRAPH_GROUPS HNSW graphs, one per group of subjects
# (facts migration 0014): a partial index each, the group a hash of (namespace, subject). A walk
# for one subject then passes over the rows of its group only, not over every tenant's: with
# one graph for the whole store, a subject of 8,000 facts among 220k walked 8-12 ms for its
# nearest 50, and a subject with no fact near the query walked past thousands of other tenants'
# rows (26-35 ms). The expression is written the same way here, in the indexes and in
# `fact_nearest()`, so that the planner proves which index a walk may use.
GRAPH_GROUPS = 16
GRAPH_INDEX_PREFIX = "fact_embedding_hnsw_"


def graph_group_sql(*, namespace: str, subject: str) -> str:
    """The SQL expression of a subject's graph group (0 to GRAPH_GROUPS - 1)."""
    return f"(hashtextextended({subject}, {namespace}) & {GRAPH_GROUPS - 1})"


def graph_index_names() -> list[str]:
    return [f"{GRAPH_INDEX_PREFIX}{group}" for group in range(GRAPH_GROUPS)]


def graph_index_ddl(*, group: int, m: int, ef_construction: int) -> str:
    """The DDL of one group's graph: its active versions, with the given parameters."""
    return (
        f"CREATE INDEX {GRAPH_INDEX_PREFIX}{group} ON {FACT_TABLE} USING hnsw (embedding vector_cosine_ops)"
        f" WITH (m = {int(m)}, ef_construction = {int(ef_construction)}) WHERE status = 'active'"
        f" AND {graph_group_sql(namespace='namespace_id', subject='subject')} = {int(group)}"
    )


@dataclass(frozen=True)
class VectorDocument:
    """What the vector store holds for one fact version."""

    text: str
    search_text: str
    embedding: list[float]


def hnsw_parameters() -> dict[str, int]:
    return {
        "m": int(conf("MEMORYPR_HNSW_M")),
        "ef_construction": int(conf("MEMORYPR_HNSW_EF_CONSTRUCTION")),
        "ef_search": int(conf("MEMORYPR_HNSW_EF_SEARCH")),
    }


def document_texts(*, key: str, value: Any) -> tuple[str, str]:
    """(text to embed, search text) of a fact; the key's words are searchable too."""
    return fact_text(key=key, value=value), search_text(f"{key} {value_text(value)}")


def vector_documents(*, items: Sequence[tuple[str, Any]], shared: bool = False) -> list[VectorDocument]:
    """Documents for (key, value) pairs, embedded in one batch. Call it outside transactions.

    `shared`: vectors other processes computed ahead are used, and new ones are left for them
    (`memorypr.vectors.shared_cache`). Writes embed for throughput: a large batch goes to the
    bulk encoder where the machine has one (`memorypr.vectors.bulk`)."""
    texts = [document_texts(key=key, value=value) for key, value in items]
    embeddings = embed_texts([text for text, _ in texts], shared=shared, bulk=True)
    return [
        VectorDocument(text=text, search_text=tokens, embedding=embedding)
        for (text, tokens), embedding in zip(texts, embeddings, strict=True)
    ]


def embedding_texts(*, items: Sequence[tuple[str, Any]]) -> list[str]:
    """What `vector_documents` embeds for those (key, value) pairs, in order."""
    return [fact_text(key=key, value=value) for key, value in items]


def vector_upsert(*, documents: Mapping[int, VectorDocument]) -> int:
    """Store the documents of fact versions (by id) in one statement; returns rows written."""
    if not documents:
        return 0
    ids = list(documents)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            UPDATE {FACT_TABLE} AS f
               SET embedding = v.embedding::vector, search_text = v.search_text
              FROM unnest(%s::bigint[], %s::text[], %s::text[]) AS v(id, embedding, search_text)
             WHERE f.id = v.id
            """,
            [
                ids,
                [vector_literal(documents[i].embedding) for i in ids],
                [documents[i].search_text for i in ids],
            ],
        )
        return cursor.rowcount


def vector_index_options() -> dict[str, str]:
    """The HNSW graphs' storage parameters as PostgreSQL has them (empty: the defaults).

    Every group's graph is built with the same; if they differ (a rebuild interrupted by hand),
    the first group's are given.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = %s", [graph_index_names()[0]])
        row = cursor.fetchone()
    options = (row[0] if row else None) or []
    return dict(option.split("=", 1) for option in options)


# The full-text index of the fact versions (facts migration 0006, FactVersion.Meta.indexes).
SEARCH_INDEX_NAME = "fact_scoped_search_gin"


def search_index_rebuild() -> None:
    """Rebuild the full-text index, as one load of the rows would build it (one transaction).

    A rewrite of every row (a re-embed writes every version's search text) or a delete and
    reload leaves the GIN index fragmented: after a reload of 220k rows, a bitmap of the same
    8,910 matches took 15.9 ms, against 5.9 ms once rebuilt. Writes wait while it rebuilds.
    """
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"REINDEX INDEX {SEARCH_INDEX_NAME}")


def vector_index_drop() -> None:
    """Drop every group's HNSW graph (before a bulk load: building once is many times faster)."""
    with transaction.atomic(), connection.cursor() as cursor:
        for name in graph_index_names():
            cursor.execute(f"DROP INDEX IF EXISTS {name}")


def vector_index_rebuild() -> dict[str, int]:
    """Rebuild the HNSW graphs with the configured m and ef_construction (one transaction)."""
    params = hnsw_parameters()
    m, ef_construction = params["m"], params["ef_construction"]
    with transaction.atomic(), connection.cursor() as cursor:
        for group, name in enumerate(graph_index_names()):
            cursor.execute(f"DROP INDEX IF EXISTS {name}")
            cursor.execute(graph_index_ddl(group=group, m=m, ef_construction=ef_construction))
    return {"m": m, "ef_construction": ef_construction}
