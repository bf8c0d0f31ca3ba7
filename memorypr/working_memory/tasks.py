from __future__ import annotations

from celery import shared_task


@shared_task(name="working_memory.transcript_purge", acks_late=True, ignore_result=True)
def transcript_purge_task() -> int:
    from memorypr.working_memory.services import transcript_purge

    return transcript_purge()
