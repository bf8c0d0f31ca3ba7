"""Writes of working memory: appending a turn, and the transcript retention purge.

A turn is conversation data, not memory state: it is kept append-only in the database
(trigger) rather than audited turn by turn. The purge, which does remove data, is audited.
"""

from __future__ import annotations

import logging
from collections import Counter
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from memorypr.agents.models import Agent, Namespace
from memorypr.audit.services import audit_record
from memorypr.working_memory.conf import transcript_retention_days
from memorypr.working_memory.models import SessionTurn
from memorypr.working_memory.stores import Turn, working_memory_store

logger = logging.getLogger(__name__)


def turn_append(
    *, namespace: Namespace, session_id: str, role: str, content: str, agent: Agent | None
) -> SessionTurn:
    """Store the turn durably, then (after commit) put it in tier-1 working memory.

    The insert is one statement, so it commits by itself: outside a caller's transaction no
    BEGIN and COMMIT are sent (two round trips of every turn), and the turn reaches working
    memory right after; inside one, after that transaction commits.
    """
    row = SessionTurn.objects.create(
        namespace=namespace, session_id=session_id, role=role, content=content, agent=agent
    )
    turn = Turn.of(row)
    transaction.on_commit(lambda: _remember(namespace_id=namespace.pk, session_id=session_id, turn=turn))
    return row


def _remember(*, namespace_id: int, session_id: str, turn: Turn) -> None:
    store = working_memory_store()
    try:
        store.remember(namespace_id=namespace_id, session_id=session_id, turn=turn)
    except Exception:  # the transcript has the turn; tier 1 is a cache of it
        logger.warning("working memory store %s could not take a turn", store.name, exc_info=True)


def transcript_purge(*, now: datetime | None = None, limit: int = 5000) -> int:
    """Delete turns older than the retention (default 90 days), a bounded batch per run, audited."""
    cutoff = (now or timezone.now()) - timedelta(days=transcript_retention_days())
    ids = list(
        SessionTurn.objects.filter(created_at__lt=cutoff).order_by("id").values_list("id", flat=True)[:limit]
    )
    if not ids:
        return 0
    with transaction.atomic():
        per_namespace = Counter(
            SessionTurn.objects.filter(id__in=ids).values_list("namespace__name", flat=True)
        )
        pairs = set(SessionTurn.objects.filter(id__in=ids).values_list("namespace__name", "session_id"))
        sessions = Counter(namespace for namespace, _ in pairs)
        with connection.cursor() as cursor:
            # The append-only trigger lets a DELETE through only inside this purge.
            cursor.execute("SELECT set_config('memorypr.transcript_purge', 'on', true)")
        SessionTurn.objects.filter(id__in=ids).delete()
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('memorypr.transcript_purge', 'off', true)")
        for namespace, turns in sorted(per_namespace.items()):
            audit_record(
                event_type="transcripts.purged",
                actor="system:transcript_purge",
                namespace=namespace,
                payload={
                    "turns": turns,
                    "sessions": sessions[namespace],
                    "before": cutoff.isoformat(),
                    "retentionDays": transcript_retention_days(),
                },
            )
    return len(ids)
