"""Celery beat entries of the health checks. Imported by settings: imports nothing from Django."""

from __future__ import annotations

from typing import Any

COMMON_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    # /healthz reads the age of the row this task writes: a fresh row proves that beat,
    # the broker, a worker and the database all work. A heartbeat stuck in a backlog longer
    # than the health threshold says nothing fresh any more, so it expires instead of piling up.
    "common-heartbeat": {"task": "common.heartbeat", "schedule": 10.0, "options": {"expires": 60}},
}
