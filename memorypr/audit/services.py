from __future__ import annotations

import hashlib
import json
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from django.db import connection, transaction

from memorypr.audit.models import AuditEvent
from memorypr.common.canonical import canonical_json, json_roundtrip
from memorypr.common.locks import lock_audit_chain_extend

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
    the last lock any transaction takes (see memorypr.common.locks). The lock, the head and
    the append are one round trip, whose answer sets the event's sequence, time and hash.
    Inside `audit_batch()` the event is appended when the batch ends; they are set then.
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
    of every namespace waits for) is taken once, at the end, in one round trip for them all. Use it inside the transaction; a block that raises appends nothing.
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
        unflushed = audit_commit_unflushed_supported()
        for event, row in zip(events, _audit_chain_append(events, commit_unflushed=unflushed), strict=True):
            event.pk, event.sequence, event.created_at, event.prev_hash, event.hash = row
            event._state.adding = False
        # Right after the commit, before the caller answers anyone (a request answers once its
        # commit callbacks have run; a task is acknowledged once they have). Once per
        # transaction: one wait covers every event it appended. Inside `audit_flushed_once`
        # the commit only notes that a wait is owed, and the block's end waits once for all.
        wait = audit_commit_flushed if getattr(_flushes, "owed", None) is None else _audit_flush_owe
        waiting = any(
            entry[1] in (audit_commit_flushed, _audit_flush_owe) for entry in connection.run_on_commit
        )
        if unflushed and not waiting:
            transaction.on_commit(wait)


_flushes = threading.local()


@contextmanager
def audit_flushed_once() -> Iterator[None]:
    """The audited transactions committed inside wait for their WAL flush once, when the block ends.

    For a caller that answers no one, and is acknowledged by no one, before the block ends: a
    merge task's batch of KPRs, each merged in its own transaction. WAL is flushed in order, so
    one wait after the last commit covers every commit before it; until then a crash can only
    lose a tail of those commits, whose KPRs are then approved and unmerged again, and merged
    again by the sweep. A block that raises waits for nothing.
    """
    if getattr(_flushes, "owed", None) is not None:  # an enclosing block waits for these too
        yield
        return
    _flushes.owed = False
    try:
        yield
        owed = _flushes.owed
    finally:
        _flushes.owed = None
    if owed:
        audit_commit_flushed()


def _audit_flush_owe() -> None:
    _flushes.owed = True


# PostgreSQL 17 added the flush argument that `audit_commit_flushed` waits with.
FLUSH_WAIT_VERSION = 170000


def audit_commit_unflushed_supported() -> bool:
    """Whether an audited commit may release the chain lock before its flush (and be waited for after)."""
    connection.ensure_connection()
    return int(getattr(connection, "pg_version", 0)) >= FLUSH_WAIT_VERSION


def audit_commit_flushed() -> None:
    """Wait until the WAL holding the last commit is on disk.

    An empty non-transactional message is written after that commit and flushed with all
    that precedes it; concurrent waiters share one flush.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_logical_emit_message(false, 'memorypr.audit', ''::text, true)")


# The chain spans namespaces, and the web tier's role sees only its own (row-level security):
# the lock, the head and the append are one function that runs as the tables' owner
# (memorypr/audit/migrations/0005_chain_extend.py). It reveals only the hashes it made.
def _hashed_pieces(event: AuditEvent) -> tuple[str, str, str]:
    """The event's canonical JSON (what `audit_hash` hashes) around its time and sequence.

    The lock holder alone knows those two, so the server joins the pieces: the text before
    the time, between the time and the sequence, and after the sequence.
    """
    marker = uuid.uuid4().hex
    time_marker, sequence_marker = f"time-{marker}", f"sequence-{marker}"
    text = canonical_json(event.canonical_fields_with(sequence=sequence_marker, created_at=time_marker))
    # Sorted keys: "createdAt" comes before "sequence". The time stays a JSON string, the
    # sequence becomes a number.
    before_time, rest = text.split(f'"{time_marker}"')
    between, after_sequence = rest.split(f'"{sequence_marker}"')
    return before_time + '"', '"' + between, after_sequence


def _audit_chain_append(
    events: list[AuditEvent], *, commit_unflushed: bool = False
) -> list[tuple[int, int, datetime, str, str]]:
    """Lock the chain, append the events and hash them, in one round trip: (id, sequence, time,
    previous hash, hash) of each, in order."""
    pieces = [_hashed_pieces(event) for event in events]
    rows = lock_audit_chain_extend(
        columns=[
            [event.namespace for event in events],
            [event.actor for event in events],
            [event.event_type for event in events],
            [str(event.pull_id) if event.pull_id else None for event in events],
            [event.subject for event in events],
            [json.dumps(event.payload) for event in events],
            [piece[0] for piece in pieces],
            [piece[1] for piece in pieces],
            [piece[2] for piece in pieces],
        ],
        commit_unflushed=commit_unflushed,
    )
    return [(int(i), int(seq), at, str(prev), str(digest)) for i, seq, at, prev, digest in rows]
