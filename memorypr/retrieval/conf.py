"""Tunable numbers of retrieval and verification."""

from __future__ import annotations

from memorypr.common.conf import AppSettings

conf = AppSettings(
    {
        # candidates taken from each channel before fusion
        "MEMORYPR_RETRIEVAL_CANDIDATES": 50,
        # facts at or below this confidence are not served
        "MEMORYPR_RETRIEVAL_MIN_CONFIDENCE": 0.5,
        # an exact scan below this many rows in a subject; HNSW above
        "MEMORYPR_EXACT_SEARCH_MAX_ROWS": 20000,
        # full-text rows considered per phase (entity hits come from them)
        "MEMORYPR_FTS_MAX_MATCHES": 2000,
        # optional cross-encoder: a local model folder, and how many fused candidates it rereads
        "MEMORYPR_RERANK_MODEL": "",
        "MEMORYPR_RERANK_CANDIDATES": 30,
        # verify: a draft sentence this similar to a retired value (and closer than to any active
        # one by the margin) is flagged
        "MEMORYPR_VERIFY_MIN_SIMILARITY": 0.6,
        "MEMORYPR_VERIFY_MARGIN": 0.05,
    }
)
