"""Tunable numbers of the vector store (pgvector HNSW)."""

from __future__ import annotations

from memorypr.common.conf import AppSettings

conf = AppSettings(
    {
        # HNSW build parameters (applied by migration and `reembed --reindex`)
        "MEMORYPR_HNSW_M": 16,
        "MEMORYPR_HNSW_EF_CONSTRUCTION": 64,
        # per-query candidate list; raised to the number of candidates asked for when smaller
        "MEMORYPR_HNSW_EF_SEARCH": 100,
        # pgvector 0.8 iterative index scans, so a filtered search still finds enough rows
        "MEMORYPR_HNSW_ITERATIVE_SCAN": "relaxed_order",
        "MEMORYPR_HNSW_MAX_SCAN_TUPLES": 20000,
        # an exact scan below this many rows in a subject; HNSW above (and an exact scan when
        # a walk of the index falls short: nearest.walk_fell_short)
        "MEMORYPR_EXACT_SEARCH_MAX_ROWS": 20000,
        # below that, HNSW too when the subject's rows times its share of its graph (its group of
        # subjects' active versions) reach this (0: never). A walk costs about its limit over that
        # share; an exact scan, every row of the subject. Measured (candidates, p50): 8,000 rows
        # at 3,675 walked 3.9 ms against 10.3 scanned; 800 rows at 339, 2.4 against 2.3; 800 at
        # 106, 5.0 against 2.3: a walk pays from a few hundred, so from 1,000 it surely does.
        "MEMORYPR_WALK_MIN_WEIGHTED_ROWS": 1000,
    }
)
