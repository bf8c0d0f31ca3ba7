from __future__ import annotations

import logging

logger = logging.getLogger(__name__)


def pull_merge(*, pull_id: str) -> None:
    """Merge an APPROVED KPR into the fact store (placeholder until the merge lands)."""
    logger.info("merge of KPR %s deferred: the fact store merge is not wired yet", pull_id)
