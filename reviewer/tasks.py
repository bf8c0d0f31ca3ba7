from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task

from memorypr.common.tasks import RETRY_WHILE_DATABASE_RESTARTS
from reviewer.conf import conf
from reviewer.pipeline import pull_review
from reviewer.selectors import pull_ids_pending

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, ignore_result=True, **RETRY_WHILE_DATABASE_RESTARTS)
def review_pull(pull_id: str) -> None:
    """Review one KPR. Idempotent: a KPR that is no longer PENDING is left alone."""
    pull_review(pull_id=pull_id)


@shared_task(name="reviewer.review_sweep_pending", ignore_result=True)
def review_sweep_pending() -> int:
    """Hand KPRs still PENDING after MEMORYPR_REVIEW_SWEEP_AFTER_SECONDS (default 60) to review again."""
    after = timedelta(seconds=float(conf("MEMORYPR_REVIEW_SWEEP_AFTER_SECONDS")))
    pull_ids = pull_ids_pending(older_than=after, limit=500)
    for pull_id in pull_ids:
        review_pull.delay(pull_id)
    if pull_ids:
        logger.warning("re-enqueued the review of %d KPR(s) pending for over %s", len(pull_ids), after)
    return len(pull_ids)
