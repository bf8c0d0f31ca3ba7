"""Tunable numbers of evolution, read from settings at call time with the design's defaults."""

from __future__ import annotations

from django.conf import settings

DEFAULTS: dict[str, float] = {
    # feedback (seed: success +0.1, failure -0.2, below 0.3 marked for forgetting)
    "MEMORYPR_FEEDBACK_SUCCESS_DELTA": 0.1,
    "MEMORYPR_FEEDBACK_FAILURE_DELTA": -0.2,
    "MEMORYPR_FORGET_CONFIDENCE": 0.3,
    # forgetting score = w_r·exp(−λ·days) + w_f·ln(1 + accesses) + w_i·importance
    "MEMORYPR_FORGET_W_RECENCY": 0.6,
    "MEMORYPR_FORGET_W_FREQUENCY": 0.15,
    "MEMORYPR_FORGET_W_IMPORTANCE": 0.25,
    "MEMORYPR_FORGET_LAMBDA": 0.05,
    "MEMORYPR_FORGET_THRESHOLD": 0.15,
    # importance at or above this never decays and is never forgotten automatically
    "MEMORYPR_DECAY_EXEMPT_IMPORTANCE": 0.9,
    # capacity (seed: 5000 per user, drop the lowest 10%)
    "MEMORYPR_CAPACITY_PER_SUBJECT": 5000,
    "MEMORYPR_CAPACITY_DROP_FRACTION": 0.10,
    # consolidation (seed: cosine > 0.85; a conflict lowers confidence instead)
    "MEMORYPR_CONSOLIDATION_SIMILARITY": 0.85,
    # values this close mean the same ("Beijing" and "Shanghai" are 0.85 apart in MiniLM)
    "MEMORYPR_CONSOLIDATION_VALUE_AGREEMENT": 0.92,
    "MEMORYPR_CONSOLIDATION_CONFLICT_PENALTY": 0.2,
    "MEMORYPR_CONSOLIDATION_SCAN": 500,
    # retired versions kept for rollback and audit before the purge
    "MEMORYPR_PURGE_AFTER_DAYS": 30,
    # every job proposes at most this many KPRs (or purges this many rows) per run
    "MEMORYPR_EVOLUTION_BATCH": 200,
    # the confidence the system proposer puts on its own operations
    "MEMORYPR_EVOLUTION_PROPOSAL_CONFIDENCE": 0.9,
}


def conf(name: str) -> float:
    return float(getattr(settings, name, DEFAULTS[name]))


def conf_int(name: str) -> int:
    return int(conf(name))
