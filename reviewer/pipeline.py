from __future__ import annotations

import logging

logger = logging.getLogger(__name__)


def pull_review(*, pull_id: str) -> None:
    """Placeholder until the rule checks land: a KPR stays PENDING, nothing is approved."""
    logger.info("review of KPR %s deferred: no review pipeline configured", pull_id)
