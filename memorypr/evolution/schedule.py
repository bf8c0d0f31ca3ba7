"""Celery beat entries of the evolution jobs (and the transcript retention purge).

Imported by settings (CELERY_BEAT_SCHEDULE), so it imports nothing from Django.
Nightly jobs run in the small hours, UTC; expiry runs often because an expired fact
should leave the store soon after it leaves retrieval.
"""

from __future__ import annotations

from typing import Any

from celery.schedules import crontab

EVOLUTION_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "evolution-expiry": {"task": "evolution.expiry", "schedule": crontab(minute="*/10")},
    "evolution-consolidation": {"task": "evolution.consolidation", "schedule": crontab(minute=15)},
    "evolution-forgetting": {"task": "evolution.forgetting", "schedule": crontab(hour=3, minute=0)},
    "evolution-capacity": {"task": "evolution.capacity", "schedule": crontab(hour=3, minute=20)},
    "evolution-purge": {"task": "evolution.purge", "schedule": crontab(hour=3, minute=40)},
    "working-memory-transcript-purge": {
        "task": "working_memory.transcript_purge",
        "schedule": crontab(hour=4, minute=0),
    },
}
