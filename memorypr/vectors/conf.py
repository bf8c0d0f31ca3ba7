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
    }
)
