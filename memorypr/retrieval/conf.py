"""Tunable numbers of retrieval and verification."""

from __future__ import annotations

from memorypr.common.conf import AppSettings

conf = AppSettings(
    {
        # candidates taken from each channel before fusion
        "MEMORYPR_RETRIEVAL_CANDIDATES": 50,
        # facts at or below this confidence are not served
        "MEMORYPR_RETRIEVAL_MIN_CONFIDENCE": 0.5,
        # an exact scan below this many rows in a subject; HNSW above (and an exact scan when
        # a walk of the index falls short: candidates.walk_fell_short)
        "MEMORYPR_EXACT_SEARCH_MAX_ROWS": 20000,
        # below that, HNSW too when the subject's rows times its share of its graph (its group of
        # subjects' active versions) reach this (0: never). A walk costs about its limit over that
        # share; an exact scan, every row of the subject. Measured (candidates, p50): 8,000 rows
        # at 3,675 walked 3.9 ms against 10.3 scanned; 800 rows at 339, 2.4 against 2.3; 800 at
        # 106, 5.0 against 2.3: a walk pays from a few hundred, so from 1,000 it surely does.
        "MEMORYPR_WALK_MIN_WEIGHTED_ROWS": 1000,
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
