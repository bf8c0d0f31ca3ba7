from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task

from memorypr.common.tasks import RETRY_WHILE_DATABASE_RESTARTS
from memorypr.facts.conf import conf
from memorypr.facts.services import merge_lanes, pull_merge_drain
from memorypr.pulls.selectors import pull_ids_awaiting_merge

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, ignore_result=True, **RETRY_WHILE_DATABASE_RESTARTS)
def merge_pull(pull_id: str) -> None:
    """Merge an APPROVED KPR, with the others waiting, in approval order (one embedding batch).

    Idempotent: merging a merged KPR is a no-op.
    """
    pull_merge_drain(pull_id=pull_id)


@shared_task(name="facts.merge_sweep_approved", acks_late=True, ignore_result=True)
def merge_sweep_approved() -> int:
    """Hand APPROVED but unmerged KPRs to the merge again (broker down at approval, worker lost):
    one task per merge lane, for the last of them approved, which merges its lane up to it."""
    after = timedelta(seconds=float(conf("MEMORYPR_MERGE_SWEEP_AFTER_SECONDS")))
    pull_ids = pull_ids_awaiting_merge(older_than=after, lanes=merge_lanes())
    for pull_id in pull_ids:
        merge_pull.delay(pull_id)
    if pull_ids:
        logger.warning(
            "re-enqueued the merge of %d lane(s) holding approved KPRs unmerged for over %s",
            len(pull_ids),
            after,
        )
    return len(pull_ids)
