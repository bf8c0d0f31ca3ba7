"""Tunable numbers of retrieval and verification."""

from __future__ import annotations

from memorypr.common.conf import AppSettings

conf = AppSettings(
    {
        # candidates taken from each channel before fusion
        "MEMORYPR_RETRIEVAL_CANDIDATES": 50,
        # facts at or below this confidence are not served
        "MEMORYPR_RETRIEVAL_MIN_CONFIDENCE": 0.5,
        # full-text rows ranked per phase (entity hits come from them). Ranking reads each
        # matching row, so a common word in a subject of 100k facts costs milliseconds per
        # hundred rows; beyond a few hundred matches the words are too common to tell facts
        # apart, and the vector channel carries the query's meaning.
        "MEMORYPR_FTS_MAX_MATCHES": 200,
        # optional cross-encoder: a local model folder, and how many fused candidates it rereads
        "MEMORYPR_RERANK_MODEL": "",
        "MEMORYPR_RERANK_CANDIDATES": 30,
        # verify: a draft sentence this similar to a retired value (and closer than to any active
        # one by the margin) is flagged
        "MEMORYPR_VERIFY_MIN_SIMILARITY": 0.6,
        "MEMORYPR_VERIFY_MARGIN": 0.05,
    }
)
