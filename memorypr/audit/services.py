from __future__ import annotations

import hashlib
import json
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from memorypr.audit.models import AuditEvent
from memorypr.common.canonical import canonical_json, json_roundtrip
from memorypr.common.locks import lock_audit_chain

GENESIS_HASH = "0" * 64


def audit_hash(*, prev_hash: str, fields: dict[str, Any]) -> str:
    return hashlib.sha256((prev_hash + canonical_json(fields)).encode()).hexdigest()


_batches = threading.local()


def audit_record(
    *,
    event_type: str,
    actor: str,
    namespace: str = "",
    pull_id: uuid.UUID | str | None = None,
    subject: str = "",
    payload: dict[str, Any] | None = None,
) -> AuditEvent:
    """Append one event to the chain inside the caller's transaction.

    The chain lock is held until the caller commits, so the chain has no forks; it is
    the last lock any transaction takes (see memorypr.common.locks). Inside `audit_batch()`
    the event is appended when the batch ends; its sequence and hash are set then.
    """
    event = AuditEvent(
        namespace=namespace,
        actor=actor,
        event_type=event_type,
        pull_id=uuid.UUID(str(pull_id)) if pull_id else None,
        subject=subject,
        payload=json_roundtrip(payload or {}),
    )
    pending: list[AuditEvent] | None = getattr(_batches, "pending", None)
    if pending is not None:
        pending.append(event)
    else:
        _audit_chain_extend([event])
    return event


@contextmanager
def audit_batch() -> Iterator[None]:
    """The events recorded inside are appended together when the block ends, in order.

    For a transaction that records several events: the chain lock (which every audited write
    of every namespace waits for) is taken once, at the end, for three round trips instead of
    three per event. Use it inside the transaction; a block that raises appends nothing.
    """
    if getattr(_batches, "pending", None) is not None:  # an enclosing batch appends these too
        yield
        return
    _batches.pending = []
    try:
        yield
        events = _batches.pending
    finally:
        _batches.pending = None
    if events:
        _audit_chain_extend(events)


def _audit_chain_extend(events: list[AuditEvent]) -> None:
    # No savepoint inside the caller's transaction: a change whose audit failed must not commit
    # anyway, and releasing a savepoint would be one more round trip under the chain lock.
    with transaction.atomic(savepoint=False):
        head = lock_audit_chain()
        sequence, prev_hash = (head[0] + 1, head[1]) if head else (1, GENESIS_HASH)
        now = timezone.now()  # under the lock: the chain's times never go backwards
        for event in events:
            event.sequence, event.prev_hash, event.created_at = sequence, prev_hash, now
            event.hash = audit_hash(prev_hash=prev_hash, fields=event.canonical_fields())
            sequence, prev_hash = sequence + 1, event.hash
        for event, pk in zip(events, _audit_chain_append(events), strict=True):
            event.pk = pk
            event._state.adding = False


# The chain spans namespaces, and the web tier's role sees only its own (row-level security):
# the head is read (under the chain lock), and the event appended, by functions that run as the
# tables' owner (memorypr/common/migrations/0003_row_level_security.py, audit/0004). They reveal
# only the head's hash.
def _audit_chain_append(events: list[AuditEvent]) -> list[int]:
    """Append the events (their hashes set) in one round trip; their ids, in order."""
    rows = [
        [
            event.sequence,
            event.created_at,
            event.namespace,
            event.actor,
            event.event_type,
            event.pull_id,
            event.subject,
            json.dumps(event.payload),
            event.prev_hash,
            event.hash,
        ]
        for event in events
    ]
    ids = []
    # psycopg sends the statements in one pipeline; Django's wrapper would not return their rows.
    with connection.cursor() as wrapper, connection.wrap_database_errors:
        cursor = wrapper.cursor
        cursor.executemany(
            "SELECT audit_chain_append(%s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s, %s)", rows, returning=True
        )
        while True:
            ids.append(int(cursor.fetchone()[0]))
            if not cursor.nextset():
                break
    return ids
