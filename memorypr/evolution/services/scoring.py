"""The forgetting score, computed in SQL over active facts (docs/architecture.md §7).

score = w_r·exp(−λ·days since last access, or since creation) + w_f·ln(1 + accesses)
        + w_i·importance
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memorypr.evolution.conf import conf

SCORE_SQL = """
    (%(w_r)s * exp(-%(lam)s * GREATEST(0, EXTRACT(EPOCH FROM (%(now)s - COALESCE(f.last_accessed_at, f.created_at)))
                                        / 86400.0))
     + %(w_f)s * ln(1 + f.access_count)
     + %(w_i)s * f.importance)
"""


def score_params(*, now: datetime) -> dict[str, Any]:
    return {
        "w_r": conf("MEMORYPR_FORGET_W_RECENCY"),
        "w_f": conf("MEMORYPR_FORGET_W_FREQUENCY"),
        "w_i": conf("MEMORYPR_FORGET_W_IMPORTANCE"),
        "lam": conf("MEMORYPR_FORGET_LAMBDA"),
        "now": now,
    }


def forgetting_score(*, days: float, accesses: int, importance: float) -> float:
    """The same formula in Python, for explanations in evidence and for tests."""
    import math

    return (
        conf("MEMORYPR_FORGET_W_RECENCY") * math.exp(-conf("MEMORYPR_FORGET_LAMBDA") * max(0.0, days))
        + conf("MEMORYPR_FORGET_W_FREQUENCY") * math.log(1 + accesses)
        + conf("MEMORYPR_FORGET_W_IMPORTANCE") * importance
    )
