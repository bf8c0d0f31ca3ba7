"""Retrieval latency and HNSW recall at 10k and 100k facts, against a plain vector store.

Layouts: all facts in one subject, and spread over 100 subjects. 20% of the rows are
superseded versions (what a store with history holds), so status filtering does real work.
Facts are bulk-loaded with COPY (real all-MiniLM-L6-v2 embeddings of generated, varied
texts); the HNSW index is then built once, as after a restore.

Measured per layout and size:
- hybrid retrieval (memorypr.retrieval.selectors.retrieve: HNSW + full text + exact,
  RRF, scoring, confidence bar) p50/p95, database side (query embedding given; the query's
  first run, as for the plain store) and with the query embedding (its second run: the
  embedding computed, the database's side warm);
- recall@10 of the vector stage as retrieval runs it (exact scan for subjects up to
  MEMORYPR_EXACT_SEARCH_MAX_ROWS active facts, HNSW above), and of the HNSW query itself
  (per-query ef_search, iterative scan, filters; forced), against exact search. In the
  100-subject layouts retrieval never walks the index (a subject of 100 or 1,000 facts is
  searched exactly); there the forced walk (`fact_nearest()`) shows why: it passes over the
  other subjects' rows of its graph (its group of subjects'), up to hnsw.max_scan_tuples,
  before it has enough of its own;
- a plain vector store (a pgvector table: id, subject, embedding, HNSW; no status, no
  fusion): p50/p95 and recall@10 of `ORDER BY embedding <=> q LIMIT 10`;
- consolidation's search for a fact's near duplicates in its subject and category
  (`fact_neighbours`, the same walk or scan as retrieval's vector channel): p50/p95.
"""

from __future__ import annotations

import hashlib
import os
import random
import tempfile
import time
import weakref
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
from django.db import connection, transaction
from django.test import override_settings
from django.utils import timezone

from bench._http import percentile
from memorypr.agents.models import Namespace
from memorypr.agents.services import namespace_get_or_create
from memorypr.common.db.vectors import VectorParam
from memorypr.evolution.conf import conf as evolution_conf
from memorypr.evolution.services.consolidation import fact_neighbours
from memorypr.facts.models import FactStatus, FactVersion
from memorypr.retrieval.selectors import retrieve
from memorypr.vectors.embedding import embed_texts, embedding_cache, fact_text
from memorypr.vectors.nearest import Scope, vector_candidates
from memorypr.vectors.store import (
    SEARCH_INDEX_NAME,
    search_index_rebuild,
    vector_index_drop,
    vector_index_rebuild,
    vector_literal,
)
from memorypr.vectors.text import search_text

PREFIX = "bench-retrieval-"
PLAIN = "bench_plain_vectors"
HNSW_DDL = "CREATE INDEX {name} ON {table} USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"

ATTRIBUTES = [
    "favorite_food", "home_city", "pet", "hobby", "employer", "favorite_book", "allergy", "sport",
    "music_taste", "travel_plan", "car", "diet", "coffee_order", "language", "birthday_plan",
    "work_schedule", "favorite_movie", "child_school", "gym", "weekend_routine", "phone_model",
    "favorite_color", "commute", "hometown", "favorite_drink", "project", "manager", "team",
    "tea_preference", "reading_habit", "sleep_schedule", "favorite_restaurant", "holiday_destination",
    "garden", "instrument", "podcast", "favorite_game", "medication", "doctor", "bank",
]  # fmt: skip
ADJECTIVES = [
    "spicy", "quiet", "early", "blue", "vintage", "organic", "late", "cheap", "formal", "noisy",
    "weekly", "small", "electric", "ancient", "fresh", "green", "remote", "daily", "red", "slow",
    "crowded", "famous", "local", "japanese", "italian", "cold", "sunny", "long", "short", "dark",
]  # fmt: skip
NOUNS = [
    "noodles", "apartment", "cat", "guitar", "bank", "novel", "peanuts", "tennis", "jazz", "train",
    "bicycle", "salad", "latte", "spanish", "party", "shift", "thriller", "school", "pool", "hike",
    "phone", "garden", "bus", "tea", "startup", "boss", "dumplings", "piano", "podcast", "doctor",
]  # fmt: skip
PLACES = [
    "Shenzhen", "Beijing", "Shanghai", "Hangzhou", "Chengdu", "Tokyo", "Berlin", "Lisbon", "Paris",
    "Osaka", "Seoul", "Toronto", "Madrid", "Nairobi", "Lima", "Oslo", "Cairo", "Hanoi", "Dublin",
    "Austin", "Sydney", "Prague", "Vienna", "Milan", "Bangkok", "Denver", "Taipei", "Kyoto", "Porto",
    "Zurich",
]  # fmt: skip


def _facts(n: int, seed: int = 7) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        attribute = ATTRIBUTES[i % len(ATTRIBUTES)]
        value = f"{rng.choice(ADJECTIVES)} {rng.choice(NOUNS)} in {rng.choice(PLACES)}, {rng.choice(ADJECTIVES)} {i % 997}"
        out.append((f"{attribute}_{i}", value))
    return out


def _queries(n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    forms = [
        "what is the user's {a}?",
        "{adj} {noun} in {place}",
        "does the user like {noun}",
        "tell me about their {a} in {place}",
    ]
    return [
        rng.choice(forms).format(
            a=rng.choice(ATTRIBUTES).replace("_", " "),
            adj=rng.choice(ADJECTIVES),
            noun=rng.choice(NOUNS),
            place=rng.choice(PLACES),
        )
        for _ in range(n)
    ]


def _embeddings_cache(texts: list[str]) -> Path:
    digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    return (
        Path(os.environ.get("MEMORYPR_BENCH_CACHE", tempfile.gettempdir())) / f"bench-embeddings-{digest}.npy"
    )


def _embeddings(texts: list[str]) -> tuple[np.ndarray, float, bool]:
    """Embeddings of the texts, cached on disk so a re-run does not pay for them again."""
    cache = _embeddings_cache(texts)
    if cache.exists():
        return np.load(cache), 0.0, True
    start = time.perf_counter()
    vectors = np.asarray(embed_texts(texts, batch_size=256), dtype=np.float32)
    seconds = time.perf_counter() - start
    np.save(cache, vectors)
    return vectors, seconds, False


def _reset() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM facts_factversion WHERE namespace_id IN (SELECT id FROM agents_namespace WHERE name LIKE %s)",
            [PREFIX + "%"],
        )
        # Bulk load first, index after: inserting row by row into HNSW is many times slower.
        vector_index_drop()
        cursor.execute(f"DROP TABLE IF EXISTS {PLAIN}")
        cursor.execute(
            f"CREATE TABLE {PLAIN} (id bigserial PRIMARY KEY, subject text NOT NULL, embedding vector(384))"
        )
        cursor.execute(f"CREATE INDEX {PLAIN}_subject ON {PLAIN} (subject)")


def _load(*, namespace: Namespace, facts: list[tuple[str, str]], vectors: np.ndarray, subjects: int) -> None:
    now = timezone.now()
    retired = now - timedelta(days=1)
    raw = connection.cursor().cursor
    columns = (
        "namespace_id, subject, category, key, value, version, status, confidence, importance, created_at,"
        " updated_at, retired_at, access_count, embedding, search_text"
    )
    with raw.copy(f"COPY facts_factversion ({columns}) FROM STDIN") as copy:
        for i, ((key, value), vector) in enumerate(zip(facts, vectors, strict=True)):
            superseded = (i // subjects) % 5 == 4  # 20% of every subject's rows
            text = fact_text(key=key, value=value)
            copy.write_row(
                (
                    namespace.pk, f"s{i % subjects}", "user_profile", key, f'"{value}"', 1,
                    FactStatus.SUPERSEDED if superseded else FactStatus.ACTIVE, 0.9, 0.5,
                    now - timedelta(days=i % 60), now, retired if superseded else None, 0,
                    vector_literal(vector.tolist()), search_text(text),
                )
            )  # fmt: skip
    with raw.copy(f"COPY {PLAIN} (subject, embedding) FROM STDIN") as copy:
        for i, vector in enumerate(vectors):
            copy.write_row((f"{namespace.name}/s{i % subjects}", vector_literal(vector.tolist())))


def _build_indexes() -> dict[str, float]:
    """The fact store's graphs (one per group of subjects, as migrated), the plain store's one."""
    timings = {}
    with connection.cursor() as cursor:
        start = time.perf_counter()
        with transaction.atomic():
            cursor.execute("SET LOCAL maintenance_work_mem = '1GB'")
            vector_index_rebuild()
        timings["facts_factversion"] = round(time.perf_counter() - start, 1)
        start = time.perf_counter()
        with transaction.atomic():
            cursor.execute("SET LOCAL maintenance_work_mem = '1GB'")
            cursor.execute(f"DROP INDEX IF EXISTS {PLAIN}_hnsw")
            cursor.execute(HNSW_DDL.format(name=f"{PLAIN}_hnsw", table=PLAIN))
        timings[PLAIN] = round(time.perf_counter() - start, 1)
        # The reload deleted the previous run's rows and inserted these one by one into the
        # full-text index: rebuilt, it reads as if the rows had been loaded once (a GIN index
        # left by a delete and reinsert of every row took 2.7 times as long per match here).
        start = time.perf_counter()
        search_index_rebuild()
        timings[SEARCH_INDEX_NAME] = round(time.perf_counter() - start, 1)
        for table in ("facts_factversion", PLAIN):
            cursor.execute(f"VACUUM ANALYZE {table}")
    return timings


def _exact_top(scope: Scope, vector: list[float], k: int) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT id FROM facts_factversion WHERE namespace_id = %s AND subject = %s AND status = 'active'
               AND embedding IS NOT NULL ORDER BY (embedding <=> %s::vector) + 0 LIMIT %s""",
            [scope.namespace_id, scope.subject, vector_literal(vector), k],
        )
        return [row[0] for row in cursor.fetchall()]


# The plain store's search as its users would run it: ef_search set once for the session, then
# one statement per query, the query vector bound in binary (as retrieval binds its own). A
# transaction per query around a local setting cost it 0.3-0.35 ms of 1.4-2 ms in round trips.
_PLAIN_EF_SEARCH = "SELECT set_config('hnsw.ef_search', '100', false)"
# The server connections whose session has the plain store's ef_search.
_PLAIN_SESSIONS: weakref.WeakSet[Any] = weakref.WeakSet()


def _plain_top(subject: str, vector: list[float], k: int, *, exact: bool = False) -> list[int]:
    order = "(embedding <=> %s) + 0" if exact else "embedding <=> %s"
    connection.ensure_connection()
    server = connection.connection
    with connection.cursor() as cursor:
        if server not in _PLAIN_SESSIONS:
            cursor.execute(_PLAIN_EF_SEARCH)
            _PLAIN_SESSIONS.add(server)
        cursor.execute(
            f"SELECT id FROM {PLAIN} WHERE subject = %s ORDER BY {order} LIMIT %s",
            [subject, VectorParam(vector), k],
        )
        return [row[0] for row in cursor.fetchall()]


def _ms(values: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(values, 50) * 1000, 2), "p95": round(percentile(values, 95) * 1000, 2)}


def _measure(
    *, namespace: Namespace, subjects: int, queries: list[str], qvectors: np.ndarray
) -> dict[str, Any]:
    rng = random.Random(3)
    db, full, plain, recall, plain_recall, plain_counts = [], [], [], [], [], []
    forced, forced_recall = [], []
    for index, (text, qv) in enumerate(zip(queries, qvectors, strict=True)):
        vector = qv.tolist()
        subject = f"s{rng.randrange(subjects)}"
        scope = Scope(namespace_id=namespace.pk, subject=subject, at=timezone.now())
        # Each query is new to both searches when they are timed, as an agent's next question is
        # (the same query run just before took 2.3 ms off the plain search's 5.5 here). They take
        # turns at going first: the one that follows the other finds the processor's caches warm
        # with the same rows and the same code paths in the server.
        plain_subject = f"{namespace.name}/{subject}"
        for search in ("hybrid", "plain") if index % 2 == 0 else ("plain", "hybrid"):
            start = time.perf_counter()
            if search == "hybrid":
                retrieve(namespace=namespace, subject=subject, query=text, top_k=10, embedding=vector)
                db.append(time.perf_counter() - start)
            else:
                got = _plain_top(plain_subject, vector, 10)
                plain.append(time.perf_counter() - start)
        # With the query embedded as a request embeds it: not from this process's cache of
        # embeddings, which holds every query since `run` embedded them all at once.
        embedding_cache().clear()
        start = time.perf_counter()
        retrieve(namespace=namespace, subject=subject, query=text, top_k=10)
        full.append(time.perf_counter() - start)
        approx = [i for i, _ in vector_candidates(scope=scope, embedding=vector, limit=10)]
        exact = _exact_top(scope, vector, 10)
        with override_settings(MEMORYPR_EXACT_SEARCH_MAX_ROWS=0):  # the HNSW index, whatever the size
            start = time.perf_counter()
            through_index = [i for i, _ in vector_candidates(scope=scope, embedding=vector, limit=50)][:10]
            forced.append(time.perf_counter() - start)
        if exact:
            recall.append(len(set(approx) & set(exact)) / len(exact))
            forced_recall.append(len(set(through_index) & set(exact)) / len(exact))
        truth = _plain_top(plain_subject, vector, 10, exact=True)
        plain_counts.append(len(got))
        if truth:
            plain_recall.append(len(set(got) & set(truth)) / len(truth))
    return {
        "hybrid_ms": _ms(db),
        "hybrid_with_query_embedding_ms": _ms(full),
        "vector_stage_recall_at_10": round(float(np.mean(recall)), 4),
        "hnsw_recall_at_10": round(float(np.mean(forced_recall)), 4),
        "hnsw_top50_ms": _ms(forced),
        "plain_vector_ms": _ms(plain),
        "plain_vector_recall_at_10": round(float(np.mean(plain_recall)), 4),
        "plain_vector_mean_results": round(float(np.mean(plain_counts)), 2),
        "consolidation_neighbours_ms": _consolidation_neighbours(namespace=namespace, subjects=subjects),
    }


def _consolidation_neighbours(*, namespace: Namespace, subjects: int, facts: int = 50) -> dict[str, float]:
    """Consolidation's search for a fact's near duplicates (`fact_neighbours`), for `facts` facts of
    the layout, each of a subject drawn at random: p50/p95."""
    rng = random.Random(5)
    threshold = float(evolution_conf("MEMORYPR_CONSOLIDATION_SIMILARITY"))
    timings = []
    for _ in range(facts):
        subject = f"s{rng.randrange(subjects)}"
        active = FactVersion.objects.filter(namespace=namespace, subject=subject, status=FactStatus.ACTIVE)
        fact = active.defer("search_text", "search_vector").order_by("pk")[rng.randrange(active.count())]
        start = time.perf_counter()
        fact_neighbours(fact, threshold=threshold, at=timezone.now())
        timings.append(time.perf_counter() - start)
    return _ms(timings)


FULL_SIZE = 100_000


def sizes_of(*, quick: bool) -> list[int]:
    return [1_000, 5_000] if quick else [10_000, FULL_SIZE]


def load(*, sizes: list[int]) -> tuple[dict[tuple[int, int], Namespace], dict[str, Any]]:
    """Every layout of every size, COPY-loaded, and the HNSW indexes built once after."""
    facts = _facts(max(sizes))
    # The facts of a smaller run are the first ones of the full run: reuse its cached vectors.
    full = [fact_text(key=k, value=v) for k, v in _facts(FULL_SIZE)]
    if _embeddings_cache(full).exists():
        vectors, embed_seconds, cached = _embeddings(full)
        vectors = vectors[: len(facts)]
    else:
        vectors, embed_seconds, cached = _embeddings([fact_text(key=k, value=v) for k, v in facts])
    _reset()
    layouts = {}
    start = time.perf_counter()
    for size in sizes:
        for subjects in (1, 100):
            name = f"{PREFIX}{size}-{subjects}"
            layouts[(size, subjects)] = namespace_get_or_create(name=name)
            _load(
                namespace=layouts[(size, subjects)],
                facts=facts[:size],
                vectors=vectors[:size],
                subjects=subjects,
            )
    load_seconds = time.perf_counter() - start
    index_seconds = _build_indexes()
    return layouts, {
        "facts_embedded": len(facts),
        "embedding_seconds": round(embed_seconds, 1) if not cached else "cached",
        "embedding_rate_per_second": round(len(facts) / embed_seconds) if embed_seconds else None,
        "copy_load_seconds": round(load_seconds, 1),
        "rows_loaded": 2 * sum(sizes),
        "hnsw_build_seconds": index_seconds,
    }


def run(options: dict[str, Any]) -> dict[str, Any]:
    sizes = sizes_of(quick=bool(options.get("quick")))
    n_queries = 30 if options.get("quick") else 100
    queries = _queries(n_queries)
    qvectors = np.asarray(embed_texts(queries), dtype=np.float32)
    layouts, loaded = load(sizes=sizes)
    # warm the caches and the model once before timing
    retrieve(namespace=layouts[(sizes[0], 1)], subject="s0", query=queries[0])
    results: dict[str, Any] = {**loaded, "queries": n_queries, "superseded_share": 0.2}
    for (size, subjects), namespace in layouts.items():
        label = f"{size // 1000}k_{'one_subject' if subjects == 1 else '100_subjects'}"
        results[label] = _measure(namespace=namespace, subjects=subjects, queries=queries, qvectors=qvectors)
    return results
