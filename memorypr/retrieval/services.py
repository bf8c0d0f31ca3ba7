"""Writes of the retrieval path: access counts (the input of recency and forgetting).

Accesses are counters, not memory content: they are not audited one by one (that would
put a hash-chain append on every read), they commit without waiting for the WAL flush (a
crash may lose the last milliseconds of counts, never a fact), and a row held by a merge
at that instant is skipped rather than waited for, so a read never queues behind a write.
"""

from __future__ import annotations

import logging
from contextlib import nullcontext
from datetime import datetime

from django.db import DatabaseError, connection, transaction
from django.utils import timezone

logger = logging.getLogger(__name__)


# The statement's own transaction commits without waiting for the WAL flush (transaction-local).
_QUIET = "WITH quiet AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true))"


def fact_accesses_record(*, fact_ids: list[int], at: datetime | None = None) -> int:
    """One UPDATE for every fact a retrieval returned: access_count + 1, last_accessed_at = at.

    Returns how many rows were bumped. Never raises: access tracking must not fail a read.
    """
    ids = sorted(set(fact_ids))
    if not ids:
        return 0
    moment = at or timezone.now()
    # One statement. On its own (autocommit) it is its own transaction, and that transaction
    # alone does not wait for the disk: a lost count costs nothing, and a flush per retrieval
    # makes every audited write's commit queue behind it. Inside a caller's transaction the
    # setting would outlive the statement, so there the caller's commit decides.
    quiet = not connection.in_atomic_block
    sql = f"""
        {_QUIET if quiet else ""}
        UPDATE facts_factversion f
        SET access_count = f.access_count + 1,
            last_accessed_at = GREATEST(COALESCE(f.last_accessed_at, %(at)s), %(at)s)
        WHERE f.id IN (
            SELECT id FROM facts_factversion WHERE id = ANY(%(ids)s) ORDER BY id FOR UPDATE SKIP LOCKED
        ) {"AND EXISTS (SELECT FROM quiet)" if quiet else ""}
    """
    try:
        # Inside a caller's transaction, a savepoint: a failure here must not spoil the caller's work.
        with nullcontext() if quiet else transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, {"ids": ids, "at": moment})
            return int(cursor.rowcount)
    except DatabaseError:
        logger.warning("access tracking skipped for facts %s", ids, exc_info=True)
        return 0
