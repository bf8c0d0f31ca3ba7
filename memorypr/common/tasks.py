from __future__ import annotations

from celery import shared_task

WORKER_HEARTBEAT = "worker"


@shared_task(name="common.heartbeat", ignore_result=True)
def heartbeat() -> None:
    """Record that a worker took a message off the broker and reached the database."""
    from memorypr.common.services import heartbeat_record

    heartbeat_record(name=WORKER_HEARTBEAT)
