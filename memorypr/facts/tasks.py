from __future__ import annotations

from celery import shared_task


@shared_task(acks_late=True, ignore_result=True)
def merge_pull(pull_id: str) -> None:
    """Merge one APPROVED KPR. Idempotent: merging a merged KPR is a no-op."""
    from memorypr.facts.services import pull_merge

    pull_merge(pull_id=pull_id)
