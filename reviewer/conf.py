"""Tunable numbers of the review and the dashboard."""

from __future__ import annotations

from memorypr.common.conf import AppSettings

conf = AppSettings(
    {
        # a KPR still PENDING this long is handed to review again by the beat sweep
        "MEMORYPR_REVIEW_SWEEP_AFTER_SECONDS": 60,
        # how long a reviewer's claim on a KPR holds without a heartbeat
        "MEMORYPR_CLAIM_MINUTES": 15,
    }
)
