from __future__ import annotations

import logging

from celery import shared_task

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, ignore_result=True)
def review_pull(pull_id: str) -> None:
    """Review one KPR. Idempotent: a KPR that is no longer PENDING is left alone."""
    from reviewer.pipeline import pull_review

    pull_review(pull_id=pull_id)
