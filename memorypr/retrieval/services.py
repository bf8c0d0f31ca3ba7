"""Writes of the retrieval path: access counts (the input of recency and forgetting).

Accesses are counters, not memory content: they are not audited one by one (that would
put a hash-chain append on every read), they commit without waiting for the WAL flush (a
crash may lose the last milliseconds of counts, never a fact), and a row held by a merge
at that instant is skipped rather than waited for, so a read never queues behind a write.
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.db import DatabaseError, connection, transaction
from django.utils import timezone

logger = logging.getLogger(__name__)


def fact_accesses_record(*, fact_ids: list[int], at: datetime | None = None) -> int:
    """One UPDATE for every fact a retrieval returned: access_count + 1, last_accessed_at = at.

    Returns how many rows were bumped. Never raises: access tracking must not fail a read.
    """
    ids = sorted(set(fact_ids))
    if not ids:
        return 0
    moment = at or timezone.now()
    sql = """
        UPDATE facts_factversion f
        SET access_count = f.access_count + 1,
            last_accessed_at = GREATEST(COALESCE(f.last_accessed_at, %(at)s), %(at)s)
        WHERE f.id IN (
            SELECT id FROM facts_factversion WHERE id = ANY(%(ids)s) ORDER BY id FOR UPDATE SKIP LOCKED
        )
    """
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            # A lost count costs nothing, and a flush per retrieval makes every audited write's
            # commit queue behind it: this transaction alone does not wait for the disk.
            cursor.execute("SET LOCAL synchronous_commit = off")
            cursor.execute(sql, {"ids": ids, "at": moment})
            return int(cursor.rowcount)
    except DatabaseError:
        logger.warning("access tracking skipped for facts %s", ids, exc_info=True)
        return 0
