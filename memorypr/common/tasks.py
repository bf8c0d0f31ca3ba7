from __future__ import annotations

from typing import Any

from celery import shared_task
from django.db import InterfaceError, OperationalError

WORKER_HEARTBEAT = "worker"

# Options for a task that must survive the database going away for a while (a restart, a
# failover): it is sent again with growing delays (1, 2, 4 … 30 s, jittered) instead of failing.
# The sweeps remain the last resort for a task that is lost with its worker.
RETRY_WHILE_DATABASE_RESTARTS: dict[str, Any] = {
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": 1,
    "retry_backoff_max": 30,
    "retry_jitter": True,
    "max_retries": 10,
}


@shared_task(name="common.heartbeat", ignore_result=True)
def heartbeat() -> None:
    """Record that a worker took a message off the broker and reached the database."""
    from memorypr.common.services import heartbeat_record

    heartbeat_record(name=WORKER_HEARTBEAT)
