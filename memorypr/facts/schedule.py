"""Celery beat entries of the fact store. Imported by settings: imports nothing from Django."""

from __future__ import annotations

from typing import Any

FACTS_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    # Merges are idempotent, so a KPR approved but never merged is simply handed over again.
    # Often: a lost hand-off is the last KPR of a burst (an earlier one would be merged by the
    # next approval's drain), and its agent waits for it; a sweep sends at most a task per lane.
    "merge-sweep-approved": {"task": "facts.merge_sweep_approved", "schedule": 15.0},
}
