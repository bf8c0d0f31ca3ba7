"""The vector store behind one small interface.

Today the vectors live beside the facts: `FactVersion.embedding` (pgvector, HNSW cosine)
and `FactVersion.search_text` (its generated `tsvector` uses the `simple` configuration).
The merge and `reembed` write through `vector_documents` + `vector_upsert`; retrieval reads
through `vector_search` and `text_search`. Moving the vectors elsewhere means
reimplementing these functions, nothing else.

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
from memorypr.vectors.text import search_text, search_tokens

INDEX_NAME = "fact_embedding_hnsw"
TABLE = "facts_factversion"


@dataclass(frozen=True)
class VectorDocument:
    """What the vector store holds for one fact version."""

    text: str
    search_text: str
    embedding: list[float]


@dataclass(frozen=True)
class VectorHit:
    fact_id: int
    # cosine distance for vector_search (smaller is closer); ts_rank_cd for text_search.
    score: float


def hnsw_parameters() -> dict[str, int]:
    return {
        "m": int(conf("MEMORYPR_HNSW_M")),
        "ef_construction": int(conf("MEMORYPR_HNSW_EF_CONSTRUCTION")),
        "ef_search": int(conf("MEMORYPR_HNSW_EF_SEARCH")),
    }


def document_texts(*, key: str, value: Any) -> tuple[str, str]:
    """(text to embed, search text) of a fact; the key's words are searchable too."""
    return fact_text(key=key, value=value), search_text(f"{key} {value_text(value)}")


def vector_documents(*, items: Sequence[tuple[str, Any]]) -> list[VectorDocument]:
    """Documents for (key, value) pairs, embedded in one batch. Call it outside transactions."""
    texts = [document_texts(key=key, value=value) for key, value in items]
    embeddings = embed_texts([text for text, _ in texts])
    return [
        VectorDocument(text=text, search_text=tokens, embedding=embedding)
        for (text, tokens), embedding in zip(texts, embeddings, strict=True)
    ]


def _vector_literal(embedding: Sequence[float]) -> str:
    return "[" + ",".join(repr(float(x)) for x in embedding) + "]"


def vector_upsert(*, documents: Mapping[int, VectorDocument]) -> int:
    """Store the documents of fact versions (by id) in one statement; returns rows written."""
    if not documents:
        return 0
    ids = list(documents)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            UPDATE {TABLE} AS f
               SET embedding = v.embedding::vector, search_text = v.search_text
              FROM unnest(%s::bigint[], %s::text[], %s::text[]) AS v(id, embedding, search_text)
             WHERE f.id = v.id
            """,
            [
                ids,
                [_vector_literal(documents[i].embedding) for i in ids],
                [documents[i].search_text for i in ids],
            ],
        )
        return cursor.rowcount


def vector_search_sql(
    *, namespace_id: int, subject: str | None, embedding: Sequence[float], top_k: int, statuses: Sequence[str]
) -> tuple[str, list[Any]]:
    """The nearest-neighbour query: ORDER BY embedding <=> query LIMIT k, served by the HNSW index."""
    literal = _vector_literal(embedding)
    where = ["namespace_id = %s", "status = ANY(%s)", "embedding IS NOT NULL"]
    params: list[Any] = [literal, namespace_id, list(statuses)]
    if subject is not None:
        where.append("subject = %s")
        params.append(subject)
    sql = (
        f"SELECT id, embedding <=> %s::vector AS distance FROM {TABLE} "
        f"WHERE {' AND '.join(where)} ORDER BY embedding <=> %s::vector LIMIT %s"
    )
    return sql, [*params, literal, top_k]


def vector_search(
    *,
    namespace_id: int,
    subject: str | None,
    embedding: Sequence[float],
    top_k: int = 50,
    statuses: Sequence[str] = ("active",),
) -> list[VectorHit]:
    """The top_k closest fact versions by cosine distance, closest first."""
    sql, params = vector_search_sql(
        namespace_id=namespace_id, subject=subject, embedding=embedding, top_k=top_k, statuses=statuses
    )
    ef_search = max(hnsw_parameters()["ef_search"], top_k)
    # SET LOCAL needs a transaction; strict iterative scans keep filtered searches exact
    # in order and complete when the filters drop most of the first candidates.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(ef_search)])
        cursor.execute("SELECT set_config('hnsw.iterative_scan', 'strict_order', true)")
        cursor.execute(sql, params)
        return [VectorHit(fact_id=row[0], score=float(row[1])) for row in cursor.fetchall()]


def text_query(text: str) -> str:
    """A `simple` tsquery matching any token of the text (ranked by how many match)."""
    tokens = dict.fromkeys(search_tokens(text))
    return " | ".join("'" + token.replace("\\", "\\\\").replace("'", "''") + "'" for token in tokens)


def text_search(
    *,
    namespace_id: int,
    subject: str | None,
    query: str,
    top_k: int = 50,
    statuses: Sequence[str] = ("active",),
) -> list[VectorHit]:
    """Full-text matches (application-made tokens, so Chinese is found), best first."""
    tsquery = text_query(query)
    if not tsquery:
        return []
    where = ["f.namespace_id = %s", "f.status = ANY(%s)", "f.search_vector @@ q"]
    params: list[Any] = [tsquery, namespace_id, list(statuses)]
    if subject is not None:
        where.append("f.subject = %s")
        params.append(subject)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT f.id, ts_rank_cd(f.search_vector, q) AS rank "
            f"FROM {TABLE} AS f, to_tsquery('simple', %s) AS q "
            f"WHERE {' AND '.join(where)} ORDER BY rank DESC, f.id DESC LIMIT %s",
            [*params, top_k],
        )
        return [VectorHit(fact_id=row[0], score=float(row[1])) for row in cursor.fetchall()]


def vector_index_options() -> dict[str, str]:
    """The HNSW index's storage parameters as PostgreSQL has them (empty: the defaults)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = %s", [INDEX_NAME])
        row = cursor.fetchone()
    options = (row[0] if row else None) or []
    return dict(option.split("=", 1) for option in options)


def vector_index_rebuild() -> dict[str, int]:
    """Rebuild the HNSW index with the configured m and ef_construction (one transaction)."""
    params = hnsw_parameters()
    m, ef_construction = params["m"], params["ef_construction"]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {INDEX_NAME}")
        cursor.execute(
            f"CREATE INDEX {INDEX_NAME} ON {TABLE} USING hnsw (embedding vector_cosine_ops) "
            f"WITH (m = {int(m)}, ef_construction = {int(ef_construction)})"
        )
    return {"m": m, "ef_construction": ef_construction}
