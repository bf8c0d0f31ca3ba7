"""Celery beat entries of the fact store. Imported by settings: imports nothing from Django."""

from __future__ import annotations

from typing import Any

FACTS_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    # Merges are idempotent, so a KPR approved but never merged is simply handed over again.
    "merge-sweep-approved": {"task": "facts.merge_sweep_approved", "schedule": 60.0},
}
