"""What the workflow announces: a KPR was submitted, a KPR was approved.

`pulls` owns the workflow's state changes but not its stages: the review (`reviewer`) and
the merge (`memorypr.facts`) subscribe to these signals in their AppConfig.ready(), so the
core imports neither. Each signal is sent once, after the commit of the one service that
writes that state, with the KPR's id as `pull_id` (a string).
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.dispatch import Signal

from memorypr.pulls.models import KnowledgePullRequest

logger = logging.getLogger(__name__)

pull_submitted = Signal()
pull_approved = Signal()


def pull_announce(*, signal: Signal, pull_id: str) -> None:
    """Send `signal` to every receiver; a receiver that fails is logged, not raised.

    The state is committed already; a lost hand-off (e.g. the broker is down) is picked up
    by the periodic sweeps (reviewer.review_sweep_pending, facts.merge_sweep_approved).
    """
    for receiver, result in signal.send_robust(sender=KnowledgePullRequest, pull_id=pull_id):
        if isinstance(result, Exception):
            logger.error(
                "hand-off of KPR %s to %s failed; the periodic sweep retries it",
                pull_id,
                getattr(receiver, "__qualname__", receiver),
                exc_info=(type(result), result, result.__traceback__),
            )


def pull_announce_on_commit(*, signal: Signal, pull_id: str) -> None:
    """Announce after the current transaction commits (nothing, if it rolls back)."""
    transaction.on_commit(lambda: pull_announce(signal=signal, pull_id=pull_id))
