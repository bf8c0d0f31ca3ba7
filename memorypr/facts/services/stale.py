"""Stale propagation: when a fact stops being active, what was derived from it goes stale.

One recursive CTE walks DERIVED_FROM edges backwards from the retired versions, up to
MEMORYPR_STALE_MAX_DEPTH hops (default 3), and marks every still-active dependent `stale`
in the same statement (`fact_stale_mark`); each change gets its own audit event
(`fact_stale_audit`). The caller holds the subject lock and runs this inside its
transaction. The update row-locks the dependents, so it comes before the transaction's
first audit event: the audit chain lock is the last lock taken (memorypr.common.locks).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import connection

from memorypr.audit.services import audit_record
from memorypr.facts.conf import conf

_PROPAGATE = """
WITH RECURSIVE dependents(id, root, depth) AS (
    SELECT e.source_id, e.target_id, 1
      FROM facts_factedge e
     WHERE e.edge_type = 'DERIVED_FROM' AND e.target_id = ANY(%(retired)s)
    UNION
    SELECT e.source_id, d.root, d.depth + 1
      FROM facts_factedge e
      JOIN dependents d ON e.target_id = d.id
     WHERE e.edge_type = 'DERIVED_FROM' AND d.depth < %(max_depth)s
), nearest AS (
    SELECT DISTINCT ON (id) id, root, depth FROM dependents ORDER BY id, depth, root
)
UPDATE facts_factversion AS f
   SET status = 'stale', retired_at = %(now)s, retired_by_pull_id = %(pull)s, updated_at = %(now)s
  FROM nearest AS n, facts_factversion AS r
 WHERE f.id = n.id AND r.id = n.root AND f.status = 'active'
RETURNING f.id, f.category, f.key, f.version, n.depth, r.id, r.category, r.key, r.version
"""


@dataclass(frozen=True)
class StaleChange:
    fact_id: int
    category: str
    key: str
    version: int
    depth: int
    # the retired version this one (transitively) rested on
    because_id: int
    because_category: str
    because_key: str
    because_version: int


def stale_max_depth() -> int:
    return int(conf("MEMORYPR_STALE_MAX_DEPTH"))


def fact_stale_propagate(
    *,
    retired_ids: Sequence[int],
    now: datetime,
    actor: str,
    namespace: str,
    subject: str,
    pull_id: uuid.UUID | str | None = None,
    max_depth: int | None = None,
) -> list[StaleChange]:
    """Mark active versions DERIVED_FROM the retired ones stale, and audit each change.

    For a caller that has written no audit event yet in its transaction; the merge marks
    first and audits later (fact_stale_mark, then fact_stale_audit).
    """
    changes = fact_stale_mark(retired_ids=retired_ids, now=now, pull_id=pull_id, max_depth=max_depth)
    fact_stale_audit(changes=changes, actor=actor, namespace=namespace, subject=subject, pull_id=pull_id)
    return changes


def fact_stale_mark(
    *,
    retired_ids: Sequence[int],
    now: datetime,
    pull_id: uuid.UUID | str | None = None,
    max_depth: int | None = None,
) -> list[StaleChange]:
    """Mark active versions DERIVED_FROM the retired ones (transitively, depth-limited) stale."""
    if not retired_ids:
        return []
    depth = stale_max_depth() if max_depth is None else max_depth
    if depth < 1:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            _PROPAGATE,
            {
                "retired": list(retired_ids),
                "max_depth": depth,
                "now": now,
                "pull": str(pull_id) if pull_id else None,
            },
        )
        return sorted((StaleChange(*row) for row in cursor.fetchall()), key=lambda c: (c.depth, c.fact_id))


def fact_stale_audit(
    *,
    changes: Sequence[StaleChange],
    actor: str,
    namespace: str,
    subject: str,
    pull_id: uuid.UUID | str | None = None,
) -> None:
    """One `fact.staled` audit event per change, nearest first."""
    for change in changes:
        audit_record(
            event_type="fact.staled",
            actor=actor,
            namespace=namespace,
            pull_id=pull_id,
            subject=subject,
            payload={
                "factId": change.fact_id,
                "category": change.category,
                "key": change.key,
                "version": change.version,
                "from": "active",
                "to": "stale",
                "depth": change.depth,
                "because": {
                    "factId": change.because_id,
                    "category": change.because_category,
                    "key": change.because_key,
                    "version": change.because_version,
                },
            },
        )
