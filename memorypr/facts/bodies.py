"""Response bodies of fact versions, written out for the list an agent reads before each proposal.

`FactOutSerializer` describes the same format for the OpenAPI schema; tests/facts/test_bodies.py
holds the two equal.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memorypr.common.wire import current_zone, datetime_text, float_or_none, uuid_text
from memorypr.facts.selectors import fact_status_at


def fact_body(fact: Any, *, as_of: datetime | None) -> dict[str, Any]:
    """What `FactOutSerializer` writes; `status` is the status at `as_of` when given.

    `fact` is a row of `fact_list_rows` (or a `fact_list` version: it has the same names).
    """
    zone = current_zone()
    return {
        "id": int(fact.id),
        "namespace": fact.namespace_name,
        "subject": fact.subject,
        "category": fact.category,
        "key": fact.key,
        "value": fact.value,
        "version": int(fact.version),
        "status": fact_status_at(fact=fact, at=as_of),
        "confidence": float(fact.confidence),
        "importance": float_or_none(fact.importance),
        "validFrom": datetime_text(fact.valid_from, zone=zone),
        "validTo": datetime_text(fact.valid_to, zone=zone),
        "accessCount": int(fact.access_count),
        "lastAccessedAt": datetime_text(fact.last_accessed_at, zone=zone),
        "createdAt": datetime_text(fact.created_at, zone=zone),
        "retiredAt": datetime_text(fact.retired_at, zone=zone),
        "pull": uuid_text(fact.pull_id),
        "retiredByPull": uuid_text(fact.retired_by_pull_id),
        "action": fact.operation_action,
    }
