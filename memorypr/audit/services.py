from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from memorypr.audit.models import AuditEvent
from memorypr.common.canonical import canonical_json, json_roundtrip
from memorypr.common.locks import lock_audit_chain

GENESIS_HASH = "0" * 64


def audit_hash(*, prev_hash: str, fields: dict[str, Any]) -> str:
    return hashlib.sha256((prev_hash + canonical_json(fields)).encode()).hexdigest()


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
    the last lock any transaction takes (see memorypr.common.locks).
    """
    with transaction.atomic():
        lock_audit_chain()
        head = _audit_chain_tip()
        sequence, prev_hash = (head[0] + 1, head[1]) if head else (1, GENESIS_HASH)
        event = AuditEvent(
            sequence=sequence,
            created_at=timezone.now(),
            namespace=namespace,
            actor=actor,
            event_type=event_type,
            pull_id=uuid.UUID(str(pull_id)) if pull_id else None,
            subject=subject,
            payload=json_roundtrip(payload or {}),
            prev_hash=prev_hash,
        )
        event.hash = audit_hash(prev_hash=prev_hash, fields=event.canonical_fields())
        event.pk = _audit_chain_append(event)
        event._state.adding = False
        return event


# The chain spans namespaces, and the web tier's role sees only its own (row-level security):
# the head is read, and the event appended, by functions that run as the tables' owner
# (memorypr/common/migrations/0003_row_level_security.py). They reveal only the head's hash.
def _audit_chain_tip() -> tuple[int, str] | None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT sequence, hash FROM audit_chain_tip()")
        row = cursor.fetchone()
    return (int(row[0]), str(row[1])) if row else None


def _audit_chain_append(event: AuditEvent) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT audit_chain_append(%s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s, %s)",
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
            ],
        )
        return int(cursor.fetchone()[0])
