"""Celery beat entries of the review pipeline. Imported by settings: imports nothing from Django."""

from __future__ import annotations

from typing import Any

REVIEW_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    # A lost hand-off (broker down at submit time, a worker killed mid-review) leaves a KPR
    # PENDING; the sweep hands it to review again. Reviews are idempotent.
    "review-sweep-pending": {"task": "reviewer.review_sweep_pending", "schedule": 60.0},
}
